"""mock_services/shipments.py, payments.py and cases.py: the services the request families need.

A world runs them only when it says so (`World.services`); the seed's world does not.
Each write changes only this episode's records, and every refusal changes nothing.
"""

from __future__ import annotations

import pytest
from mock_services_support import call

from servicebench_support_queue.mock_services import ServiceState, World


@pytest.fixture
def state(world: World) -> ServiceState:
    return ServiceState(world)


def test_an_order_lists_its_shipments(state):
    code, body = call(state, "shipment", "/shipments/by-order", order_id="ord-1005")
    assert code == 200 and [s["shipment_id"] for s in body["shipments"]] == ["SHP-1005-1"]
    assert call(state, "shipment", "/shipments/by-order", order_id="ORD-1001")[1]["shipments"] == []
    assert call(state, "shipment", "/shipments/by-order", order_id="ORD-9")[0] == 404


def test_an_address_changes_only_before_dispatch(state):
    code, body = call(
        state, "shipment", "/shipments/update-address", "POST",
        shipment_id="SHP-1017-1", address=" 9 Oak Road, Austin, TX 78701 ",
    )  # fmt: skip
    assert code == 200 and body["address"] == "9 Oak Road, Austin, TX 78701"
    assert body["previous_address"].startswith("12 Elm Street")
    code, body = call(
        state, "shipment", "/shipments/update-address", "POST",
        shipment_id="SHP-1005-1", address="9 Oak Road",
    )  # fmt: skip
    assert code == 409 and "can no longer change" in body["error"]
    assert [(t, k) for t, k, _, _ in state.written()] == [("shipments", "SHP-1017-1")]


def test_a_reship_is_a_new_shipment_that_takes_its_units_from_stock(state):
    before = call(state, "inventory", "/inventory/check-stock", sku="SKU-445")[1]["stock"]
    code, body = call(
        state, "shipment", "/shipments/reship", "POST",
        order_id="ORD-1005", sku="sku-445", quantity=1, reason="arrived damaged",
    )  # fmt: skip
    assert code == 200 and body["shipment"]["shipment_id"] == "SHP-1005-2"
    assert body["shipment"]["kind"] == "replacement" and body["stock"]["stock"] == before - 1
    assert (
        call(state, "inventory", "/inventory/check-stock", sku="SKU-445")[1]["stock"] == before - 1
    )
    listed = call(state, "shipment", "/shipments/by-order", order_id="ORD-1005")[1]["shipments"]
    assert [s["shipment_id"] for s in listed] == ["SHP-1005-1", "SHP-1005-2"]
    assert ServiceState(state.world).read("shipments", "SHP-1005-2") is None, "this episode's only"


@pytest.mark.parametrize(
    "params, status, words",
    [
        ({"order_id": "ORD-1005", "sku": "SKU-101", "quantity": 1}, 400, "not a line"),
        ({"order_id": "ORD-1005", "sku": "SKU-445", "quantity": 2}, 400, "holds 1"),
        ({"order_id": "ORD-1017", "sku": "SKU-460", "quantity": 1}, 409, "nothing to replace"),
        ({"order_id": "ORD-1005", "sku": "SKU-445", "quantity": 0}, 400, "between 1 and 1000"),
    ],
)
def test_a_reship_that_cannot_be_sent_changes_nothing(state, params, status, words):
    code, body = call(state, "shipment", "/shipments/reship", "POST", reason="x", **params)
    assert code == status and words in body["error"] and not state.has_writes


def test_a_reship_beyond_the_stock_is_refused(world):
    state = ServiceState(world)
    stock = world.tables["products"]["SKU-733"]["stock"]  # 0: out of stock
    code, body = call(
        state, "shipment", "/shipments/reship", "POST",
        order_id="ORD-1023", sku="SKU-733", quantity=1, reason="x",
    )  # fmt: skip
    assert stock == 0 and code == 409 and "only 0 of SKU-733 in stock" in body["error"]


def test_a_duplicate_capture_is_reversed_once(state):
    listed = call(state, "payment", "/payments/by-order", order_id="ORD-1005")[1]
    assert listed["captured_total"] == 179.96 and len(listed["payments"]) == 2
    code, body = call(
        state, "payment", "/payments/refund", "POST", payment_id="pay-10002", reason="dup"
    )
    assert code == 200 and body["payment"]["status"] == "reversed"
    again = call(state, "payment", "/payments/refund", "POST", payment_id="PAY-10002", reason="dup")
    assert again[0] == 409 and "already reversed" in again[1]["error"]
    assert (
        call(state, "payment", "/payments/by-order", order_id="ORD-1005")[1]["captured_total"]
        == 89.98
    )
    assert call(state, "order", "/orders/lookup", order_id="ORD-1005")[1]["refunds"] == []


def test_cases_open_on_an_order_and_list(state):
    code, body = call(
        state, "case", "/cases/open", "POST",
        order_id="ORD-1005", category=" Escalation ", summary="above the limit", amount="249.50",
    )  # fmt: skip
    assert code == 200 and body["case"] == {
        "case_id": "CASE-ORD-1005-1", "order_id": "ORD-1005", "user_id": "USR-001",
        "category": "escalation", "amount": 249.5, "summary": "above the limit", "status": "open",
    }  # fmt: skip
    call(
        state, "case", "/cases/open", "POST", order_id="ORD-1005", category="declined", summary="x"
    )
    listed = call(state, "case", "/cases/by-order", order_id="ORD-1005")[1]["cases"]
    assert [case["case_id"] for case in listed] == ["CASE-ORD-1005-1", "CASE-ORD-1005-2"]


@pytest.mark.parametrize(
    "params, status",
    [
        ({"category": "escalation"}, 400),  # an escalation without its amount
        ({"category": "refund"}, 400),
        ({"category": "declined", "amount": 1.005}, 400),
        ({"category": "declined", "order_id": "ORD-0"}, 404),
    ],
)
def test_a_case_that_cannot_open_changes_nothing(state, params, status):
    body = {"order_id": "ORD-1005", "summary": "s", **params}
    assert state.dispatch("case", "/cases/open", "POST", body)[0] == status
    assert not state.has_writes


def test_the_seed_world_runs_none_of_them():
    for service, path in (("shipment", "/shipments/by-order"), ("payment", "/payments/by-order")):
        code, body = call(ServiceState(), service, path, order_id="ORD-1005")
        assert code == 404 and "services: user, order, inventory" in body["error"]
