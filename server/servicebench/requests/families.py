"""How each request family plants its situation: damage claims, exchanges, price drops.

Each builder draws the policy first (window, limit, adjustment days), then builds the
world around it so that the family's condition holds under those values and only
under them: a claim inside the window and under the limit, the same claim above the
limit, one past the window, one from a household member on an order that is not
theirs; an exchange with stock, with a look-alike item packed, without stock; a price
that fell inside the adjustment window or only after it. Windows and limits are drawn
per variant (a 40-day-old order is inside a 45-day window and outside a 30-day one),
so the resolution follows the served text, never a number learnt by heart.
Cancellations, address changes and duplicate charges: families_orders.py.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

from ...tasks.variants import VariantRejected
from ..policy import DRAWS, Policy, draw_policy
from ..world import FIRST_ORDER, HISTORY_END, HISTORY_START, TODAY, random_day
from .world import RequestDraft, RequestPlan

Product = dict[str, Any]
OLDEST = (TODAY - FIRST_ORDER).days - 1
"""The oldest order a world holds, in days before today."""


def cast(draft: RequestDraft) -> tuple[Product, Product, list[Product]]:
    """The customer, a household member easy to confuse with them, and 5-7 others."""
    customer = draft.add_user()
    household = draft.add_household_member(customer)
    return customer, household, [draft.add_user() for _ in range(draft.rng.randint(5, 7))]


def surround(draft: RequestDraft, users: list[Product]) -> None:
    """One or two correctly billed orders for each of `users`."""
    for user in users:
        draft.add_filler_orders(user, draft.rng.choice((1, 1, 2)))


def priced(draft: RequestDraft, placed: Any, list_cents: int, later: bool = True) -> Product:
    """A product whose list price on `placed` is `list_cents`, maybe changed since."""
    rng = draft.rng
    item = draft.add_product()
    before = max(500, list_cents + rng.choice((-1, 1)) * rng.randint(3, 15) * 100)
    changes = [
        (random_day(rng, HISTORY_START, HISTORY_END), before),
        (random_day(rng, HISTORY_END + timedelta(days=1), placed - timedelta(days=1)), list_cents),
    ]
    if later and (TODAY - placed).days > 2 and rng.random() < 0.6:
        changes.append(
            (
                random_day(rng, placed + timedelta(days=1), TODAY - timedelta(days=1)),
                max(500, list_cents + rng.choice((-1, 1)) * rng.randint(2, 12) * 100),
            )
        )
    draft.set_history(item, changes)
    return item


def limit_at_least(rng: Any, cents: int) -> int:
    """A drawn refund limit (dollars) that covers `cents`; the largest if none does."""
    covering = [limit for limit in DRAWS["refund_limit"] if limit * 100 >= cents]
    return rng.choice(covering) if covering else DRAWS["refund_limit"][-1]


def limit_below(rng: Any, cents: int) -> int:
    """A drawn refund limit (dollars) below `cents` (the draw is rejected if none is)."""
    below = [limit for limit in DRAWS["refund_limit"] if limit * 100 < cents]
    if not below:
        raise VariantRejected(f"no refund limit below {cents} cents")
    return rng.choice(below)


@dataclass(frozen=True)
class Claim:
    """A delivered order of an item (1-3 units, some damaged) beside another line."""

    customer: Product
    household: Product
    order: dict[str, Any]
    item: Product
    sibling: Product
    damaged: int
    unit: int
    """What one unit of the item was charged (cents)."""

    @property
    def refund(self) -> int:
        return self.damaged * self.unit


def claim(
    draft: RequestDraft,
    policy: Policy,
    in_window: bool,
    amount: tuple[float, float],
    sale: bool = True,
) -> Claim:
    """`amount`: the range (dollars) the damaged units' list price falls in; on sale the
    units were charged 8-20% less. The customer's older order of the same item and a
    household member's order of it sit alongside."""
    rng = draft.rng
    window = policy.return_window_days
    customer, household, others = cast(draft)
    age = rng.randint(2, window) if in_window else rng.randint(window + 1, min(window + 25, OLDEST))
    placed = TODAY - timedelta(days=age)
    quantity = rng.choice((1, 1, 2, 3))
    damaged = rng.randint(1, quantity)
    low, high = amount[0] / damaged, amount[1] / damaged
    list_cents = draft.draw_price(max(8, low), max(low + 2, high))
    unit = list_cents * rng.randint(80, 92) // 100 if sale and rng.random() < 0.35 else list_cents
    item = priced(draft, placed, list_cents)
    sibling = draft.add_sibling(item)
    other = draft.add_product()
    lines = [(item, quantity, unit), draft.fair_lines([other], placed)[0]]
    rng.shuffle(lines)
    order = draft.add_order(customer, lines, placed, "delivered")
    earlier = random_day(rng, FIRST_ORDER, placed - timedelta(days=1))
    draft.add_order(customer, draft.fair_lines([item], earlier), earlier, "delivered")
    near = random_day(rng, placed - timedelta(days=10), TODAY - timedelta(days=1))
    draft.add_order(household, draft.fair_lines([item], near), near, "delivered")
    surround(draft, others)
    return Claim(customer, household, order, item, sibling, damaged, unit)


