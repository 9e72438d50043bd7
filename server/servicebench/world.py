"""Generated ServiceBench worlds: the realistic surroundings of a seeded task variant.

A `WorldDraft` collects users, products, coupons and orders drawn from the word
lists in data/servicebench_variants.json with one seeded `random.Random`, then
`finish()` freezes them into a `World` the services serve. Surrounding orders are
billed correctly (unit prices at or below the price in effect on the order date,
coupons deducted by their own rule), so the only billing error in a world is the one
a task variant plants on purpose. All money is handled in whole cents.

Determinism: every choice comes from the draft's `rng`, lists keep insertion order,
and sets are only ever asked for membership, never iterated.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any

from ... import DATA_DIR
from ...mock_services import SETTINGS, BilledLine, World, coupon_discount, dollars, to_cents
from ...read_only_json import read_only

WORDS_PATH = DATA_DIR / "servicebench_variants.json"
WORDS: Mapping[str, Any] = read_only(json.loads(WORDS_PATH.read_text(encoding="utf-8")))
CALENDAR = WORDS["calendar"]
HISTORY_START = date.fromisoformat(CALENDAR["history_start"])
HISTORY_END = date.fromisoformat(CALENDAR["history_end"])
FIRST_ORDER = date.fromisoformat(CALENDAR["first_order"])
TODAY = date.fromisoformat(CALENDAR["today"])
RETURN_WINDOW = timedelta(days=CALENDAR["return_window_days"])

Line = tuple[dict[str, Any], int, int]
"""(product, quantity, unit price in cents) of one order line."""

FILLER_STATUSES = ("delivered",) * 5 + (
    "shipped",
    "shipped",
    "processing",
    "pending",
    "returned",
    "cancelled",
)


def price_on(product: Mapping[str, Any], day: date) -> int:
    """The list price in effect on `day` (cents), from the product's price history."""
    in_effect = product["price_history"][0]["price"]
    for change in product["price_history"]:
        if date.fromisoformat(change["effective_date"]) <= day:
            in_effect = change["price"]
    return to_cents(in_effect)


def coupon_cents(coupon: Mapping[str, Any], lines: Sequence[Line]) -> int:
    """What the coupon takes off these draft lines (mock_services/billing.py's rule)."""
    return coupon_discount(
        coupon,
        [
            BilledLine(product["sku"], quantity, unit, to_cents(product["price"]))
            for product, quantity, unit in lines
        ],
    )


def random_day(rng: random.Random, first: date, last: date) -> date:
    return first + timedelta(days=rng.randint(0, max(0, (last - first).days)))


