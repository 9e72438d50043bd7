"""How each ServiceBench variant family plants its situation in a generated world.

A builder takes a `WorldDraft` (world.py) and returns the `Plan` it planted: the
customer, the task's order and, for a refund task, the amount the grader checks
(worked out from the construction; the proof checks it against the records).

Families (how the situation arises):
* order_status_lookup / ``order_status``: a target order of any open or closed
  status, next to a second order of the same customer with another status.
* return_and_refund / ``damaged_item``: an eligible, delivered order whose damaged
  item was charged a price that differs from today's list price (a later price
  change or a sale), maybe bought two or three times: then the prompt says how many
  of the units arrived damaged (one, some or all) and the refund is for exactly
  those; the customer's older, no-longer-eligible order of the same item and a
  household member's order of it sit alongside.
* billing_discrepancy: ``coupon_added_percent_of_list`` (the canonical error: a percent
  of the InventoryService list price added instead of deducted), ``coupon_added_flat``
  (a flat coupon added), ``coupon_added_percent_of_sale`` (a percent of the sale price
  charged, added), ``stale_price`` (one item charged at a price the price history shows
  had already dropped before the order date, maybe changed again since).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from types import MappingProxyType
from typing import Any

from ...mock_services.paths import INVENTORY_PRICE_HISTORY
from .world import (
    FIRST_ORDER,
    HISTORY_END,
    HISTORY_START,
    TODAY,
    WORDS,
    WorldDraft,
    coupon_cents,
    price_on,
    random_day,
)

BILLING_FAMILIES = (
    "coupon_added_percent_of_list",
    "coupon_added_flat",
    "coupon_added_percent_of_sale",
    "stale_price",
)
COUPON_KIND = MappingProxyType(
    {
        "coupon_added_percent_of_list": "percent_off_list_price",
        "coupon_added_percent_of_sale": "percent_off_sale_price",
        "coupon_added_flat": "fixed_amount_off",
    }
)
STALE_EVIDENCE = MappingProxyType(
    {"order_evidence": ("items",), "price_evidence": (INVENTORY_PRICE_HISTORY,)}
)


@dataclass(frozen=True)
class Plan:
    """What a family builder planted; ids are read after the world is finished."""

    family: str
    customer: dict[str, Any]
    order: dict[str, Any]
    refund_cents: int | None = None
    item_sku: str | None = None
    damaged_units: int | None = None
    """Units of `item_sku` the prompt says arrived damaged (None: the order holds one)."""
    hidden_cents: tuple[int, ...] = ()
    evidence: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """TaskSpec fields the family overrides (task 3's evidence for a stale price)."""


def _cast(draft: WorldDraft) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """The customer, a household member easy to confuse with them, and 5-7 others."""
    customer = draft.add_user()
    household = draft.add_household_member(customer)
    return customer, household, [draft.add_user() for _ in range(draft.rng.randint(5, 7))]


def _surround(
    draft: WorldDraft, users: list[dict[str, Any]], coupon: dict[str, Any] | None = None
) -> None:
    """One or two correctly billed orders for each of `users`."""
    for user in users:
        draft.add_filler_orders(user, draft.rng.choice((1, 1, 2)), coupon)


def _side_coupon(draft: WorldDraft, products: list[dict[str, Any]]) -> dict[str, Any]:
    """A coupon that other customers used correctly: part of the scenery."""
    rng = draft.rng
    kind = rng.choice(("percent_off_list_price", "fixed_amount_off", "percent_off_sale_price"))
    eligible = rng.sample(products, 2)
    if kind == "fixed_amount_off":
        return draft.add_coupon(
            kind, eligible, amount=round(rng.choice(WORDS["coupon_flat_amounts"]) * 100)
        )
    return draft.add_coupon(kind, eligible, percent=rng.choice(WORDS["coupon_percents"]))


def _order_status(draft: WorldDraft) -> Plan:
    rng = draft.rng
    customer, household, others = _cast(draft)
    products = [draft.add_product() for _ in range(rng.randint(8, 10))]
    side_coupon = _side_coupon(draft, products[2:])
    status = rng.choice(("delivered", "shipped", "processing", "pending"))
    placed = TODAY - timedelta(
        days=rng.randint(12, 60) if status == "delivered" else rng.randint(1, 8)
    )
    order = draft.add_order(
        customer, draft.fair_lines(rng.sample(products, rng.choice((1, 2))), placed), placed, status
    )
    earlier = random_day(rng, FIRST_ORDER, placed - timedelta(days=1))
    second = rng.choice(
        [name for name in ("delivered", "returned", "cancelled", "shipped") if name != status]
    )
    draft.add_order(customer, draft.fair_lines(rng.sample(products, 1), earlier), earlier, second)
    _surround(draft, [household] + others, side_coupon)
    return Plan("order_status", customer, order)


def _damaged_item(draft: WorldDraft) -> Plan:
    rng = draft.rng
    customer, household, others = _cast(draft)
    item, other, *rest = [draft.add_product() for _ in range(rng.randint(8, 10))]
    draft.add_sibling(item)
    placed = TODAY - timedelta(days=rng.randint(3, 25))
    earlier = random_day(rng, FIRST_ORDER, placed - timedelta(days=45))
    first = draft.draw_price(25, 160)
    then = first + rng.choice((-1, 1)) * rng.randint(3, 12) * 100
    changes = [
        (random_day(rng, HISTORY_START, HISTORY_END), first),
        (random_day(rng, earlier + timedelta(days=1), placed - timedelta(days=1)), then),
    ]
    on_sale = rng.random() < 0.3
    if not on_sale or rng.random() < 0.5:
        changes.append(
            (
                random_day(rng, placed + timedelta(days=1), TODAY - timedelta(days=1)),
                then + rng.choice((-1, 1)) * rng.randint(2, 10) * 100,
            )
        )
    draft.set_history(item, changes)
    unit = price_on(item, placed) * (rng.randint(80, 92) if on_sale else 100) // 100
    quantity = rng.choice((1, 1, 2, 3))
    damaged = rng.randint(1, quantity)
    lines = [(item, quantity, unit)]
    # Every unit damaged and nothing else bought would make the refund the whole charge:
    # then "refund the order in full" would be right by accident. Another line keeps it apart.
    if rng.random() < 0.75 or damaged == quantity:
        lines.append((other, 1, price_on(other, placed)))
    rng.shuffle(lines)
    order = draft.add_order(customer, lines, placed, "delivered", return_eligible=True)
    draft.add_order(
        customer, [(item, 1, price_on(item, earlier))], earlier, "delivered", return_eligible=False
    )  # the same item, bought before, no longer returnable
    near = random_day(rng, placed - timedelta(days=20), TODAY - timedelta(days=2))
    draft.add_order(household, [(item, 2, price_on(item, near))], near, "delivered")
    _surround(draft, others + [customer] * rng.choice((0, 1)), _side_coupon(draft, rest))
    return Plan(
        "damaged_item",
        customer,
        order,
        refund_cents=damaged * unit,
        item_sku=item["sku"],
        damaged_units=damaged if quantity > 1 else None,
    )


def _exact_percent(price: int, quantity: int, percent: int, step: int) -> int:
    """Nudge `price` by `step` cents until `percent` of `quantity` units is whole cents."""
    while quantity * price * percent % 100:
        price += step
    return price


def _coupon_added(draft: WorldDraft, family: str) -> Plan:
    rng = draft.rng
    customer, household, others = _cast(draft)
    item, other, *_ = [draft.add_product() for _ in range(rng.randint(8, 10))]
    sibling = draft.add_sibling(item)
    placed = random_day(rng, FIRST_ORDER + timedelta(days=30), TODAY - timedelta(days=3))
    quantity = rng.choice((1, 2, 2, 3))
    # Twice the percent of `quantity` units must not come to one unit's price (25% x 2 x 2):
    # the refund would then be stated on the order as the unit price.
    percent = rng.choice([p for p in WORDS["coupon_percents"] if 2 * quantity * p != 100])
    kind = COUPON_KIND[family]
    list_price = draft.draw_price(40, 220)
    if kind == "percent_off_list_price":
        list_price = _exact_percent(list_price, quantity, percent, 1)
    changes = [(random_day(rng, HISTORY_START, HISTORY_END), list_price)]
    if rng.random() < 0.5:  # an older price, superseded well before the order
        changes.insert(
            0,
            (
                HISTORY_START - timedelta(days=rng.randint(20, 200)),
                list_price + rng.randint(3, 20) * 100,
            ),
        )
    draft.set_history(item, changes)
    sale = list_price * rng.randint(68, 92) // 100
    if kind == "percent_off_sale_price":
        sale = _exact_percent(sale, quantity, percent, -1)
    flat = kind == "fixed_amount_off"
    coupon = draft.add_coupon(
        kind,
        [item, sibling],
        percent=None if flat else percent,
        amount=round(rng.choice(WORDS["coupon_flat_amounts"]) * 100) if flat else None,
    )
    lines = [(item, quantity, sale), (other, 1, price_on(other, placed))]
    rng.shuffle(lines)
    discount = coupon_cents(coupon, lines)
    charged = sum(q * unit for _, q, unit in lines) + discount
    order = draft.add_order(customer, lines, placed, "delivered", coupon=coupon, total=charged)
    hidden = (2 * discount, charged - 2 * discount) + (() if flat else (discount,))
    draft.add_filler_orders(customer, 1)
    _surround(draft, [household] + others, coupon)
    return Plan(family, customer, order, refund_cents=2 * discount, hidden_cents=hidden)


def _stale_price(draft: WorldDraft) -> Plan:
    rng = draft.rng
    customer, household, others = _cast(draft)
    item, *_ = [draft.add_product() for _ in range(rng.randint(8, 10))]
    draft.add_sibling(item)
    placed = random_day(rng, FIRST_ORDER + timedelta(days=40), TODAY - timedelta(days=3))
    old = draft.draw_price(30, 200)
    new = old * rng.randint(72, 92) // 100
    changes = [
        (random_day(rng, HISTORY_START, HISTORY_END), old),
        (random_day(rng, FIRST_ORDER, placed - timedelta(days=3)), new),
    ]
    if rng.random() < 0.6 and (TODAY - placed).days > 2:
        changes.append(
            (
                random_day(rng, placed + timedelta(days=1), TODAY - timedelta(days=1)),
                new + rng.choice((-1, 1)) * rng.randint(2, 9) * 100,
            )
        )
    draft.set_history(item, changes)
    quantity = rng.choice((1, 1, 2, 3))
    order = draft.add_order(customer, [(item, quantity, old)], placed, "delivered")
    later = random_day(rng, changes[1][0], TODAY - timedelta(days=1))
    draft.add_order(rng.choice(others), [(item, 1, price_on(item, later))], later, "delivered")
    draft.add_filler_orders(customer, 1)
    _surround(draft, [household] + others)
    return Plan(
        "stale_price",
        customer,
        order,
        refund_cents=quantity * (old - new),
        hidden_cents=(quantity * (old - new),),
        evidence=STALE_EVIDENCE,
    )


def _billing(draft: WorldDraft, family: str) -> Plan:
    return _stale_price(draft) if family == "stale_price" else _coupon_added(draft, family)


BUILDERS: Mapping[str, Callable[[WorldDraft], Plan]] = MappingProxyType(
    {
        "order_status_lookup": _order_status,
        "return_and_refund": _damaged_item,
        "billing_discrepancy": lambda draft: _billing(draft, draft.rng.choice(BILLING_FAMILIES)),
    }
)
"""Per seed task, the builder of a seed's variant (the billing family is drawn with the world)."""
FAMILY_BUILDERS: Mapping[str, Callable[[WorldDraft], Plan]] = MappingProxyType(
    {
        "order_status": _order_status,
        "damaged_item": _damaged_item,
        **{family: (lambda draft, f=family: _billing(draft, f)) for family in BILLING_FAMILIES},
    }
)
"""Per family of the seed tasks, its builder (a variant of that family for a given seed)."""