def window_policy(draft: RequestDraft) -> Policy:
    """Drawn policy values. The window is the policy's to apply: a delivered order is
    return_eligible (its items can be returned at all) however old it is, so the days
    have to be counted against the served window, never read off a flag."""
    policy = draw_policy(draft.rng)
    draft.return_window = timedelta(days=100 * 365)
    return policy


def _plan(
    family: str, prompt: str, found: Claim, policy: Policy, calls: int, **resolution: Any
) -> RequestPlan:
    requester = found.household if family == "damage_not_their_order" else found.customer
    return RequestPlan(
        family,
        prompt,
        requester["email"],
        requester,
        found.order,
        policy,
        calls,
        item=found.item,
        damaged=found.damaged if prompt == "damaged" else None,
        **resolution,
    )


def damage_refund(draft: RequestDraft) -> RequestPlan:
    policy = window_policy(draft)
    found = claim(draft, policy, True, (12, policy.refund_limit * 0.95))
    return _plan("damage_refund", "damaged", found, policy, 3, refund_cents=found.refund)


def damage_over_limit(draft: RequestDraft) -> RequestPlan:
    policy = window_policy(draft)
    found = claim(draft, policy, True, (60, 420), sale=False)
    policy = replace(policy, refund_limit=limit_below(draft.rng, found.refund))
    return _plan(
        "damage_over_limit", "damaged", found, policy, 3, case=("escalation", found.refund)
    )


def damage_outside_window(draft: RequestDraft) -> RequestPlan:
    policy = window_policy(draft)
    found = claim(draft, policy, False, (12, 120))
    return _plan("damage_outside_window", "damaged", found, policy, 3, case=("declined", None))


def damage_not_their_order(draft: RequestDraft) -> RequestPlan:
    policy = window_policy(draft)
    found = claim(draft, policy, True, (12, 120))
    return _plan(
        "damage_not_their_order", "damaged", found, policy, 3, case=("verification_failed", None)
    )


def _exchange(draft: RequestDraft, family: str, covered: bool) -> RequestPlan:
    policy = window_policy(draft)
    found = claim(draft, policy, True, (12, policy.refund_limit * 0.95))
    rng = draft.rng
    extra = rng.choice((0, rng.randint(1, 40)))
    found.item["stock"] = found.damaged + extra if covered else rng.randint(0, found.damaged - 1)
    if covered:
        return _plan(family, "damaged", found, policy, 4, reship=found.damaged)
    return _plan(family, "damaged", found, policy, 4, refund_cents=found.refund)


def exchange_damaged(draft: RequestDraft) -> RequestPlan:
    return _exchange(draft, "exchange_damaged", covered=True)


