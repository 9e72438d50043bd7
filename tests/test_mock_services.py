"""The three mock services: every endpoint's success and errors, routing, writes, resets."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

import mock_services
from mock_services import BASE, DATA_PATH, ENDPOINT_CATALOGUE, ServiceState, thaw

# The seed's endpoint tables: (service, path, method) -> {param: required}.
SEED_TABLE = {
    ("user", "/users/lookup", "GET"): {"email": False, "user_id": False},
    ("user", "/users/list", "GET"): {"page": False, "per_page": False},
    ("user", "/users/update", "POST"): {"user_id": True, "updates": True},
    ("order", "/orders/lookup", "GET"): {"order_id": True},
    ("order", "/orders/by-user", "GET"): {"user_id": True},
    ("order", "/orders/update-status", "POST"): {"order_id": True, "new_status": True},
    ("order", "/orders/process-refund", "POST"): {"order_id": True, "amount": True, "reason": True},
    ("inventory", "/inventory/lookup", "GET"): {"sku": True},
    ("inventory", "/inventory/check-stock", "GET"): {"sku": True},
    ("inventory", "/inventory/price-history", "GET"): {"sku": True},
    ("inventory", "/inventory/update-stock", "POST"): {"sku": True, "adjustment": True},
}


def call(state: ServiceState, service: str, path: str, method: str = "GET", **params: Any):
    return state.dispatch(service, path, method, params)


@pytest.fixture
def state() -> ServiceState:
    return ServiceState()


# ------------------------------------------------------------------ catalogue

def test_catalogue_is_exactly_the_seed_tables():
    found = {(row["service"], row["endpoint"], row["method"]):
             {name: spec["required"] for name, spec in row["params"].items()}
             for row in ENDPOINT_CATALOGUE}
    assert found == SEED_TABLE
    assert len(ENDPOINT_CATALOGUE) == 11


def test_catalogue_is_derived_from_the_handlers():
    for entry, row in zip(mock_services.ENDPOINTS, ENDPOINT_CATALOGUE):
        assert row["description"] and row["description"] in " ".join(entry.handler.__doc__.split())
        for name, spec in row["params"].items():
            assert spec["description"], f"{entry.path} {name} has no description"
    per_page = ENDPOINT_CATALOGUE[1]["params"]["per_page"]
    assert per_page["type"] == "integer" and per_page["default"] == 5


# ------------------------------------------------------------------- routing

@pytest.mark.parametrize("service, path, method, status, hint", [
    ("billing", "/users/lookup", "GET", 404, "user, order, inventory"),
    ("order", "/orders/cancel", "POST", 404, "/orders/process-refund"),
    ("order", "/users/lookup", "GET", 404, "belongs to service 'user'"),
    ("user", "/users/lookup", "POST", 405, "use GET"),
    ("order", "/orders/process-refund", "DELETE", 405, "use POST"),
])
def test_unknown_routes_say_what_exists(state, service, path, method, status, hint):
    code, body = call(state, service, path, method, user_id="USR-001")
    assert code == status and hint in body["error"]


def test_method_and_path_spelling_is_normalised(state):
    assert call(state, " User ", "users/lookup", "get", user_id="usr-001")[0] == 200


def test_unknown_extra_params_are_rejected(state):
    code, body = call(state, "order", "/orders/lookup", order_id="ORD-1005", verbose=True)
    assert code == 400 and "verbose" in body["error"] and "order_id" in body["error"]


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


# -------------------------------------------------------------- UserService

def test_users_lookup_by_email_or_id(state):
    code, user = call(state, "user", "/users/lookup", email="Jane.Doe@Example.com")
    assert code == 200 and user["user_id"] == "USR-001" and user["name"] == "Jane Doe"
    assert call(state, "user", "/users/lookup", user_id="USR-003")[1]["email"] == "priya.raman@example.com"
    both = call(state, "user", "/users/lookup", user_id="USR-001", email="jane.doe@example.com")
    assert both == (200, user)


@pytest.mark.parametrize("params, status", [
    ({}, 400),
    ({"email": "nobody@example.com"}, 404),
    ({"user_id": "USR-999"}, 404),
    ({"user_id": "USR-002", "email": "jane.doe@example.com"}, 404),
    ({"user_id": 1}, 400),
    ({"email": ""}, 400),
])
def test_users_lookup_errors(state, params, status):
    assert state.dispatch("user", "/users/lookup", "GET", params)[0] == status


def test_users_list_paginates_at_most_five(state):
    seen: list[str] = []
    first = call(state, "user", "/users/list")[1]
    assert first["per_page"] == 5 and first["total_users"] == len(BASE["users"])
    for page in range(1, first["total_pages"] + 1):
        code, body = call(state, "user", "/users/list", page=page)
        assert code == 200 and 1 <= len(body["users"]) <= 5
        seen += [user["user_id"] for user in body["users"]]
    assert seen == sorted(BASE["users"])
    assert call(state, "user", "/users/list", page=first["total_pages"] + 1)[1]["users"] == []
    assert len(call(state, "user", "/users/list", page="2", per_page=2)[1]["users"]) == 2


@pytest.mark.parametrize("params", [{"page": 0}, {"per_page": 6}, {"per_page": 0}, {"page": "two"},
                                    {"page": 1.5}, {"page": True}])
def test_users_list_errors(state, params):
    assert state.dispatch("user", "/users/list", "GET", params)[0] == 400


def test_users_update_persists(state):
    code, body = call(state, "user", "/users/update", "POST", user_id="USR-003",
                      updates={"phone": "+1-408-555-0000", "notes": "SAVE20 billing case"})
    assert code == 200 and body["updated_fields"] == ["phone", "notes"]
    assert call(state, "user", "/users/lookup", user_id="USR-003")[1]["phone"] == "+1-408-555-0000"


def test_users_update_of_email_moves_the_email_index(state):
    call(state, "user", "/users/update", "POST", user_id="USR-001", updates={"email": "jane@new.example"})
    assert call(state, "user", "/users/lookup", email="jane.doe@example.com")[0] == 404
    assert call(state, "user", "/users/lookup", email="jane@new.example")[1]["user_id"] == "USR-001"


@pytest.mark.parametrize("params, status", [
    ({"user_id": "USR-001"}, 400),
    ({"updates": {"name": "X"}}, 400),
    ({"user_id": "USR-001", "updates": {}}, 400),
    ({"user_id": "USR-001", "updates": "name=X"}, 400),
    ({"user_id": "USR-001", "updates": {"tier": "platinum"}}, 400),
    ({"user_id": "USR-001", "updates": {"name": ""}}, 400),
    ({"user_id": "USR-001", "updates": {"email": "not-an-email"}}, 400),
    ({"user_id": "USR-001", "updates": {"email": "john.doe@example.com"}}, 409),
    ({"user_id": "USR-404", "updates": {"name": "X"}}, 404),
])
def test_users_update_errors_change_nothing(state, params, status):
    assert state.dispatch("user", "/users/update", "POST", params)[0] == status
    assert not state.has_writes


# ------------------------------------------------------------- OrderService

def test_orders_lookup_joins_items_and_coupon(state):
    code, order = call(state, "order", "/orders/lookup", order_id="ORD-1005")
    assert code == 200 and order["user_id"] == "USR-001" and order["return_eligible"] is True
    assert {"sku": "SKU-445", "name": "Portable Bluetooth Speaker", "quantity": 1,
            "unit_price": 49.99} in order["items"]
    assert order["coupon_applied"] is None and order["refunds"] == [] and order["refunded_total"] == 0
    assert call(state, "order", "/orders/lookup", order_id="ORD-1009")[1]["coupon_applied"]["code"] == "SAVE20"


@pytest.mark.parametrize("params, status", [({}, 400), ({"order_id": "ORD-9999"}, 404), ({"order_id": 1005}, 400)])
def test_orders_lookup_errors(state, params, status):
    assert state.dispatch("order", "/orders/lookup", "GET", params)[0] == status


def test_orders_by_user_lists_summaries(state):
    code, body = call(state, "order", "/orders/by-user", user_id="USR-001")
    ids = [order["order_id"] for order in body["orders"]]
    assert code == 200 and "ORD-1005" in ids and body["total_orders"] == len(ids)
    assert all(BASE["orders"][oid]["user_id"] == "USR-001" for oid in ids)
    assert "items" not in body["orders"][0] and "status" in body["orders"][0]
    assert call(state, "order", "/orders/by-user", user_id="USR-404")[0] == 404
    assert call(state, "order", "/orders/by-user")[0] == 400


def test_update_status_persists(state):
    code, body = call(state, "order", "/orders/update-status", "POST", order_id="ORD-1005", new_status="Returned")
    assert code == 200 and body == {"order_id": "ORD-1005", "previous_status": "delivered", "status": "returned"}
    assert call(state, "order", "/orders/lookup", order_id="ORD-1005")[1]["status"] == "returned"


@pytest.mark.parametrize("params, status", [
    ({"order_id": "ORD-1005", "new_status": "teleported"}, 400),
    ({"order_id": "ORD-1005"}, 400),
    ({"order_id": "ORD-1005", "new_status": "pending"}, 409),
    ({"order_id": "ORD-1005", "new_status": "delivered"}, 409),
    ({"order_id": "ORD-9999", "new_status": "returned"}, 404),
])
def test_update_status_errors(state, params, status):
    assert state.dispatch("order", "/orders/update-status", "POST", params)[0] == status
    assert not state.has_writes


def test_refunds_are_recorded_and_several_allowed_up_to_the_charge(state):
    charged = BASE["orders"]["ORD-1005"]["total_charged"]
    code, body = call(state, "order", "/orders/process-refund", "POST", order_id="ORD-1005",
                      amount=49.99, reason="damaged")
    assert code == 200 and body["refund"] == {"refund_id": "RF-ORD-1005-1", "amount": 49.99, "reason": "damaged"}
    rest = round(charged - 49.99, 2)
    code, body = call(state, "order", "/orders/process-refund", "POST", order_id="ORD-1005",
                      amount=str(rest), reason="goodwill")
    assert code == 200 and body["refunded_total"] == charged
    order = call(state, "order", "/orders/lookup", order_id="ORD-1005")[1]
    assert [refund["amount"] for refund in order["refunds"]] == [49.99, rest]
    assert order["refunded_total"] == charged
    code, body = call(state, "order", "/orders/process-refund", "POST", order_id="ORD-1005",
                      amount=0.01, reason="one cent more")
    assert code == 400 and "exceeds" in body["error"]


@pytest.mark.parametrize("params, status", [
    ({"order_id": "ORD-1005", "amount": -5, "reason": "r"}, 400),
    ({"order_id": "ORD-1005", "amount": 0, "reason": "r"}, 400),
    ({"order_id": "ORD-1005", "amount": "lots", "reason": "r"}, 400),
    ({"order_id": "ORD-1005", "amount": 1.005, "reason": "r"}, 400),
    ({"order_id": "ORD-1005", "amount": 90.00, "reason": "r"}, 400),
    ({"order_id": "ORD-1005", "amount": 5}, 400),
    ({"order_id": "ORD-1005", "reason": "r"}, 400),
    ({"order_id": "ORD-1011", "amount": 1, "reason": "already refunded in full"}, 400),
    ({"order_id": "ORD-9999", "amount": 1, "reason": "r"}, 404),
])
def test_refund_errors(state, params, status):
    assert state.dispatch("order", "/orders/process-refund", "POST", params)[0] == status
    assert not state.has_writes


# --------------------------------------------------------- InventoryService

def test_inventory_reads(state):
    assert call(state, "inventory", "/inventory/lookup", sku="sku-445")[1] == {
        "sku": "SKU-445", "name": "Portable Bluetooth Speaker", "category": "electronics",
        "price": 49.99, "stock": BASE["products"]["SKU-445"]["stock"]}
    levels = {sku: call(state, "inventory", "/inventory/check-stock", sku=sku)[1]["stock_status"]
              for sku in ("SKU-733", "SKU-846", "SKU-445")}
    assert levels == {"SKU-733": "out_of_stock", "SKU-846": "low_stock", "SKU-445": "in_stock"}
    history = call(state, "inventory", "/inventory/price-history", sku="SKU-555")[1]
    assert history["history"][-1]["price"] == history["current_price"] == 123.75
    for path in ("/inventory/lookup", "/inventory/check-stock", "/inventory/price-history"):
        assert call(state, "inventory", path, sku="SKU-000")[0] == 404
        assert call(state, "inventory", path)[0] == 400


def test_update_stock_persists(state):
    before = BASE["products"]["SKU-445"]["stock"]
    code, body = call(state, "inventory", "/inventory/update-stock", "POST", sku="SKU-445", adjustment=-4)
    assert code == 200 and body["stock"] == before - 4
    assert call(state, "inventory", "/inventory/check-stock", sku="SKU-445")[1]["stock"] == before - 4


@pytest.mark.parametrize("params, status", [
    ({"sku": "SKU-445", "adjustment": 0}, 400),
    ({"sku": "SKU-445", "adjustment": "ten"}, 400),
    ({"sku": "SKU-445", "adjustment": 2.5}, 400),
    ({"sku": "SKU-445"}, 400),
    ({"sku": "SKU-733", "adjustment": -1}, 409),
    ({"sku": "SKU-000", "adjustment": 1}, 404),
])
def test_update_stock_errors(state, params, status):
    assert state.dispatch("inventory", "/inventory/update-stock", "POST", params)[0] == status
    assert not state.has_writes


# ------------------------------------------------------ state and seed data

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


def test_foreign_keys_hold():
    for order in BASE["orders"].values():
        assert order["user_id"] in BASE["users"]
        assert all(item["sku"] in BASE["products"] for item in order["items"])
    jane = [uid for uid, user in BASE["users"].items() if user["email"] == "jane.doe@example.com"]
    assert jane == ["USR-001"]
    assert 10 <= len(BASE["users"]) and 20 <= len(BASE["orders"]) and 15 <= len(BASE["products"])


def _coupon_cents(order) -> int:
    coupon = BASE["coupons"][order["coupon_code"]]
    if coupon["type"] == "fixed_amount_off":
        return round(coupon["amount"] * 100)
    eligible = coupon["eligible_skus"]
    list_cents = sum(item["quantity"] * round(BASE["products"][item["sku"]]["price"] * 100)
                     for item in order["items"] if item["sku"] in eligible)
    return round(list_cents * coupon["percent"] / 100)


def test_every_charge_matches_its_items_and_coupon_but_the_billing_error():
    mismatched = {}
    for order_id, order in BASE["orders"].items():
        lines = sum(item["quantity"] * round(item["unit_price"] * 100) for item in order["items"])
        coupon = _coupon_cents(order) if order["coupon_code"] else 0
        charged = round(order["total_charged"] * 100)
        if charged != lines - coupon:
            mismatched[order_id] = (charged, lines, coupon)
    assert list(mismatched) == ["ORD-1009"]
    charged, lines, coupon = mismatched["ORD-1009"]
    assert charged == lines + coupon  # the coupon was added instead of deducted
