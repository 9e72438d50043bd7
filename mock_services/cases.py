"""CaseService: the support cases of an order: escalations, declines, failed verifications.

A case records a decision that is not a change to the order itself: a refund above the
agent's limit handed to a supervisor (`escalation`, with the amount), a request the
policy refuses (`declined`), or a requester who could not be verified
(`verification_failed`). An episode opens cases; the seed data holds none.
"""

from __future__ import annotations

from typing import Annotated, Any

from ..read_only_json import thaw
from .base import _Service
from .billing import to_cents
from .orders import MAX_REFUND
from .paths import CASE, CASES_BY_ORDER, CASES_OPEN
from .registry import OneOf, Range, ServiceError, Wording, endpoint

CASE_CATEGORIES = ("escalation", "declined", "verification_failed")


class CaseService(_Service):
    """Support cases on orders: escalation, declined, verification_failed."""

    def _of_order(self, order_id: str) -> list[dict[str, Any]]:
        return [thaw(case) for case in self.state.created("cases") if case["order_id"] == order_id]

    @endpoint(CASE, CASES_BY_ORDER, "GET", tool="list_order_cases")
    def by_order(self, order_id: Annotated[str, "Order ID whose cases to list"]) -> dict[str, Any]:
        """The cases opened on an order."""
        order = self._require("orders", order_id, "order")
        return {"order_id": order["order_id"], "cases": self._of_order(order["order_id"])}

    @endpoint(CASE, CASES_OPEN, "POST", tool="open_case")
    def open(
        self,
        order_id: Annotated[str, "Order ID the case is about"],
        category: Annotated[
            str,
            "escalation (a refund above your limit, with its amount), declined (a request "
            "the policy refuses) or verification_failed (the requester could not be verified)",
            OneOf(CASE_CATEGORIES),
        ],
        summary: Annotated[str, "What was asked and why this is the decision", Wording()],
        amount: Annotated[
            float | None,
            "USD, whole cents: the amount at stake (required for an escalation)",
            Range(0.01, MAX_REFUND),
        ] = None,
    ) -> dict[str, Any]:
        """Open a case on an order: escalate a refund, record a decline or a failed verification."""
        order = self._require("orders", order_id, "order")
        wanted = category.strip().lower()
        if wanted not in CASE_CATEGORIES:
            raise ServiceError(
                400, f"unknown category {category!r}; valid: {', '.join(CASE_CATEGORIES)}"
            )
        if amount is not None and abs(amount * 100 - round(amount * 100)) > 1e-6:
            raise ServiceError(400, f"amount must be in whole cents, got {amount}")
        if wanted == "escalation" and amount is None:
            raise ServiceError(400, "an escalation needs the amount at stake")
        case = {
            "case_id": f"CASE-{order['order_id']}-{len(self._of_order(order['order_id'])) + 1}",
            "order_id": order["order_id"],
            "user_id": order["user_id"],
            "category": wanted,
            "amount": None if amount is None else to_cents(amount) / 100,
            "summary": summary,
            "status": "open",
        }
        self.state.insert("cases", case["case_id"], case)
        return {"case": thaw(case)}
