"""mock_services/inventory.py: InventoryService's reads and stock updates, and their errors."""

from __future__ import annotations

import pytest
from mock_services_support import call

from servicebench_support_queue.mock_services import BASE, ServiceState


@pytest.fixture
def state() -> ServiceState:
    return ServiceState()


def test_inventory_reads(state):
    assert call(state, "inventory", "/inventory/lookup", sku="sku-445")[1] == {
        "sku": "SKU-445",
        "name": "Portable Bluetooth Speaker",
        "category": "electronics",
        "price": 49.99,
        "stock": BASE["products"]["SKU-445"]["stock"],
    }
    levels = {
        sku: call(state, "inventory", "/inventory/check-stock", sku=sku)[1]["stock_status"]
        for sku in ("SKU-733", "SKU-846", "SKU-445")
    }
    assert levels == {"SKU-733": "out_of_stock", "SKU-846": "low_stock", "SKU-445": "in_stock"}
    history = call(state, "inventory", "/inventory/price-history", sku="SKU-555")[1]
    assert history["history"][-1]["price"] == history["current_price"] == 123.75
    for path in ("/inventory/lookup", "/inventory/check-stock", "/inventory/price-history"):
        assert call(state, "inventory", path, sku="SKU-000")[0] == 404
        assert call(state, "inventory", path)[0] == 400


def test_update_stock_persists(state):
    before = BASE["products"]["SKU-445"]["stock"]
    code, body = call(
        state, "inventory", "/inventory/update-stock", "POST", sku="SKU-445", adjustment=-4
    )
    assert code == 200 and body["stock"] == before - 4
    assert (
        call(state, "inventory", "/inventory/check-stock", sku="SKU-445")[1]["stock"] == before - 4
    )


@pytest.mark.parametrize(
    "params, status",
    [
        ({"sku": "SKU-445", "adjustment": 0}, 400),
        ({"sku": "SKU-445", "adjustment": "ten"}, 400),
        ({"sku": "SKU-445", "adjustment": 2.5}, 400),
        ({"sku": "SKU-445"}, 400),
        ({"sku": "SKU-733", "adjustment": -1}, 409),
        ({"sku": "SKU-000", "adjustment": 1}, 404),
        (
            {"sku": "SKU-445", "adjustment": 10**13},
            400,
        ),  # 14 digits: beyond any stock, a 400 and not a 500
        ({"sku": "SKU-445", "adjustment": -(10**13)}, 400),
        ({"sku": "SKU-445", "adjustment": 1_000_001}, 400),
        ({"sku": "SKU-445", "adjustment": "99999999999999"}, 400),
        ({"sku": "SKU-445", "adjustment": 1e300}, 400),
        ({"sku": "SKU-445", "adjustment": "9" * 5000}, 400),  # past Python's int() digit limit
        ({"sku": "SKU-445", "adjustment": 10**5000}, 400),
    ],
)
def test_update_stock_errors(state, params, status):
    code, body = state.dispatch("inventory", "/inventory/update-stock", "POST", params)
    assert code == status and body["error"]
    assert not state.has_writes
