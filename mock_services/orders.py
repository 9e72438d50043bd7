"""OrderService: purchase orders; line items reference InventoryService by `sku`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from ..read_only_json import thaw
from .base import _Service
from .billing import to_cents
from .paths import ORDER, ORDERS_BY_USER, ORDERS_LOOKUP, ORDERS_PROCESS_REFUND, ORDERS_UPDATE_STATUS
from .registry import OneOf, Range, ServiceError, Wording, endpoint
from .world import SETTINGS

STATUS_CHOICES = ", ".join(SETTINGS["status_transitions"])
MAX_REFUND = 1_000_000
"""Largest refund amount taken at all (USD); a real one is bounded by what was charged."""


class OrderService(_Service):
    """Purchase orders; line items reference InventoryService by `sku`."""

    def _detail(self, order: Mapping[str, Any]) -> dict[str, Any]:
        coupons = self.state.world.tables["coupons"]
        coupon = coupons.get(order["coupon_code"]) if order["coupon_code"] else None
        refunded = sum(to_cents(refund["amount"]) for refund in order["refunds"])
        return {
            "order_id": order["order_id"],
            "user_id": order["user_id"],
            "status": order["status"],
            "placed_at": order["placed_at"],
            "items": [
                {
                    "sku": item["sku"],
                    "name": self.state.read("products", item["sku"])["name"],
                    "quantity": item["quantity"],
                    "unit_price": item["unit_price"],
                }
                for item in order["items"]
            ],
            "coupon_applied": thaw(coupon),
            "total_charged": order["total_charged"],
            "return_eligible": order["return_eligible"],
            "refunds": thaw(order["refunds"]),
            "refunded_total": refunded / 100,
        }

    @endpoint(ORDER, ORDERS_LOOKUP, "GET", tool="lookup_order")
    def lookup(self, order_id: Annotated[str, "Order ID, e.g. ORD-1005"]) -> dict[str, Any]:
        """Look up a single order by ID: status, line items, coupon, charge and refunds."""
        return self._detail(self._require("orders", order_id, "order"))

    @endpoint(ORDER, ORDERS_BY_USER, "GET", tool="list_user_orders")
    def by_user(self, user_id: Annotated[str, "User ID whose orders to list"]) -> dict[str, Any]:
        """All orders placed by a user, as summaries (details via /orders/lookup)."""
        user = self._require("users", user_id, "user")
        orders = [
            self.state.read("orders", order_id)
            for order_id in self.state.world.order_ids_by_user[user["user_id"]]
        ]
        return {
            "user_id": user["user_id"],
            "orders": [
                {
                    "order_id": order["order_id"],
                    "status": order["status"],
                    "placed_at": order["placed_at"],
                    "total_charged": order["total_charged"],
                    "item_count": sum(item["quantity"] for item in order["items"]),
                }
                for order in orders
            ],
            "total_orders": len(orders),
        }

    @endpoint(ORDER, ORDERS_UPDATE_STATUS, "POST", tool="update_order_status")
    def update_status(
        self,
        order_id: Annotated[str, "Order ID to change"],
        new_status: Annotated[
            str,
            "New status: one of " + STATUS_CHOICES,
            OneOf(tuple(SETTINGS["status_transitions"])),
        ],
    ) -> dict[str, Any]:
        """Change order status (only along allowed transitions, e.g. delivered -> returned)."""
        order = self._require("orders", order_id, "order")
        wanted = new_status.strip().lower()
        transitions = SETTINGS["status_transitions"]
        if wanted not in transitions:
            raise ServiceError(400, f"unknown status {new_status!r}; valid: {STATUS_CHOICES}")
        current = order["status"]
        if wanted not in transitions[current]:
            allowed = ", ".join(transitions[current]) or "none"
            raise ServiceError(
                409,
                f"cannot change {order['order_id']} from '{current}' to "
                f"'{wanted}'; allowed from '{current}': {allowed}",
            )
        record = self.state.write("orders", order["order_id"])
        record["status"] = wanted
        return {"order_id": order["order_id"], "previous_status": current, "status": wanted}

    @endpoint(ORDER, ORDERS_PROCESS_REFUND, "POST", tool="process_refund")
    def process_refund(
        self,
        order_id: Annotated[str, "Order ID to refund"],
        amount: Annotated[
            float,
            "Amount in USD: whole cents, at least 0.01 and at most what remains refundable",
            Range(0.01, MAX_REFUND),
        ],
        reason: Annotated[str, "Why the refund is issued (kept on the order)", Wording()],
    ) -> dict[str, Any]:
        """Issue a refund; several are allowed while their total stays within the charge."""
        order = self._require("orders", order_id, "order")
        if abs(amount * 100 - round(amount * 100)) > 1e-6:
            raise ServiceError(400, f"amount must be in whole cents, got {amount}")
        refunded = sum(to_cents(refund["amount"]) for refund in order["refunds"])
        remaining = to_cents(order["total_charged"]) - refunded
        if to_cents(amount) > remaining:
            raise ServiceError(
                400,
                f"refund of {amount:.2f} exceeds the refundable balance of "
                f"{remaining / 100:.2f} on {order['order_id']}",
            )
        record = self.state.write("orders", order["order_id"])
        refund = {
            "refund_id": f"RF-{order['order_id']}-{len(record['refunds']) + 1}",
            "amount": to_cents(amount) / 100,
            "reason": reason,
        }
        record["refunds"].append(refund)
        return {
            "refund": dict(refund),
            "order_id": order["order_id"],
            "total_charged": order["total_charged"],
            "refunded_total": (refunded + to_cents(amount)) / 100,
        }
