"""Readings: every plausible way to compute a task's refund from a world's data.

A reading is one interpretation of the records: refund the coupon once or twice,
take the percent of the list price or of the sale price, refund the whole line
or one unit, compare against today's price or the price on the order date, and
so on. Each variant family names the one reading that is right
(`CORRECT_READING`); generation-time validity (server/servicebench/proof.py)
demands that the right reading equals the amount the grader checks (to the exact
cent, as refunds are graded) and that every other reading lands more than a cent
away, so that exactly one refund is correct and none hangs on how a cent is rounded.

These are pure functions of a `World`: they read records, never the construction
of a variant, so they are an independent derivation of the graded amount. A
reading is listed only where it is a different interpretation for this order
(a "one unit" reading needs a quantity above one, and so on). Amounts in cents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from types import MappingProxyType
from typing import Any

from ...mock_services import World, to_cents
from .world import price_on

CORRECT_READING: Mapping[str, str] = MappingProxyType(
    {
        "damaged_item": "damaged_units_charged",
        "coupon_added_percent_of_list": "percent_of_list_twice",
        "coupon_added_percent_of_sale": "percent_of_sale_twice",
        "coupon_added_flat": "flat_twice",
        "stale_price": "stale_vs_price_then",
    }
)


@dataclass(frozen=True)
class Readings:
    correct: int
    wrong: Mapping[str, int]


def _lines(world: World, order: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], int, int]]:
    products = world.tables["products"]
    return [
        (products[item["sku"]], item["quantity"], to_cents(item["unit_price"]))
        for item in order["items"]
    ]


def damaged_item_readings(
    world: World, order_id: str, sku: str, damaged: int = 1
) -> dict[str, int]:
    """Refund the `damaged` units: at the price charged, today's price, one unit, the line, the order..."""
    order = world.tables["orders"][order_id]
    lines = _lines(world, order)
    readings = {}
    if sum(quantity for _, quantity, _ in lines) > 1:
        readings["order_total"] = to_cents(order["total_charged"])
    for product, quantity, unit in lines:
        if product["sku"] != sku:
            readings[f"other_item_{product['sku']}"] = unit
            continue
        list_price = to_cents(product["price"])
        readings["damaged_units_charged"] = damaged * unit
        readings["list_price_now"] = list_price
        if damaged > 1:
            readings["one_unit_charged"] = unit
            readings["damaged_units_at_list_price"] = damaged * list_price
        if quantity > damaged:
            readings["whole_line"] = quantity * unit
    return readings


def _coupon_readings(world: World, order: Mapping[str, Any], readings: dict[str, int]) -> None:
    coupon = world.tables["coupons"][order["coupon_code"]]
    lines = _lines(world, order)
    eligible = coupon["eligible_skus"]
    covered = [line for line in lines if eligible is None or line[0]["sku"] in eligible]
    if "amount" in coupon:
        amount = to_cents(coupon["amount"])
        readings.update(flat_once=amount, flat_twice=2 * amount)
        units = sum(quantity for _, quantity, _ in covered)
        if units > 1:
            readings["flat_per_unit_twice"] = 2 * amount * units
        return
    share = coupon["percent"] / 100
    bases = {
        "list": sum(q * to_cents(p["price"]) for p, q, _ in covered),
        "sale": sum(q * unit for _, q, unit in covered),
    }
    if len(covered) < len(lines):
        bases["all_lines"] = sum(q * unit for _, q, unit in lines)
    if any(q > 1 for _, q, _ in covered):
        bases["list_one_unit"] = sum(to_cents(p["price"]) for p, _, _ in covered)
    for name, base in bases.items():
        readings[f"percent_of_{name}_once"] = round(base * share)
        readings[f"percent_of_{name}_twice"] = 2 * round(base * share)


def _stale_readings(world: World, order: Mapping[str, Any], readings: dict[str, int]) -> None:
    placed = date.fromisoformat(order["placed_at"])
    then = now = one_unit = 0
    stale_units = 0
    for product, quantity, unit in _lines(world, order):
        in_effect = price_on(product, placed)
        if unit > in_effect:
            then += quantity * (unit - in_effect)
            now += quantity * (unit - to_cents(product["price"]))
            one_unit += unit - in_effect
            stale_units += quantity
    if then:
        readings["stale_vs_price_then"] = then
        if now != then:
            readings["stale_vs_price_now"] = now
        if stale_units > 1:
            readings["stale_one_unit"] = one_unit


def billing_readings(world: World, order_id: str) -> dict[str, int]:
    """Refund the overbilling: the coupon once or twice, on which base; or a stale price."""
    order = world.tables["orders"][order_id]
    readings = {"full_charge": to_cents(order["total_charged"])}
    if order["coupon_code"] is not None:
        _coupon_readings(world, order, readings)
    _stale_readings(world, order, readings)
    return readings


def readings_for(
    world: World, family: str, order_id: str, sku: str | None = None, damaged: int = 1
) -> Readings:
    """The right reading of this family and the positive wrong ones, by name.

    `damaged`: how many units of `sku` the prompt says arrived damaged (damaged_item).
    """
    found = (
        damaged_item_readings(world, order_id, sku or "", damaged)
        if family == "damaged_item"
        else billing_readings(world, order_id)
    )
    right = CORRECT_READING[family]
    if right not in found:
        raise ValueError(f"{family}: the data admits no {right!r} reading for {order_id}")
    return Readings(
        correct=found[right],
        wrong=MappingProxyType(
            {name: amount for name, amount in found.items() if name != right and amount > 0}
        ),
    )
