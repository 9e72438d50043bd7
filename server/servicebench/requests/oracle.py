"""The optimal policy of the request tasks: what a support lead does under the served policy.

`next_request_action(history)` reads the request (the prompt: who asks, about which
order, item, units or address), the policy's values (the observation's `policy` text:
today, the return window, the refund limit, the price-adjustment window) and the
services' answers, and returns the next call, or None when the request is resolved.
It is never told the family: it verifies the requester and the order, then decides
from the records and the policy alone (refund, escalate, decline, reship, cancel,
re-address, reverse), exactly as the policy text says. Writes already answered are
never repeated. proof.py plays it on every variant before the variant is served.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from ....mock_services.paths import (
    CASE,
    CASES_OPEN,
    INVENTORY,
    INVENTORY_CHECK_STOCK,
    INVENTORY_PRICE_HISTORY,
    INVENTORY_UPDATE_STOCK,
    ORDER,
    ORDERS_LOOKUP,
    ORDERS_PROCESS_REFUND,
    ORDERS_UPDATE_STATUS,
    PAYMENT,
    PAYMENTS_BY_ORDER,
    PAYMENTS_REFUND,
    SHIPMENT,
    SHIPMENTS_BY_ORDER,
    SHIPMENTS_RESHIP,
    SHIPMENTS_UPDATE_ADDRESS,
    USER,
    USERS_LOOKUP,
)
from ....models import ServiceBenchAction
from ..observations import (
    EMAIL,
    ORDER_ID,
    SKU,
    Data,
    ObservationLike,
    call,
    data,
    error,
    find,
    money,
)
from ..observations import field as read
from ..policy import Policy, read_policy

DAMAGED = re.compile(r"\((\d+) of \d+ units?\)")
NEW_ADDRESS = re.compile(r"be delivered to (.+) instead\.")
WRONG_ITEM = re.compile(r"wrong item instead of")
Action = ServiceBenchAction | None


@dataclass
class Request:
    """The request (from the prompt and the policy) and what the answers said about it."""

    task_id: str
    prompt: str
    policy: Policy
    email: str
    order_id: str
    requester: Data | None = None
    no_requester: bool = False
    order: Data | None = None
    first_order: Data | None = None
    """The order's first lookup: a later one that differs shows a write of ours applied."""
    stock: dict[str, int] = field(default_factory=dict)
    shipments: list[Data] | None = None
    payments: list[Data] | None = None
    history: Data | None = None
    done: set[tuple[Any, ...]] = field(default_factory=set)
    """Writes already answered: ("refund",), ("status",), ("stock", sku), ("case",), ..."""

    @property
    def sku(self) -> str:
        return find(SKU, self.prompt)

    def learn(self, body: Data) -> None:
        if "email" in body and "user_id" in body and body["email"].lower() == self.email.lower():
            self.requester = body
        elif "refund" in body and body.get("order_id") == self.order_id:
            self.done.add(("refund",))
        elif "previous_status" in body and body.get("order_id") == self.order_id:
            self.done.add(("status",))
        elif body.get("order_id") == self.order_id and "items" in body:
            first = self.first_order = self.first_order or body  # before any write of ours
            if len(body.get("refunds", ())) > len(first.get("refunds", ())):
                self.done.add(("refund",))  # a lookup shows a refund whose answer timed out
            if body.get("status") != first.get("status"):
                self.done.add(("status",))
            self.order = body
        elif "adjustment" in body:
            self.done.add(("stock", body["sku"]))
            self.stock[body["sku"]] = body["stock"]
        elif "stock_status" in body:
            self.stock[body["sku"]] = body["stock"]
        elif "history" in body and body.get("sku") == _sku_or_none(self.prompt):
            self.history = body
        elif body.get("order_id") == self.order_id and "shipments" in body:
            self.shipments = body["shipments"]
        elif body.get("order_id") == self.order_id and "payments" in body:
            self.payments = body["payments"]
        elif "shipment" in body and body["shipment"]["order_id"] == self.order_id:
            self.done.add(("reship",))
        elif "previous_address" in body:
            self.done.add(("address",))
        elif "case" in body and body["case"]["order_id"] == self.order_id:
            self.done.add(("case",))
        elif "payment" in body and body.get("order_id") == self.order_id:
            self.done.add(("reversal",))


