"""mock_services/state.py: dispatch never raises, and an episode's writes stay its own."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mock_services_support import call

from servicebench_support_queue.mock_services import (
    BASE,
    DATA_PATH,
    ENDPOINT_CATALOGUE,
    ServiceState,
    thaw,
)


@pytest.fixture
def state() -> ServiceState:
    return ServiceState()


def test_dispatch_never_raises_nor_fails_internally():
    rng = random.Random(7)
    values = [
        None,
        "",
        "  ",
        "x",
        "USR-001",
        "ORD-1005",
        "SKU-445",
        "returned",
        0,
        -3,
        2,
        1.5,
        49.99,
        "49.99",
        "abc",
        True,
        [],
        {},
        {"name": "A"},
        {"bogus": 1},
        float("nan"),
    ]
    for _ in range(3000):
        state = ServiceState()
        row = rng.choice(ENDPOINT_CATALOGUE)
        names = list(row["params"]) + ["extra"]
        params = {
            name: rng.choice(values) for name in rng.sample(names, rng.randint(0, len(names)))
        }
        code, body = state.dispatch(row["service"], row["endpoint"], row["method"], params)
        assert code in (200, 400, 404, 409), (row["endpoint"], params, body)
        assert isinstance(body, dict) and (code == 200 or body["error"])


PLAIN = (
    st.none()
    | st.booleans()
    | st.text(max_size=12)
    | st.sampled_from(
        [
            "USR-001",
            "usr-003 ",
            "ORD-1005",
            "SKU-445",
            "jane.doe@example.com",
            "returned",
            "1",
            "-7",
            "49.99",
            "1e3",
            "nan",
            "inf",
            "1_000",
            "\u0661\u0662",
            "9" * 5000,
            "0." + "0" * 400 + "1",
        ]
    )
)
NUMBERS = (
    st.integers()
    | st.integers(-(10**5000), 10**5000)
    | st.floats()
    | st.sampled_from([0, -0.0, 1e-300, 0.005, 0.01, 49.99, 99.0, 10**6, 10**6 + 1, 2**63, 1e308])
)
VALUES = st.recursive(
    PLAIN | NUMBERS,
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(
            st.text(max_size=8) | st.sampled_from(["name", "email", "notes"]), c, max_size=3
        )
    ),
    max_leaves=8,
)


@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(ENDPOINT_CATALOGUE), st.data())
def test_no_parameter_value_reaches_the_last_resort(row: dict, data: st.DataObject) -> None:
    """Any value for any parameter is a 2xx or a 4xx naming it, never the 500 of a bug; and the answer
    is plain JSON (a poisoned response would poison the episode's state)."""
    names = st.sampled_from([*row["params"], "extra"])
    params = data.draw(st.dictionaries(names, VALUES, max_size=4))
    code, body = ServiceState().dispatch(row["service"], row["endpoint"], row["method"], params)
    assert code in (200, 400, 404, 409), (row["endpoint"], params, body)
    assert code == 200 or body["error"]
    json.dumps(body, allow_nan=False).encode("utf-8")


def _snapshot(state: ServiceState) -> list:
    reads = [("user", "/users/lookup", {"user_id": uid}) for uid in BASE["users"]]
    reads += [("order", "/orders/lookup", {"order_id": oid}) for oid in BASE["orders"]]
    reads += [("inventory", "/inventory/price-history", {"sku": sku}) for sku in BASE["products"]]
    reads += [("inventory", "/inventory/lookup", {"sku": sku}) for sku in BASE["products"]]
    return [state.dispatch(service, path, "GET", params) for service, path, params in reads]


def test_writes_stay_in_their_episode_and_a_fresh_state_is_the_initial_data():
    initial = _snapshot(ServiceState())
    dirty = ServiceState()
    call(
        dirty, "order", "/orders/process-refund", "POST", order_id="ORD-1009", amount=10, reason="r"
    )
    call(
        dirty, "order", "/orders/update-status", "POST", order_id="ORD-1005", new_status="returned"
    )
    call(dirty, "inventory", "/inventory/update-stock", "POST", sku="SKU-101", adjustment=5)
    call(dirty, "user", "/users/update", "POST", user_id="USR-002", updates={"name": "M. Webb"})
    assert _snapshot(dirty) != initial
    assert _snapshot(ServiceState()) == initial
    assert thaw(BASE) == _keyed(json.loads(DATA_PATH.read_text()))


def _keyed(raw: dict) -> dict:
    keys = {"users": "user_id", "orders": "order_id", "products": "sku", "coupons": "code"}
    return {
        "settings": raw["settings"],
        **{table: {row[key]: row for row in raw[table]} for table, key in keys.items()},
        **{table: {} for table in ("shipments", "payments", "cases")},  # the seed has none
    }


def test_shared_data_is_read_only_and_responses_are_copies(state):
    with pytest.raises(TypeError):
        BASE["orders"]["ORD-1005"]["status"] = "lost"  # type: ignore[index]
    order = call(state, "order", "/orders/lookup", order_id="ORD-1005")[1]
    order["items"].clear()
    assert call(state, "order", "/orders/lookup", order_id="ORD-1005")[1]["items"]
    assert not state.has_writes
