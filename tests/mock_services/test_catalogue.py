"""mock_services/catalogue.py: the endpoint table is the seed's, and routing says what exists."""

from __future__ import annotations

import pytest
from mock_services_support import call

from servicebench_support_queue.mock_services import ENDPOINT_CATALOGUE, ServiceState

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


def test_catalogue_is_exactly_the_seed_tables():
    found = {
        (row["service"], row["endpoint"], row["method"]): {
            name: spec["required"] for name, spec in row["params"].items()
        }
        for row in ENDPOINT_CATALOGUE
    }
    assert found == SEED_TABLE
    assert len(ENDPOINT_CATALOGUE) == 11


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
