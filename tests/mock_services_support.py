"""Shared by the services tests (tests/test_services_*.py): one call, as an agent makes it."""

from __future__ import annotations

import json
from typing import Any

from servicebench_support_queue.mock_services import (
    ALL_SERVICES,
    DATA_PATH,
    SETTINGS,
    ServiceState,
    World,
)

SHIPMENTS = [
    {"shipment_id": "SHP-1017-1", "order_id": "ORD-1017", "kind": "original",
     "status": "label_created", "carrier": "UPS", "address": "12 Elm Street, Portland, OR 97201",
     "items": [{"sku": "SKU-460", "quantity": 1}], "dispatched_at": None},
    {"shipment_id": "SHP-1005-1", "order_id": "ORD-1005", "kind": "original",
     "status": "delivered", "carrier": "USPS", "address": "12 Elm Street, Portland, OR 97201",
     "items": [{"sku": "SKU-445", "quantity": 1}, {"sku": "SKU-204", "quantity": 1}],
     "dispatched_at": "2024-06-04"},
]  # fmt: skip
PAYMENTS = [
    {"payment_id": "PAY-10001", "order_id": "ORD-1005", "amount": 89.98, "status": "captured",
     "captured_at": "2024-06-03T10:00:00Z", "method": "card ending 4242"},
    {"payment_id": "PAY-10002", "order_id": "ORD-1005", "amount": 89.98, "status": "captured",
     "captured_at": "2024-06-03T10:00:09Z", "method": "card ending 4242"},
]  # fmt: skip


def full_world() -> World:
    """The seed's records plus shipments and payments, in a world that runs all six services."""
    raw = json.loads(DATA_PATH.read_text())
    return World.from_records(
        SETTINGS, raw["users"], raw["products"], raw["coupons"], raw["orders"],
        shipments=SHIPMENTS, payments=PAYMENTS, services=ALL_SERVICES,
    )  # fmt: skip


def call(
    state: ServiceState, service: str, path: str, method: str = "GET", **params: Any
) -> tuple[int, dict[str, Any]]:
    """`state.dispatch` with the parameters as keywords."""
    return state.dispatch(service, path, method, params)
