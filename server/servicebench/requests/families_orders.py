"""How each request family about an order in flight plants its situation: cancellations,
address changes and duplicate charges.

An order still pending or processing can be cancelled (and re-addressed: its shipment
only has a label); once shipped it cannot, and the request is declined. A requester
whose email no account has cannot be verified. A charge captured twice is reversed
once, unless the capture is above the agent's refund limit: then it is escalated.
Damage claims, exchanges and price drops: families.py.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..world import TODAY, WORDS
from .families import cast, limit_at_least, limit_below, surround, window_policy
from .world import RequestDraft, RequestPlan

Product = dict[str, Any]
OPEN_STATUSES = ("pending", "processing")


def _in_flight(
    draft: RequestDraft, status: str, lines: int
) -> tuple[Product, Product, dict[str, Any]]:
    """The customer's recent order of `lines` products in `status` (its shipment follows:
    a label before dispatch, in transit once shipped), beside another open order of theirs."""
    rng = draft.rng
    customer, household, others = cast(draft)
    products = [draft.add_product() for _ in range(rng.randint(6, 8))]
    placed = TODAY - timedelta(
        days=rng.randint(0, 5) if status in OPEN_STATUSES else rng.randint(2, 6)
    )
    order = draft.add_order(
        customer, draft.fair_lines(rng.sample(products, lines), placed), placed, status
    )
    other_day = TODAY - timedelta(days=rng.randint(0, 6))
    draft.add_order(
        customer,
        draft.fair_lines(rng.sample(products, 1), other_day),
        other_day,
        rng.choice(OPEN_STATUSES),
    )
    draft.add_filler_orders(customer, 1)
    surround(draft, [household] + others)
    return customer, household, order


def cancel_unshipped(draft: RequestDraft) -> RequestPlan:
    policy = window_policy(draft)
    lines = draft.rng.choice((1, 2, 2, 3))
    customer, _, order = _in_flight(draft, draft.rng.choice(OPEN_STATUSES), lines)
    total = round(order["total_charged"] * 100)
    return RequestPlan(
        "cancel_unshipped", "cancel", customer["email"], customer, order, policy, 4 + lines,
        refund_cents=total, cancel=True,
    )  # fmt: skip


def cancel_shipped(draft: RequestDraft) -> RequestPlan:
    policy = window_policy(draft)
    customer, _, order = _in_flight(draft, "shipped", draft.rng.choice((1, 2)))
    return RequestPlan(
        "cancel_shipped", "cancel", customer["email"], customer, order, policy, 3,
        case=("declined", None),
    )  # fmt: skip


def unknown_email(draft: RequestDraft, email: str) -> str:
    """An email close to `email` (another domain, a dropped dot or letter) that no account has."""
    handle, domain = email.split("@")
    taken = {user["email"].lower() for user in draft.users}
    candidates = [
        f"{handle.replace('.', '')}@{domain}",
        f"{handle}@{draft.rng.choice([d for d in WORDS['email_domains'] if d != domain])}",
        f"{handle[:-1]}@{domain}",
        f"{handle}{draft.rng.randint(1, 99)}@{domain}",
    ]
    draft.rng.shuffle(candidates)
    return next(found for found in candidates if found.lower() not in taken and found != email)


def cancel_unknown_requester(draft: RequestDraft) -> RequestPlan:
    policy = window_policy(draft)
    customer, _, order = _in_flight(
        draft, draft.rng.choice(OPEN_STATUSES), draft.rng.choice((1, 2))
    )
    return RequestPlan(
        "cancel_unknown_requester", "cancel", unknown_email(draft, customer["email"]), None,
        order, policy, 3, case=("verification_failed", None),
    )  # fmt: skip


def _address(draft: RequestDraft, family: str, status: str) -> RequestPlan:
    policy = window_policy(draft)
    customer, _, order = _in_flight(draft, status, draft.rng.choice((1, 2)))
    plan = RequestPlan(
        family, "address", customer["email"], customer, order, policy, 4,
        address=draft.new_address(customer["address"]),
    )  # fmt: skip
    if status == "shipped":
        plan.case = ("declined", None)
    return plan


def address_before_dispatch(draft: RequestDraft) -> RequestPlan:
    return _address(draft, "address_before_dispatch", draft.rng.choice(OPEN_STATUSES))


def address_after_dispatch(draft: RequestDraft) -> RequestPlan:
    return _address(draft, "address_after_dispatch", "shipped")


def _charged_twice(draft: RequestDraft, family: str, over: bool, twice: bool = True) -> RequestPlan:
    """`twice`: the charge was captured twice; else the customer placed the same order twice
    that day, each captured once (two orders, no duplicate capture)."""
    rng = draft.rng
    policy = window_policy(draft)
    customer, household, others = cast(draft)
    placed = TODAY - timedelta(days=rng.randint(1, 40))
    status = "shipped" if (TODAY - placed).days < 4 else "delivered"
    item, other = draft.add_product(), draft.add_product()
    low, high = (90, 260) if over else (15, 140)
    lines = [(item, rng.choice((1, 1, 2)), draft.draw_price(low, high))]
    if rng.random() < 0.5:
        lines.append(draft.fair_lines([other], placed)[0])
    order = draft.add_order(customer, lines, placed, status)
    if twice:
        draft.capture_twice(order)
    else:
        draft.add_order(customer, lines, placed, status)
    draft.add_filler_orders(customer, 1)
    surround(draft, [household] + others)
    charged = round(order["total_charged"] * 100)
    limit = limit_below(rng, charged) if over else limit_at_least(rng, charged)
    if not over and limit * 100 < charged:
        limit = -(-charged // 10_000) * 100
    policy = policy.__class__(policy.return_window_days, limit, policy.price_adjustment_days)
    plan = RequestPlan(family, "charged_twice", customer["email"], customer, order, policy, 4)
    if not twice:
        plan.case = ("declined", None)
    elif over:
        plan.case = ("escalation", charged)
    else:
        plan.reverse_duplicate = True
    return plan


def duplicate_capture(draft: RequestDraft) -> RequestPlan:
    return _charged_twice(draft, "duplicate_capture", over=False)


def duplicate_over_limit(draft: RequestDraft) -> RequestPlan:
    return _charged_twice(draft, "duplicate_over_limit", over=True)


def duplicate_two_orders(draft: RequestDraft) -> RequestPlan:
    return _charged_twice(draft, "duplicate_two_orders", over=False, twice=False)
