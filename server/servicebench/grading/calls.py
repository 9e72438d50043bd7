"""ServiceBench call identity: a call is what it resolved to, not how it was spelled.

The services accept `ord-1005`, `" ORD-1005"` and `Ord-1005` for ORD-1005, look
emails up case-insensitively, and a user can be looked up by email or by id. So
the reward rules do not compare the parameters a policy typed: they compare the
*resolved call*, `(endpoint, resource)`, read off the service's answer, where the
services have already normalised every id:

* a read is the record it returned (`/users/lookup` by email or by id: the user;
  `/users/list`: the page and page size);
* a write is the record it changed and the effect it had (a refund: the order and
  the amount in cents; a status change: the order and the new status; a stock
  change: the SKU and the adjustment; a user update: the user and the fields set,
  with their values; a reship: the order, SKU and units; a new address: the shipment
  and the address; a case: the order, category and amount; a reversal: the payment);
* free text is no part of the effect (`FREE_TEXT`: a refund's, reship's or reversal's
  `reason`, a case's `summary`, a user's `notes`), so re-sending a write with new
  wording is the same call again;
* a failed call resolved nothing: it is its route plus its parameters, strings
  stripped and case-folded, free text dropped;
* a write's `idempotency_key` is no part of it either: a write re-sent under another
  key (or none) is the same call, and one answered from its key's record (not applied
  again, mock_services/state.py) is the same call as the first.

Two calls with one identity are duplicates, whatever their spelling.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Hashable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from ....mock_services import ENDPOINTS, IDEMPOTENCY_KEY, normalize_route, to_cents
from ....mock_services.paths import (
    CASES_BY_ORDER,
    CASES_OPEN,
    INVENTORY_CHECK_STOCK,
    INVENTORY_LOOKUP,
    INVENTORY_PRICE_HISTORY,
    INVENTORY_UPDATE_STOCK,
    ORDERS_BY_USER,
    ORDERS_LOOKUP,
    ORDERS_PROCESS_REFUND,
    ORDERS_UPDATE_STATUS,
    PAYMENTS_BY_ORDER,
    PAYMENTS_REFUND,
    SHIPMENTS_BY_ORDER,
    SHIPMENTS_RESHIP,
    SHIPMENTS_UPDATE_ADDRESS,
    USERS_LIST,
    USERS_LOOKUP,
    USERS_UPDATE,
)

Body = Mapping[str, Any]
CallKey = tuple[Hashable, ...]

FREE_TEXT: Mapping[str, frozenset[str]] = MappingProxyType(
    {entry.path: entry.wording for entry in ENDPOINTS if entry.wording}
)
"""Per endpoint, the parameters (or `updates` fields) that are wording, not effect: those
its declaration marks `Wording` (mock_services/registry.py)."""
NOT_EFFECT: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        entry.path: FREE_TEXT.get(entry.path, frozenset()) | {IDEMPOTENCY_KEY}
        for entry in ENDPOINTS
        if entry.writes
    }
)
"""Per write, the top-level parameters a failed call's identity leaves out: its free text
and its idempotency key."""


class ApiCall(NamedTuple):
    """One call, normalised the way the services route it.

    This and the reward module's `Progress` and `StepOutcome` are named tuples:
    immutable, and made on every step, where a frozen dataclass costs several times
    more to build.
    """

    service: str
    endpoint: str
    method: str
    params: Mapping[str, Any] = MappingProxyType({})

    @classmethod
    def of(cls, service: str, endpoint: str, method: str, params: Mapping[str, Any]) -> ApiCall:
        return cls(*normalize_route(service, endpoint, method), params)

    @property
    def route(self) -> tuple[str, str]:
        return self.service, self.endpoint


def _fold(value: Any) -> Any:
    """A value as the identity compares it: strings stripped and case-folded, recursively."""
    if isinstance(value, str):
        return value.strip().casefold()
    if isinstance(value, Mapping):
        return {str(key).strip().casefold(): _fold(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_fold(item) for item in value]
    return value


def _user_update(body: Body) -> Hashable:
    """The user and the fields set, with their values; free-text fields by name only."""
    user = body["user"]
    free = FREE_TEXT[USERS_UPDATE]
    return user["user_id"], tuple(
        sorted(
            (name, None if name in free else _fold(user[name])) for name in body["updated_fields"]
        )
    )


RESOLVED: Mapping[str, Callable[[Body], Hashable]] = MappingProxyType(
    {
        USERS_LOOKUP: lambda body: body["user_id"],
        USERS_LIST: lambda body: (body["page"], body["per_page"]),
        USERS_UPDATE: _user_update,
        ORDERS_LOOKUP: lambda body: body["order_id"],
        ORDERS_BY_USER: lambda body: body["user_id"],
        ORDERS_UPDATE_STATUS: lambda body: (body["order_id"], body["status"]),
        ORDERS_PROCESS_REFUND: lambda body: (body["order_id"], to_cents(body["refund"]["amount"])),
        INVENTORY_LOOKUP: lambda body: body["sku"],
        INVENTORY_CHECK_STOCK: lambda body: body["sku"],
        INVENTORY_PRICE_HISTORY: lambda body: body["sku"],
        INVENTORY_UPDATE_STOCK: lambda body: (body["sku"], body["adjustment"]),
        SHIPMENTS_BY_ORDER: lambda body: body["order_id"],
        SHIPMENTS_UPDATE_ADDRESS: lambda body: (body["shipment_id"], _fold(body["address"])),
        SHIPMENTS_RESHIP: lambda body: (
            body["shipment"]["order_id"],
            body["shipment"]["items"][0]["sku"],
            body["shipment"]["items"][0]["quantity"],
        ),
        PAYMENTS_BY_ORDER: lambda body: body["order_id"],
        PAYMENTS_REFUND: lambda body: body["payment"]["payment_id"],
        CASES_BY_ORDER: lambda body: body["order_id"],
        CASES_OPEN: lambda body: (
            body["case"]["order_id"],
            body["case"]["category"],
            None if body["case"]["amount"] is None else to_cents(body["case"]["amount"]),
        ),
    }
)
"""Per endpoint, the resource (and, for a write, the effect) a successful answer names."""


def _failed_key(call: ApiCall) -> CallKey:
    free = FREE_TEXT.get(call.endpoint, frozenset())
    dropped = NOT_EFFECT.get(call.endpoint, free)
    params = call.params if isinstance(call.params, Mapping) else {"": call.params}
    kept = {name: value for name, value in params.items() if name not in dropped}
    if call.endpoint == USERS_UPDATE and isinstance(kept.get("updates"), Mapping):
        kept["updates"] = {
            name: None if name in free else value for name, value in kept["updates"].items()
        }
    text = json.dumps(_fold(kept), sort_keys=True, default=repr)
    # The episode remembers every identity it has seen: a digest, not the parameters again.
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    return "failed", call.service, call.endpoint, call.method, digest


def call_identity(call: ApiCall, status: int, body: Body) -> CallKey:
    """The resolved call: `(endpoint, resource)` for a success, the folded call for a failure."""
    if status == 200:
        resolve = RESOLVED.get(call.endpoint)
        if resolve is not None:
            return call.endpoint, resolve(body)
    return _failed_key(call)
