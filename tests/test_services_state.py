"""services/state.py: dispatch never raises, and an episode's writes stay its own."""

from __future__ import annotations

import json
import random

import pytest
from services_support import call

from services import BASE, DATA_PATH, ENDPOINT_CATALOGUE, ServiceState, thaw


@pytest.fixture
def state() -> ServiceState:
    return ServiceState()


def test_dispatch_never_raises_nor_fails_internally():
    rng = random.Random(7)
    values = [None, "", "  ", "x", "USR-001", "ORD-1005", "SKU-445", "returned", 0, -3, 2, 1.5,
              49.99, "49.99", "abc", True, [], {}, {"name": "A"}, {"bogus": 1}, float("nan")]
    for _ in range(3000):
        state = ServiceState()
        row = rng.choice(ENDPOINT_CATALOGUE)
        names = list(row["params"]) + ["extra"]
        params = {name: rng.choice(values) for name in rng.sample(names, rng.randint(0, len(names)))}
        code, body = state.dispatch(row["service"], row["endpoint"], row["method"], params)
        assert code in (200, 400, 404, 409), (row["endpoint"], params, body)
        assert isinstance(body, dict) and (code == 200 or body["error"])


def _snapshot(state: ServiceState) -> list:
    reads = [("user", "/users/lookup", {"user_id": uid}) for uid in BASE["users"]]
    reads += [("order", "/orders/lookup", {"order_id": oid}) for oid in BASE["orders"]]
    reads += [("inventory", "/inventory/price-history", {"sku": sku}) for sku in BASE["products"]]
    reads += [("inventory", "/inventory/lookup", {"sku": sku}) for sku in BASE["products"]]
    return [state.dispatch(service, path, "GET", params) for service, path, params in reads]


def test_writes_stay_in_their_episode_and_a_fresh_state_is_the_initial_data():
    initial = _snapshot(ServiceState())
    dirty = ServiceState()
    call(dirty, "order", "/orders/process-refund", "POST", order_id="ORD-1009", amount=10, reason="r")
    call(dirty, "order", "/orders/update-status", "POST", order_id="ORD-1005", new_status="returned")
    call(dirty, "inventory", "/inventory/update-stock", "POST", sku="SKU-101", adjustment=5)
    call(dirty, "user", "/users/update", "POST", user_id="USR-002", updates={"name": "M. Webb"})
    assert _snapshot(dirty) != initial
    assert _snapshot(ServiceState()) == initial
    assert thaw(BASE) == _keyed(json.loads(DATA_PATH.read_text()))


def _keyed(raw: dict) -> dict:
    keys = {"users": "user_id", "orders": "order_id", "products": "sku", "coupons": "code"}
    return {"settings": raw["settings"],
            **{table: {row[key]: row for row in raw[table]} for table, key in keys.items()}}


def test_shared_data_is_read_only_and_responses_are_copies(state):
    with pytest.raises(TypeError):
        BASE["orders"]["ORD-1005"]["status"] = "lost"  # type: ignore[index]
    order = call(state, "order", "/orders/lookup", order_id="ORD-1005")[1]
    order["items"].clear()
    assert call(state, "order", "/orders/lookup", order_id="ORD-1005")[1]["items"]
    assert not state.has_writes
