"""The data the three services serve: one frozen `World`, shared by every episode.

The seed data (data/servicebench.json) is loaded once at import into the frozen
`CANONICAL_WORLD`; a seeded task variant brings its own frozen `World`. Either is
shared, read-only, by every episode that plays it; an episode's writes never land
here but in its `ServiceState` (state.py). Of the package it imports only where the
data lies and how it is made read-only (read_only_json.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .. import DATA_DIR
from ..read_only_json import read_only
from .paths import SEED_SERVICES

DATA_PATH = DATA_DIR / "servicebench.json"


def _no_index() -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({})


@dataclass(frozen=True)
class World:
    """One complete, frozen data set for the three services, with its lookup indexes.

    The canonical world is the seed data; a task variant brings its own world. Either
    is built once and shared, read-only, by every episode that plays it.
    """

    tables: Mapping[str, Any]
    user_id_by_email: Mapping[str, str]
    order_ids_by_user: Mapping[str, tuple[str, ...]]
    shipment_ids_by_order: Mapping[str, tuple[str, ...]] = field(default_factory=_no_index)
    payment_ids_by_order: Mapping[str, tuple[str, ...]] = field(default_factory=_no_index)
    services: tuple[str, ...] = SEED_SERVICES
    """The services this world runs: the seed's three, or all six (shipments, payments and
    cases too). A call to another service is an unknown service, as if it did not exist."""

    @classmethod
    def from_records(
        cls,
        settings: Mapping[str, Any],
        users: list[dict[str, Any]],
        products: list[dict[str, Any]],
        coupons: list[dict[str, Any]],
        orders: list[dict[str, Any]],
        *,
        shipments: Sequence[dict[str, Any]] = (),
        payments: Sequence[dict[str, Any]] = (),
        services: tuple[str, ...] = SEED_SERVICES,
    ) -> World:
        """Key the records by id, check their foreign keys, freeze them and index them.

        `cases` starts empty: an episode opens cases (the other tables' writes edit records).
        """
        tables = {
            "settings": settings,
            "users": {user["user_id"]: user for user in users},
            "orders": {order["order_id"]: order for order in orders},
            "products": {product["sku"]: product for product in products},
            "coupons": {coupon["code"]: coupon for coupon in coupons},
            "shipments": {shipment["shipment_id"]: shipment for shipment in shipments},
            "payments": {payment["payment_id"]: payment for payment in payments},
            "cases": {},
        }
        for record in (*shipments, *payments):
            if record["order_id"] not in tables["orders"]:
                raise ValueError(f"{record}: unknown order {record['order_id']}")
        for order in orders:
            if order["user_id"] not in tables["users"]:
                raise ValueError(f"{order['order_id']}: unknown user {order['user_id']}")
            if order["coupon_code"] is not None and order["coupon_code"] not in tables["coupons"]:
                raise ValueError(f"{order['order_id']}: unknown coupon {order['coupon_code']}")
            for item in order["items"]:
                if item["sku"] not in tables["products"]:
                    raise ValueError(f"{order['order_id']}: unknown sku {item['sku']}")
        order_ids: dict[str, list[str]] = {user["user_id"]: [] for user in users}
        for order in orders:
            order_ids[order["user_id"]].append(order["order_id"])
        return cls(
            tables=read_only(tables),
            user_id_by_email=MappingProxyType(
                {user["email"].lower(): user["user_id"] for user in users}
            ),
            order_ids_by_user=MappingProxyType({uid: tuple(ids) for uid, ids in order_ids.items()}),
            shipment_ids_by_order=_index(shipments, "shipment_id"),
            payment_ids_by_order=_index(payments, "payment_id"),
            services=services,
        )


def _index(records: Sequence[Mapping[str, Any]], key: str) -> Mapping[str, tuple[str, ...]]:
    """Record ids by their order, in record order."""
    found: dict[str, list[str]] = {}
    for record in records:
        found.setdefault(record["order_id"], []).append(record[key])
    return MappingProxyType({order_id: tuple(ids) for order_id, ids in found.items()})


def _load_world(path: Path) -> World:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return World.from_records(
        read_only(raw["settings"]), raw["users"], raw["products"], raw["coupons"], raw["orders"]
    )


CANONICAL_WORLD: World = _load_world(DATA_PATH)
BASE: Mapping[str, Any] = CANONICAL_WORLD.tables
SETTINGS: Mapping[str, Any] = BASE["settings"]
USER_ID_BY_EMAIL: Mapping[str, str] = CANONICAL_WORLD.user_id_by_email
ORDER_IDS_BY_USER: Mapping[str, tuple[str, ...]] = CANONICAL_WORLD.order_ids_by_user
