"""services/registry.py: the catalogue is read off the handlers, and params are validated."""

from __future__ import annotations

import pytest
from services_support import call

from services import ENDPOINT_CATALOGUE, ENDPOINTS, ServiceState


@pytest.fixture
def state() -> ServiceState:
    return ServiceState()


def test_catalogue_is_derived_from_the_handlers():
    for entry, row in zip(ENDPOINTS, ENDPOINT_CATALOGUE):
        assert row["description"] and row["description"] in " ".join(entry.handler.__doc__.split())
        for name, spec in row["params"].items():
            assert spec["description"], f"{entry.path} {name} has no description"
    per_page = ENDPOINT_CATALOGUE[1]["params"]["per_page"]
    assert per_page["type"] == "integer" and per_page["default"] == 5


def test_unknown_extra_params_are_rejected(state):
    code, body = call(state, "order", "/orders/lookup", order_id="ORD-1005", verbose=True)
    assert code == 400 and "verbose" in body["error"] and "order_id" in body["error"]
