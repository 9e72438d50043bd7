"""mock_services/registry.py: the catalogue is read off the handlers, and params are validated."""

from __future__ import annotations

import pytest
from mock_services_support import call

from servicebench_support_queue.mock_services import ENDPOINT_CATALOGUE, ENDPOINTS, ServiceState


@pytest.fixture
def state() -> ServiceState:
    return ServiceState()


def test_catalogue_is_derived_from_the_handlers():
    for entry, row in zip(ENDPOINTS, ENDPOINT_CATALOGUE, strict=True):
        assert row["description"] and row["description"] in " ".join(entry.handler.__doc__.split())
        for name, spec in row["params"].items():
            assert spec["description"], f"{entry.path} {name} has no description"
    per_page = ENDPOINT_CATALOGUE[1]["params"]["per_page"]
    assert per_page["type"] == "integer" and per_page["default"] == 5


def test_unknown_extra_params_are_rejected(state):
    code, body = call(state, "order", "/orders/lookup", order_id="ORD-1005", verbose=True)
    assert code == 400 and "verbose" in body["error"] and "order_id" in body["error"]


def test_numeric_bounds_are_declared_once_shown_in_the_catalogue_and_enforced(state):
    bounded = {
        (row["endpoint"], name): (spec["minimum"], spec["maximum"])
        for row in ENDPOINT_CATALOGUE
        for name, spec in row["params"].items()
        if "minimum" in spec
    }
    assert bounded == {
        ("/users/list", "page"): (1, 1_000_000),
        ("/users/list", "per_page"): (1, 5),
        ("/orders/process-refund", "amount"): (0.01, 1_000_000),
        ("/inventory/update-stock", "adjustment"): (-1_000_000, 1_000_000),
        ("/shipments/reship", "quantity"): (1, 1000),
        ("/cases/open", "amount"): (0.01, 1_000_000),
    }
    code, body = call(
        state, "inventory", "/inventory/update-stock", "POST", sku="SKU-445", adjustment=10**13
    )
    assert code == 400 and "between -1000000 and 1000000" in body["error"]
    code, body = call(state, "user", "/users/list", page=10**400)
    assert code == 400 and "an integer of 1329 bits" in body["error"]  # never 400 digits of it
    code, body = call(state, "order", "/orders/lookup", **{f"p{i}": 1 for i in range(100)})
    assert code == 400 and "and 95 more" in body["error"] and len(body["error"]) < 200
