"""What a write did to the world, as effects: the one vocabulary of intended writes.

An effect is `(key, value)`: the key names the record and the kind of change, the
value how much or to what. Additive effects accumulate over an episode (a refund's
cents, a stock adjustment, units reshipped, cases opened, captures reversed); the
others are set (an order's status, a shipment's address, a user's field):

    ("refund", order_id)                      cents refunded on the order     additive
    ("status", order_id)                      the order's status              set
    ("stock", sku)                            units added (negative: taken)   additive
    ("user", user_id, field)                  the field's new value           set
    ("reship", order_id, sku)                 units sent again                additive
    ("address", shipment_id)                  the shipment's address          set
    ("case", order_id, category, cents|None)  cases opened                    additive
    ("reversal", payment_id)                  captures reversed               additive

The rewards read effects off each write's answer (`effects_of_answer`, pure, per
step); the end-state check reads the same effects off the episode's world diff
(`effects_of_changes`, once). A task's intended writes are expectations over effects
(tasks.py `Expect`), so the rewards and the outcome check judge one thing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from ....mock_services import to_cents
from ....mock_services.paths import (
    CASES_OPEN,
    INVENTORY_UPDATE_STOCK,
    ORDERS_PROCESS_REFUND,
    ORDERS_UPDATE_STATUS,
    PAYMENTS_REFUND,
    SHIPMENTS_RESHIP,
    SHIPMENTS_UPDATE_ADDRESS,
    USERS_UPDATE,
)

EffectKey = tuple[Any, ...]
Effect = tuple[EffectKey, Any]
Effects = Mapping[EffectKey, Any]
ADDITIVE_KINDS = frozenset({"refund", "stock", "reship", "case", "reversal"})
NO_EFFECTS: Effects = MappingProxyType({})


def fold_text(value: Any) -> Any:
    """Text as an effect compares it: whitespace runs collapsed, case folded."""
    return " ".join(value.split()).casefold() if isinstance(value, str) else value


def _case(case: Mapping[str, Any]) -> Effect:
    amount = None if case["amount"] is None else to_cents(case["amount"])
    return ("case", case["order_id"], case["category"], amount), 1


def _reship(shipment: Mapping[str, Any], with_stock: bool) -> list[Effect]:
    """A replacement shipment's units; `with_stock`: and the stock they took (its answer
    says both; in a world diff the product's own stock change says the second)."""
    found: list[Effect] = []
    for item in shipment["items"]:
        found.append((("reship", shipment["order_id"], item["sku"]), item["quantity"]))
        if with_stock:
            found.append((("stock", item["sku"]), -item["quantity"]))
    return found


ANSWER_EFFECTS: Mapping[str, Callable[[Mapping[str, Any]], list[Effect]]] = MappingProxyType(
    {
        ORDERS_PROCESS_REFUND: lambda body: [
            (("refund", body["order_id"]), to_cents(body["refund"]["amount"]))
        ],
        ORDERS_UPDATE_STATUS: lambda body: [(("status", body["order_id"]), body["status"])],
        INVENTORY_UPDATE_STOCK: lambda body: [(("stock", body["sku"]), body["adjustment"])],
        USERS_UPDATE: lambda body: [
            (("user", body["user"]["user_id"], name), fold_text(body["user"][name]))
            for name in body["updated_fields"]
        ],
        SHIPMENTS_RESHIP: lambda body: _reship(body["shipment"], with_stock=True),
        SHIPMENTS_UPDATE_ADDRESS: lambda body: [
            (("address", body["shipment_id"]), fold_text(body["address"]))
        ],
        CASES_OPEN: lambda body: [_case(body["case"])],
        PAYMENTS_REFUND: lambda body: [(("reversal", body["payment"]["payment_id"]), 1)],
    }
)
"""Per write endpoint, the effects a successful answer reports."""


def effects_of_answer(endpoint: str, body: Mapping[str, Any]) -> list[Effect]:
    """The effects of one successful call (none for a read)."""
    read = ANSWER_EFFECTS.get(endpoint)
    return read(body) if read is not None else []


def accumulate(effects: Effects, new: Iterable[Effect]) -> Effects:
    """`effects` after `new`: additive kinds summed, the others set."""
    merged = dict(effects)
    for key, value in new:
        merged[key] = merged.get(key, 0) + value if key[0] in ADDITIVE_KINDS else value
    return MappingProxyType(merged)


def _refunded(refunds: Any) -> int:
    return sum(to_cents(refund["amount"]) for refund in refunds or ())


def effects_of_change(table: str, key: str, before: Mapping[str, Any], after: Any) -> list[Effect]:
    """The effects one changed or added record holds (`before` empty: the episode added it)."""
    if not before:
        if table == "shipments":
            return _reship(after, with_stock=False)
        return [_case(after)] if table == "cases" else []
    if table == "orders":
        found: list[Effect] = []
        if after["refunds"] != before["refunds"]:
            found.append(
                (("refund", key), _refunded(after["refunds"]) - _refunded(before["refunds"]))
            )
        if after["status"] != before["status"]:
            found.append((("status", key), after["status"]))
        return found
    if table == "products" and after["stock"] != before["stock"]:
        return [(("stock", key), after["stock"] - before["stock"])]
    if table == "users":
        return [
            (("user", key, name), fold_text(value))
            for name, value in after.items()
            if before.get(name) != value
        ]
    if table == "shipments" and after["address"] != before["address"]:
        return [(("address", key), fold_text(after["address"]))]
    if table == "payments" and after["status"] != before["status"]:
        return [(("reversal", key), 1)]
    return []


def change_key(table: str, key: str, field: str) -> EffectKey | None:
    """The effect key a changed field of an existing record belongs to."""
    return {
        ("orders", "refunds"): ("refund", key),
        ("orders", "status"): ("status", key),
        ("products", "stock"): ("stock", key),
        ("shipments", "address"): ("address", key),
        ("payments", "status"): ("reversal", key),
        ("payments", "reversal_reason"): ("reversal", key),
    }.get((table, field), ("user", key, field) if table == "users" else None)