def _sku_or_none(prompt: str) -> str | None:
    match = SKU.search(prompt)
    return match.group(0) if match else None


def _write(request: Request, done: tuple[Any, ...], action: ServiceBenchAction) -> Action:
    return None if done in request.done else action


def _case(request: Request, category: str, summary: str, amount: Decimal | None = None) -> Action:
    params: dict[str, Any] = {
        "order_id": request.order_id,
        "category": category,
        "summary": summary,
    }
    if amount is not None:
        params["amount"] = float(amount)
    return _write(request, ("case",), call(CASE, CASES_OPEN, "POST", **params))


def _refund(request: Request, amount: Decimal, reason: str) -> Action:
    """The refund, or an escalation when it is above the limit."""
    if amount > request.policy.refund_limit:
        return _case(
            request,
            "escalation",
            f"{reason}: {amount} is above the ${request.policy.refund_limit} limit",
            amount,
        )
    return _refund_call(request, amount, reason)


def _refund_call(request: Request, amount: Decimal, reason: str) -> Action:
    """The refund on the order, unless one was issued (a cancellation's is not limited)."""
    return _write(
        request,
        ("refund",),
        call(
            ORDER,
            ORDERS_PROCESS_REFUND,
            "POST",
            order_id=request.order_id,
            amount=float(amount),
            reason=reason,
        ),
    )


def _line(request: Request, sku: str) -> Data:
    assert request.order is not None
    return next(item for item in request.order["items"] if item["sku"] == sku)


def _in_window(request: Request) -> bool:
    assert request.order is not None
    placed = date.fromisoformat(request.order["placed_at"])
    within = (request.policy.today - placed).days <= request.policy.return_window_days
    return within and request.order.get("return_eligible") is True


def _damage(request: Request) -> Action:
    sku = request.sku
    units = int(find(DAMAGED, request.prompt))
    if not _in_window(request):
        return _case(request, "declined", f"damage claim on {sku} is past the return window")
    return _refund(
        request, money(_line(request, sku)["unit_price"]) * units, f"{units} damaged {sku}"
    )


def _exchange(request: Request) -> Action:
    sku = request.sku
    wrong = WRONG_ITEM.search(request.prompt) is not None
    if wrong and request.shipments is None:
        return call(SHIPMENT, SHIPMENTS_BY_ORDER, order_id=request.order_id)
    if not _in_window(request):
        return _case(request, "declined", f"exchange of {sku} is past the return window")
    units = _line(request, sku)["quantity"] if wrong else int(find(DAMAGED, request.prompt))
    if sku not in request.stock:
        return call(INVENTORY, INVENTORY_CHECK_STOCK, sku=sku)
    if request.stock[sku] >= units or ("reship",) in request.done:
        reason = f"replacement for {'the wrong item sent' if wrong else 'damaged units'}"
        return _write(
            request,
            ("reship",),
            call(
                SHIPMENT,
                SHIPMENTS_RESHIP,
                "POST",
                order_id=request.order_id,
                sku=sku,
                quantity=units,
                reason=reason,
            ),
        )
    unit = money(_line(request, sku)["unit_price"])
    return _refund(request, unit * units, f"{units} {sku} out of stock for an exchange")


def _cancel(request: Request) -> Action:
    assert request.order is not None
    order = request.order
    if order["status"] not in ("pending", "processing") and ("status",) not in request.done:
        return _case(
            request, "declined", f"{request.order_id} is {order['status']}: too late to cancel"
        )
    steps = [
        _write(
            request,
            ("status",),
            call(
                ORDER,
                ORDERS_UPDATE_STATUS,
                "POST",
                order_id=request.order_id,
                new_status="cancelled",
            ),
        ),
        _refund_call(
            request,
            money(order["total_charged"]) - money(order["refunded_total"]),
            "order cancelled before shipment",
        ),
    ]
    steps += [
        _write(
            request,
            ("stock", item["sku"]),
            call(
                INVENTORY,
                INVENTORY_UPDATE_STOCK,
                "POST",
                sku=item["sku"],
                adjustment=item["quantity"],
            ),
        )
        for item in order["items"]
    ]
    return next((step for step in steps if step is not None), None)