def exchange_out_of_stock(draft: RequestDraft) -> RequestPlan:
    return _exchange(draft, "exchange_out_of_stock", covered=False)


def exchange_wrong_item(draft: RequestDraft) -> RequestPlan:
    """The shipment shows a look-alike (the item's sibling) packed instead of the item."""
    policy = window_policy(draft)
    found = claim(draft, policy, True, (12, 150))
    line = next(i for i in found.order["items"] if i["sku"] == found.item["sku"])
    found.item["stock"] = line["quantity"] + draft.rng.randint(0, 30)
    packed = [
        {
            "sku": found.sibling["sku"] if i["sku"] == found.item["sku"] else i["sku"],
            "quantity": i["quantity"],
        }
        for i in found.order["items"]
    ]
    draft.pack(found.order, packed)
    return _plan("exchange_wrong_item", "wrong_item", found, policy, 5, reship=line["quantity"])


def _price_history(
    draft: RequestDraft, item: Product, placed: date, paid: int, inside: bool, days: int, most: int
) -> int:
    """Set the item's history around the order; return the lowest list price in effect during
    the `days` after the order date (`paid` if it never fell below it then)."""
    rng = draft.rng
    end = placed + timedelta(days=days)
    before = paid + rng.choice((-1, 1)) * rng.randint(3, 15) * 100
    changes = [
        (random_day(rng, HISTORY_START, HISTORY_END), max(500, before)),
        (random_day(rng, HISTORY_END + timedelta(days=1), placed - timedelta(days=1)), paid),
    ]
    first = random_day(rng, placed + timedelta(days=1), end)
    if inside:
        changes.append((first, paid - rng.randint(50, max(51, most))))
        if first < end and rng.random() < 0.4:  # it moved again inside the window
            changes.append(
                (
                    random_day(rng, first + timedelta(days=1), end),
                    paid - rng.randint(50, max(51, most)),
                )
            )
    elif rng.random() < 0.4:  # a rise inside the window, then the drop after it
        changes.append((first, paid + rng.randint(2, 9) * 100))
    if not inside or rng.random() < 0.7:  # a later drop, maybe below the window's lowest
        changes.append(
            (
                random_day(rng, end + timedelta(days=1), TODAY - timedelta(days=1)),
                paid - rng.randint(100, paid // 3),
            )
        )
    draft.set_history(item, changes)
    return min([paid] + [price for day, price in changes if placed < day <= end])


def _price_drop(draft: RequestDraft, inside: bool) -> RequestPlan:
    rng = draft.rng
    policy = window_policy(draft)
    days = policy.price_adjustment_days
    customer, household, others = cast(draft)
    placed = TODAY - timedelta(days=rng.randint(days + 3, min(days + 60, OLDEST)))
    quantity = rng.choice((1, 1, 2, 3))
    paid = draft.draw_price(20, 220)
    item = draft.add_product()
    most = min(paid * 35 // 100, policy.refund_limit_cents // quantity)
    lowest = _price_history(draft, item, placed, paid, inside, days, most)
    lines = [(item, quantity, paid), draft.fair_lines([draft.add_product()], placed)[0]]
    rng.shuffle(lines)
    order = draft.add_order(customer, lines, placed, "delivered")
    draft.add_filler_orders(customer, 1)
    surround(draft, [household] + others)
    family = "price_drop_in_window" if inside else "price_drop_after_window"
    plan = RequestPlan(
        family, "price_drop", customer["email"], customer, order, policy, 4, item=item
    )
    if inside:
        return replace(plan, refund_cents=quantity * (paid - lowest))
    return replace(plan, case=("declined", None))


def price_drop_in_window(draft: RequestDraft) -> RequestPlan:
    return _price_drop(draft, inside=True)


def price_drop_after_window(draft: RequestDraft) -> RequestPlan:
    return _price_drop(draft, inside=False)