class WorldDraft:
    """One variant's records under construction; ids never repeat within a world."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.users: list[dict[str, Any]] = []
        self.products: list[dict[str, Any]] = []
        self.coupons: list[dict[str, Any]] = []
        self.orders: list[dict[str, Any]] = []
        self._taken: set[str] = set()
        self._numbered: list[dict[str, Any]] | None = None
        self.return_window = RETURN_WINDOW
        """Orders delivered within it are return_eligible (a request world: its policy's)."""
        self._catalogue = rng.sample(range(len(WORDS["products"])), len(WORDS["products"]))
        self._first_names = rng.sample(WORDS["first_names"], len(WORDS["first_names"]))
        self._last_names = rng.sample(WORDS["last_names"], len(WORDS["last_names"]))

    def _unique(self, make: Callable[[], str], fallback: Callable[[], str] | None = None) -> str:
        """A fresh id from `make` (then from `fallback` if `make` keeps colliding)."""
        for attempt in range(1000):
            value = make() if attempt < 20 or fallback is None else fallback()
            if value not in self._taken:
                self._taken.add(value)
                return value
        raise RuntimeError("id space exhausted")

    # ---------------------------------------------------------------- products

    def draw_price(self, low: float, high: float) -> int:
        """A shop-like price in [low, high] dollars: 49.99, 54.95, 62.00, 38.50."""
        return self.rng.randint(int(low), int(high) - 1) * 100 + self.rng.choice(
            (99, 95, 0, 50, 49)
        )

    def set_history(self, product: dict[str, Any], changes: Sequence[tuple[date, int]]) -> None:
        """Replace the price history (oldest first); the last change is the current price."""
        product["price_history"] = [
            {"effective_date": day.isoformat(), "price": dollars(price)} for day, price in changes
        ]
        product["price"] = dollars(changes[-1][1])

    def add_product(
        self, name: str | None = None, category: str | None = None, near_sku: str | None = None
    ) -> dict[str, Any]:
        """A catalogue product with a plausible history; `near_sku` draws a look-alike SKU."""
        entry = WORDS["products"][self._catalogue.pop()] if name is None else None
        any_sku = lambda: f"SKU-{self.rng.randint(100, 999)}"  # noqa: E731
        if near_sku is None:
            sku = self._unique(any_sku)
        else:
            number = int(near_sku.split("-")[1])
            near = lambda: number + self.rng.choice((-9, -1, 1, 9, 10))  # noqa: E731
            sku = self._unique(lambda: f"SKU-{min(999, max(100, near()))}", fallback=any_sku)
        low, high = entry["price"] if entry else (20, 120)
        product = {
            "sku": sku,
            "name": name or entry["name"],
            "category": category or entry["category"],
            "price": 0.0,
            "stock": self.rng.choice((0, 3, 8, 15, 22, 37, 51, 64, 85, 140)),
            "price_history": [],
            "sibling": entry["sibling"] if entry else None,
        }
        start = self.draw_price(low, high)
        changes = [(random_day(self.rng, HISTORY_START, HISTORY_END), start)]
        if self.rng.random() < 0.5:
            changes.append(
                (
                    random_day(
                        self.rng, HISTORY_END + timedelta(days=14), TODAY - timedelta(days=5)
                    ),
                    max(500, start + self.rng.choice((-1, 1)) * self.rng.randint(2, 15) * 100),
                )
            )
        self.set_history(product, changes)
        self.products.append(product)
        return product

    def add_sibling(self, product: dict[str, Any]) -> dict[str, Any]:
        """A similarly named product with a look-alike SKU: the distractor next to `product`."""
        name = product.get("sibling") or f"{product['name']} Plus"
        return self.add_product(name=name, category=product["category"], near_sku=product["sku"])

    # ------------------------------------------------------------------- users

    def add_user(
        self,
        last_name: str | None = None,
        address: str | None = None,
        phone_area: str | None = None,
    ) -> dict[str, Any]:
        """A customer; passing a last name and address makes a household member."""
        rng = self.rng
        first = self._first_names.pop()
        last = last_name or self._last_names.pop()
        place = rng.choice(WORDS["places"])
        handle = f"{first}.{last}".lower().replace("'", "")
        user = {
            "user_id": self._unique(lambda: f"USR-{rng.randint(1, 999):03d}"),
            "name": f"{first} {last}",
            "email": self._unique(lambda: f"{handle}@{rng.choice(WORDS['email_domains'])}"),
            "phone": f"+1-{phone_area or place['area_code']}-555-01{rng.randint(0, 99):02d}",
            "tier": rng.choice(WORDS["tiers"]),
            "address": address
            or (
                f"{rng.randint(10, 2999)} {rng.choice(WORDS['streets'])}, "
                f"{place['city']}, {place['state']} {place['zip']}"
            ),
            "member_since": random_day(rng, date(2019, 1, 1), date(2023, 12, 31)).isoformat(),
            "account_status": "active",
        }
        self.users.append(user)
        return user

    def add_household_member(self, user: dict[str, Any]) -> dict[str, Any]:
        """Someone with the same last name at the same address: easy to confuse with `user`."""
        return self.add_user(
            last_name=user["name"].split(" ", 1)[1],
            address=user["address"],
            phone_area=user["phone"].split("-")[1],
        )

    # ------------------------------------------------------------------ coupons

    def add_coupon(
        self,
        kind: str,
        eligible: Sequence[dict[str, Any]],
        percent: int | None = None,
        amount: int | None = None,
    ) -> dict[str, Any]:
        """A coupon of `kind` covering the `eligible` products; `amount` is in cents."""
        value = str(percent) if percent is not None else f"{amount // 100}"
        stem = lambda: self.rng.choice(WORDS["coupon_stems"])  # noqa: E731
        code = self._unique(lambda: f"{stem()}{value}", fallback=lambda: f"{stem()}{value}X")
        description = WORDS["coupon_descriptions"][kind].format(
            percent=percent, amount=f"{dollars(amount or 0):.2f}"
        )
        coupon = {
            "code": code,
            "type": kind,
            "eligible_skus": [p["sku"] for p in eligible],
            "valid_from": "2024-01-01",
            "valid_until": "2024-12-31",
            "description": description,
        }
        coupon.update(
            {"percent": percent} if percent is not None else {"amount": dollars(amount or 0)}
        )
        self.coupons.append(coupon)
        return coupon

    # ------------------------------------------------------------------- orders

    def fair_lines(
        self, products: Sequence[dict[str, Any]], placed: date, sale_chance: float = 0.2
    ) -> list[Line]:
        """Lines billed correctly: the price in effect on `placed`, now and then on sale."""
        lines = []
        for product in products:
            unit = price_on(product, placed)
            if self.rng.random() < sale_chance:
                unit = unit * self.rng.randint(80, 95) // 100
            lines.append((product, self.rng.choice((1, 1, 1, 2)), unit))
        return lines

    def add_order(
        self,
        user: Mapping[str, Any],
        lines: Sequence[Line],
        placed: date,
        status: str,
        coupon: Mapping[str, Any] | None = None,
        total: int | None = None,
        return_eligible: bool | None = None,
    ) -> dict[str, Any]:
        """An order; `total` defaults to the correct charge (lines less the coupon)."""
        subtotal = sum(qty * unit for _, qty, unit in lines)
        charged = (
            subtotal - (coupon_cents(coupon, lines) if coupon else 0) if total is None else total
        )
        if return_eligible is None:
            return_eligible = status == "delivered" and TODAY - placed <= self.return_window
        refunds = []
        if status in ("returned", "cancelled"):
            reason = self.rng.choice(WORDS["refund_reasons"][status])
            refunds = [{"amount": dollars(charged), "reason": reason}]
        order = {
            "order_id": None,
            "user_id": user["user_id"],
            "status": status,
            "placed_at": placed.isoformat(),
            "items": [
                {"sku": product["sku"], "quantity": qty, "unit_price": dollars(unit)}
                for product, qty, unit in lines
            ],
            "coupon_code": coupon["code"] if coupon else None,
            "total_charged": dollars(charged),
            "return_eligible": return_eligible,
            "refunds": refunds,
        }
        self.orders.append(order)
        return order

    def add_filler_orders(
        self, user: Mapping[str, Any], count: int, coupon: Mapping[str, Any] | None = None
    ) -> None:
        """`count` correctly billed orders of `user` over the year, of any status."""
        for _ in range(count):
            status = self.rng.choice(FILLER_STATUSES)
            recent = status in ("shipped", "processing", "pending")
            placed = random_day(
                self.rng,
                TODAY - timedelta(days=9) if recent else FIRST_ORDER,
                TODAY - timedelta(days=1),
            )
            picked = self.rng.sample(self.products, self.rng.choice((1, 1, 2)))
            use = (
                coupon
                if coupon and any(p["sku"] in coupon["eligible_skus"] for p in picked)
                else None
            )
            self.add_order(user, self.fair_lines(picked, placed), placed, status, coupon=use)

    # ------------------------------------------------------------------ finish

    def number_orders(self) -> list[dict[str, Any]]:
        """Give the orders their ids, by date (once); return them in id order."""
        if self._numbered is not None:
            return self._numbered
        first_id = self.rng.randint(1000, 8900)
        by_date = sorted(enumerate(self.orders), key=lambda pair: (pair[1]["placed_at"], pair[0]))
        for offset, (_, order) in enumerate(by_date):
            order["order_id"] = f"ORD-{first_id + offset}"
            order["refunds"] = [
                {"refund_id": f"RF-{order['order_id']}-{number}", **refund}
                for number, refund in enumerate(order["refunds"], start=1)
            ]
        self._numbered = [order for _, order in by_date]
        return self._numbered

    def finish(self, **extra: Any) -> World:
        """Order ids by date, tables in id order, frozen into a `World` (`extra`: the other
        services' records and the services the world runs, `World.from_records`)."""
        orders = self.number_orders()
        products = [
            {key: value for key, value in product.items() if key != "sibling"}
            for product in sorted(self.products, key=lambda product: product["sku"])
        ]
        return World.from_records(
            SETTINGS,
            sorted(self.users, key=lambda user: user["user_id"]),
            products,
            self.coupons,
            orders,
            **extra,
        )
