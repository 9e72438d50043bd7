"""mock_services/catalogue.py: the endpoint table is the seed's, and routing says what exists."""

from __future__ import annotations

import pytest
from mock_services_support import call

from servicebench_support_queue.mock_services import (
    ENDPOINT_CATALOGUE,
    FULL_SURFACE,
    IDEMPOTENCY_KEY,
    MAX_KEY_CHARS,
    SEED_CATALOGUE,
    SEED_SURFACE,
    ServiceState,
    surface,
)

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


@pytest.fixture
def state() -> ServiceState:
    return ServiceState()


def _table(catalogue) -> dict:
    return {
        (row["service"], row["endpoint"], row["method"]): {
            name: spec["required"] for name, spec in row["params"].items()
        }
        for row in catalogue
    }


def test_the_seed_surface_is_exactly_the_seed_tables():
    assert _table(SEED_CATALOGUE) == SEED_TABLE
    assert len(SEED_CATALOGUE) == 11 and SEED_SURFACE.services == ("user", "order", "inventory")


def test_the_full_surface_is_the_seed_tables_then_the_other_services():
    assert list(ENDPOINT_CATALOGUE[:11]) == list(SEED_CATALOGUE)
    assert FULL_SURFACE.services[3:] == ("shipment", "payment", "case")
    assert {
        key: value
        for key, value in _table(ENDPOINT_CATALOGUE).items()
        if key[0] in ("shipment", "payment", "case")
    } == {
        ("shipment", "/shipments/by-order", "GET"): {"order_id": True},
        ("shipment", "/shipments/update-address", "POST"): {"shipment_id": True, "address": True},
        ("shipment", "/shipments/reship", "POST"): {
            "order_id": True,
            "sku": True,
            "quantity": True,
            "reason": True,
        },
        ("payment", "/payments/by-order", "GET"): {"order_id": True},
        ("payment", "/payments/refund", "POST"): {"payment_id": True, "reason": True},
        ("case", "/cases/by-order", "GET"): {"order_id": True},
        ("case", "/cases/open", "POST"): {
            "order_id": True,
            "category": True,
            "summary": True,
            "amount": False,
        },
    }


def test_a_seed_world_does_not_run_the_other_services(state):
    code, body = call(state, "case", "/cases/open", "POST", order_id="ORD-1005")
    assert code == 404 and body["error"] == (
        "unknown service 'case'; services: user, order, inventory"
    )


@pytest.mark.parametrize(
    "service, path, method, status, hint",
    [
        ("billing", "/users/lookup", "GET", 404, "user, order, inventory"),
        ("order", "/orders/cancel", "POST", 404, "/orders/process-refund"),
        ("order", "/users/lookup", "GET", 404, "belongs to service 'user'"),
        ("user", "/users/lookup", "POST", 405, "use GET"),
        ("order", "/orders/process-refund", "DELETE", 405, "use POST"),
    ],
)
def test_unknown_routes_say_what_exists(state, service, path, method, status, hint):
    code, body = call(state, service, path, method, user_id="USR-001")
    assert code == status and hint in body["error"]


def test_method_and_path_spelling_is_normalised(state):
    assert call(state, " User ", "users/lookup", "get", user_id="usr-001")[0] == 200


def test_a_keyed_surface_shows_the_key_on_every_write_and_nothing_else_changes():
    for services in (SEED_SURFACE.services, FULL_SURFACE.services):
        plain, keyed = surface(services), surface(services, keyed=True)
        assert plain.keyed is False and keyed.keyed is True
        assert plain.endpoints == keyed.endpoints and plain.routes == keyed.routes
        for before, after in zip(plain.catalogue, keyed.catalogue, strict=True):
            assert IDEMPOTENCY_KEY not in before["params"]
            extra = {
                name: row for name, row in after["params"].items() if name not in before["params"]
            }
            if before["method"] == "GET":
                assert after == before
                continue
            assert {**after, "params": before["params"]} == before
            assert list(extra) == [IDEMPOTENCY_KEY] and list(after["params"])[-1] == IDEMPOTENCY_KEY
            row = extra[IDEMPOTENCY_KEY]
            assert row["type"] == "string" and row["required"] is False
            assert row["maxLength"] == MAX_KEY_CHARS and "409" in row["description"]


def test_a_world_s_state_is_keyed_only_when_asked_and_accepts_the_key_either_way():
    for keyed in (False, True):
        state = ServiceState(keyed=keyed)
        assert state.surface is surface(SEED_SURFACE.services, keyed)
        assert state.fork().surface is state.surface
        params = {"order_id": "ORD-1005", "amount": 1, "reason": "x", "idempotency_key": "k"}
        assert call(state, "order", "/orders/process-refund", "POST", **params)[0] == 200
        code, body = call(state, "order", "/orders/process-refund", "POST", bogus=1)
        shown = "accepted: order_id, amount, reason" + (", idempotency_key" if keyed else "")
        assert code == 400 and body["error"].endswith(shown)