def _address(request: Request) -> Action:
    if request.shipments is None:
        return call(SHIPMENT, SHIPMENTS_BY_ORDER, order_id=request.order_id)
    original = next(s for s in request.shipments if s["kind"] == "original")
    if original["status"] != "label_created" and ("address",) not in request.done:
        return _case(
            request, "declined", f"shipment {original['shipment_id']} is {original['status']}"
        )
    address = find(NEW_ADDRESS, request.prompt)
    return _write(
        request,
        ("address",),
        call(
            SHIPMENT,
            SHIPMENTS_UPDATE_ADDRESS,
            "POST",
            shipment_id=original["shipment_id"],
            address=address,
        ),
    )


def _duplicate(request: Request) -> Action:
    if request.payments is None:
        return call(PAYMENT, PAYMENTS_BY_ORDER, order_id=request.order_id)
    assert request.order is not None
    charge = money(request.order["total_charged"])
    captures = sorted(
        (p for p in request.payments if money(p["amount"]) == charge),
        key=lambda p: p["captured_at"],
    )
    if len(captures) < 2:
        return _case(request, "declined", f"one capture of {charge} on {request.order_id}")
    later = captures[-1]
    if charge > request.policy.refund_limit:
        return _case(
            request,
            "escalation",
            f"duplicate capture {later['payment_id']} above the limit",
            charge,
        )
    return _write(
        request,
        ("reversal",),
        call(
            PAYMENT,
            PAYMENTS_REFUND,
            "POST",
            payment_id=later["payment_id"],
            reason="duplicate capture",
        ),
    )


def _price(request: Request) -> Action:
    sku = request.sku
    if request.history is None:
        return call(INVENTORY, INVENTORY_PRICE_HISTORY, sku=sku)
    assert request.order is not None
    line = _line(request, sku)
    paid = money(line["unit_price"])
    placed = date.fromisoformat(request.order["placed_at"])
    end = placed + timedelta(days=request.policy.price_adjustment_days)
    prices = [
        money(change["price"])
        for change in request.history["history"]
        if placed < date.fromisoformat(change["effective_date"]) <= end
    ]
    lowest = min([paid, *prices])
    if lowest >= paid:
        return _case(request, "declined", f"{sku} fell below {paid} only after {end}")
    return _refund(
        request, (paid - lowest) * line["quantity"], f"price adjustment on {sku} to {lowest}"
    )


PROCEDURES: Mapping[str, Callable[[Request], Action]] = {
    "damage_claim": _damage,
    "exchange_request": _exchange,
    "cancel_request": _cancel,
    "address_change": _address,
    "duplicate_charge": _duplicate,
    "price_adjustment": _price,
}


def _resolve(request: Request) -> Action:
    """Verify the requester and the order, then follow the task's procedure."""
    if request.requester is None and not request.no_requester:
        return call(USER, USERS_LOOKUP, email=request.email)
    if request.order is None:
        return call(ORDER, ORDERS_LOOKUP, order_id=request.order_id)
    if request.no_requester or request.order["user_id"] != (request.requester or {}).get("user_id"):
        who = (
            "no account has the email" if request.no_requester else "the order is another account's"
        )
        return _case(request, "verification_failed", f"{request.email}: {who}")
    return PROCEDURES[request.task_id](request)


def next_request_action(history: Sequence[ObservationLike]) -> Action:
    """The next call of a request task given the episode's observations, or None when done."""
    first = history[0]
    prompt = read(first, "task_description") or ""
    request = Request(
        task_id=read(first, "task_id"),
        prompt=prompt,
        policy=read_policy(read(first, "policy") or ""),
        email=find(EMAIL, prompt),
        order_id=find(ORDER_ID, prompt),
    )
    for observation in history[1:]:
        body = data(observation)
        if body is not None:
            request.learn(body)
        else:
            status, text = error(observation)
            if status == 404 and request.email.lower() in text.lower():
                request.no_requester = True
    return _resolve(request)
