"""Money and coupons: amounts in whole cents, and the one coupon rule.

Every place that prices an order uses `coupon_discount`: the seed data's checks,
the canonical task's derived adjustment, the generated worlds (which bill their
orders correctly) and the variants that plant a billing error, and the oracle that
works the adjustment out from what the services answered. A coupon's `type` is its
rule, as its description says: `percent_off_list_price` takes its percent of the
catalogue (InventoryService) list price of the eligible units, as SAVE20 does in
the seed document; `percent_off_sale_price` its percent of the price the units were
charged; `fixed_amount_off` its amount, once, if any line is eligible. This module
imports nothing of the package's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

COUPON_TYPES = ("percent_off_list_price", "percent_off_sale_price", "fixed_amount_off")


def to_cents(amount: float) -> int:
    """Money compared as whole cents, so float noise never decides a refund."""
    return round(amount * 100)


def dollars(cents: int) -> float:
    """Cents as the services write money: a float of dollars."""
    return cents / 100


class BilledLine(NamedTuple):
    """One order line as a coupon sees it."""

    sku: str
    quantity: int
    unit_cents: int
    """What one unit was charged."""
    list_cents: int | None = None
    """The catalogue price of one unit (needed by a `percent_off_list_price` coupon only)."""


def coupon_discount(coupon: Mapping[str, Any], lines: Iterable[BilledLine]) -> int:
    """What `coupon` takes off an order of these lines, in cents, by its own rule."""
    eligible = coupon["eligible_skus"]
    covered = [line for line in lines if eligible is None or line.sku in eligible]
    kind = coupon["type"]
    if kind not in COUPON_TYPES:
        raise ValueError(f"coupon {coupon.get('code')!r} has an unknown type {kind!r}")
    if not covered:
        return 0
    if kind == "fixed_amount_off":
        return to_cents(coupon["amount"])
    if kind == "percent_off_list_price":
        if any(line.list_cents is None for line in covered):
            raise ValueError(
                f"coupon {coupon.get('code')!r} needs the list price of every eligible line"
            )
        base = sum(line.quantity * line.list_cents for line in covered)  # type: ignore[operator]
    else:
        base = sum(line.quantity * line.unit_cents for line in covered)
    return round(base * coupon["percent"] / 100)


def order_lines(
    order: Mapping[str, Any], products: Mapping[str, Mapping[str, Any]]
) -> list[BilledLine]:
    """An order record's lines, with today's list prices from the product table."""
    return [
        BilledLine(
            item["sku"],
            item["quantity"],
            to_cents(item["unit_price"]),
            to_cents(products[item["sku"]]["price"]),
        )
        for item in order["items"]
    ]
