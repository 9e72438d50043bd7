"""Worlds for the request families: all six services, and what a family plants in one.

A `RequestDraft` is a `WorldDraft` (world.py) whose world runs the shipment, payment
and case services too: when it is finished, every order gets its original shipment
(its status follows the order's: label_created before dispatch, in_transit once
shipped, delivered) and its card capture, and a family's hints change the planted
order's (a look-alike item packed, a capture taken twice).

A family builder (families.py) returns a `RequestPlan`: who asks, about which
order, under which policy, and the resolution that policy implies (a refund, a
cancellation, a reship, a new address, a case, a reversal). `expectations` turns the
resolution into the intended writes once the records have their ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from ....mock_services import World, dollars, to_cents
from ....mock_services.paths import ALL_SERVICES
from ..grading.effects import fold_text
from ..policy import Policy
from ..spec import Expect
from ..world import TODAY, WORDS, WorldDraft

SHIPMENT_STATUS = {
    "pending": "label_created",
    "processing": "label_created",
    "shipped": "in_transit",
    "delivered": "delivered",
    "returned": "delivered",
    "cancelled": "cancelled",
}
CARRIERS = ("UPS", "FedEx", "USPS", "DHL")


class RequestDraft(WorldDraft):
    """A draft whose world runs all six services: shipments and captures for every order."""

    def __init__(self, rng: Any) -> None:
        super().__init__(rng)
        self._packed: dict[int, list[dict[str, Any]]] = {}
        self._twice: set[int] = set()
        self.shipments: dict[int, dict[str, Any]] = {}
        """Each order's original shipment, by `id(order)` (after `finish`)."""
        self.payments: dict[int, list[dict[str, Any]]] = {}
        """Each order's captures, oldest first, by `id(order)` (after `finish`)."""

    def pack(self, order: Mapping[str, Any], items: list[dict[str, Any]]) -> None:
        """The order's shipment holds `items` instead of the order's lines (a packing error)."""
        self._packed[id(order)] = items

    def capture_twice(self, order: Mapping[str, Any]) -> None:
        """The order's charge is captured a second time, seconds later (a retried payment)."""
        self._twice.add(id(order))

    def _shipment(self, order: dict[str, Any], user: Mapping[str, Any]) -> dict[str, Any]:
        status = SHIPMENT_STATUS[order["status"]]
        placed = date.fromisoformat(order["placed_at"])
        dispatched = min(TODAY, placed + timedelta(days=self.rng.randint(1, 2)))
        items = [{"sku": i["sku"], "quantity": i["quantity"]} for i in order["items"]]
        return {
            "shipment_id": f"SHP-{order['order_id'].split('-', 1)[1]}-1",
            "order_id": order["order_id"],
            "kind": "original",
            "status": status,
            "carrier": self.rng.choice(CARRIERS),
            "address": user["address"],
            "items": self._packed.get(id(order), items),
            "dispatched_at": dispatched.isoformat()
            if status in ("in_transit", "delivered")
            else None,
        }

    def _captures(self, order: dict[str, Any], card: str) -> list[dict[str, Any]]:
        second = self.rng.randint(0, 86_000 - 200)
        times = [second] + ([second + self.rng.randint(3, 150)] if id(order) in self._twice else [])
        return [
            {
                "payment_id": self._unique(lambda: f"PAY-{self.rng.randint(10_000, 99_999)}"),
                "order_id": order["order_id"],
                "amount": order["total_charged"],
                "status": "captured",
                "captured_at": f"{order['placed_at']}T{t // 3600:02d}:{t // 60 % 60:02d}:"
                f"{t % 60:02d}Z",
                "method": card,
            }
            for t in times
        ]

    def finish(self, **extra: Any) -> World:
        orders = self.number_orders()
        users = {user["user_id"]: user for user in self.users}
        cards = {uid: f"card ending {self.rng.randint(1000, 9999)}" for uid in users}
        for order in orders:
            self.shipments[id(order)] = self._shipment(order, users[order["user_id"]])
            self.payments[id(order)] = self._captures(order, cards[order["user_id"]])
        return super().finish(
            shipments=[self.shipments[id(order)] for order in orders],
            payments=[p for order in orders for p in self.payments[id(order)]],
            services=ALL_SERVICES,
        )

    def new_address(self, avoid: str) -> str:
        """A plausible address that is not `avoid`."""
        while True:
            place = self.rng.choice(WORDS["places"])
            address = (
                f"{self.rng.randint(10, 2999)} {self.rng.choice(WORDS['streets'])}, "
                f"{place['city']}, {place['state']} {place['zip']}"
            )
            if address != avoid:
                return address


@dataclass
class RequestPlan:
    """What a family planted, and the resolution its policy implies (ids read after finish)."""

    family: str
    prompt: str
    """Which of the task's prompt templates states the request."""
    requester_email: str
    requester: Mapping[str, Any] | None
    """The requester's account (None: no account has the email)."""
    order: dict[str, Any]
    policy: Policy
    optimal_calls: int
    item: Mapping[str, Any] | None = None
    damaged: int | None = None
    address: str | None = None
    """The new delivery address the request names."""
    refund_cents: int | None = None
    cancel: bool = False
    reship: int | None = None
    """Units of `item` to send again."""
    case: tuple[str, int | None] | None = None
    """(category, amount in cents) of the one case the resolution opens."""
    reverse_duplicate: bool = False

    def prompt_values(self) -> dict[str, str]:
        values = {"requester": self.requester_email, "order_id": self.order["order_id"]}
        if self.item is not None:
            values["sku"] = self.item["sku"]
            line = next(i for i in self.order["items"] if i["sku"] == self.item["sku"])
            values["quantity"] = str(line["quantity"])
            values["unit_word"] = "unit" if line["quantity"] == 1 else "units"
        if self.damaged is not None:
            values["damaged"] = str(self.damaged)
        if self.address is not None:
            values["address"] = self.address
        return values


def expectations(plan: RequestPlan, draft: RequestDraft) -> tuple[Expect, ...]:
    """The intended writes of the plan's resolution, on the finished records."""
    order_id = plan.order["order_id"]
    found: list[Expect] = []
    if plan.cancel:
        found.append(Expect(("status", order_id), "cancelled", "order_cancelled", "status"))
    if plan.refund_cents is not None:
        found.append(
            Expect(("refund", order_id), plan.refund_cents, "refund_issued", "refunded_in_episode")
        )
    if plan.cancel:
        for item in plan.order["items"]:
            found.append(
                Expect(("stock", item["sku"]), item["quantity"], "stock_restored", "stock_restored")
            )
    if plan.reship is not None and plan.item is not None:
        sku = plan.item["sku"]
        found.append(Expect(("reship", order_id, sku), plan.reship, "reshipped", "reshipped"))
        found.append(Expect(("stock", sku), -plan.reship, "reshipped", "stock_taken"))
    if plan.address is not None and plan.case is None:
        shipment = draft.shipments[id(plan.order)]["shipment_id"]
        found.append(
            Expect(("address", shipment), fold_text(plan.address), "address_updated", "address")
        )
    if plan.case is not None:
        category, cents = plan.case
        found.append(Expect(("case", order_id, category, cents), 1, "case_opened", "case_opened"))
    if plan.reverse_duplicate:
        later = draft.payments[id(plan.order)][-1]["payment_id"]
        found.append(Expect(("reversal", later), 1, "payment_reversed", "payment_reversed"))
    return tuple(found)


def charged_cents(order: Mapping[str, Any]) -> int:
    return to_cents(order["total_charged"])


def money(cents: int) -> float:
    return dollars(cents)
