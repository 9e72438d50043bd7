"""PaymentService: the card captures behind an order, and reversing one of them.

An order's charge is captured once; a capture taken twice (a retried payment) shows
as two captures of the same amount. Reversing a capture refunds that capture alone:
the order's own refunds (OrderService) are a different record.
"""

from __future__ import annotations

from typing import Annotated, Any

from ..read_only_json import thaw
from .base import _Service
from .billing import to_cents
from .paths import PAYMENT, PAYMENTS_BY_ORDER, PAYMENTS_REFUND
from .registry import ServiceError, Wording, endpoint

CAPTURED, REVERSED = "captured", "reversed"


class PaymentService(_Service):
    """Card captures of an order; a capture can be reversed once."""

    @endpoint(PAYMENT, PAYMENTS_BY_ORDER, "GET", tool="list_order_payments")
    def by_order(
        self, order_id: Annotated[str, "Order ID whose payments to list"]
    ) -> dict[str, Any]:
        """An order's card captures (amount, time, status), oldest first."""
        order = self._require("orders", order_id, "order")
        payments = [
            self.state.read("payments", payment_id)
            for payment_id in self.state.world.payment_ids_by_order.get(order["order_id"], ())
        ]
        held = sum(to_cents(p["amount"]) for p in payments if p and p["status"] == CAPTURED)
        return {
            "order_id": order["order_id"],
            "total_charged": order["total_charged"],
            "payments": [thaw(payment) for payment in payments if payment is not None],
            "captured_total": held / 100,
        }

    @endpoint(PAYMENT, PAYMENTS_REFUND, "POST", tool="reverse_payment")
    def refund(
        self,
        payment_id: Annotated[str, "Payment ID of the capture to reverse, e.g. PAY-20417"],
        reason: Annotated[str, "Why the capture is reversed (kept on the payment)", Wording()],
    ) -> dict[str, Any]:
        """Reverse one capture in full (a duplicate charge); the order's refunds are untouched."""
        payment = self._require("payments", payment_id, "payment")
        if payment["status"] != CAPTURED:
            raise ServiceError(
                409, f"payment {payment['payment_id']} is already {payment['status']}"
            )
        record = self.state.write("payments", payment["payment_id"])
        record["status"] = REVERSED
        record["reversal_reason"] = reason
        return {"payment": thaw(record), "order_id": record["order_id"]}
