"""mock_services/orders.py: OrderService's lookups, status changes and refunds, and their errors."""

from __future__ import annotations

import pytest
from mock_services_support import call

from servicebench_support_queue.mock_services import BASE, ServiceState


@pytest.fixture
def state() -> ServiceState:
    return ServiceState()


def test_orders_lookup_joins_items_and_coupon(state):
    code, order = call(state, "order", "/orders/lookup", order_id="ORD-1005")
    assert code == 200 and order["user_id"] == "USR-001" and order["return_eligible"] is True
    assert {
        "sku": "SKU-445",
        "name": "Portable Bluetooth Speaker",
        "quantity": 1,
        "unit_price": 49.99,
    } in order["items"]
    assert (
        order["coupon_applied"] is None and order["refunds"] == [] and order["refunded_total"] == 0
    )
    assert (
        call(state, "order", "/orders/lookup", order_id="ORD-1009")[1]["coupon_applied"]["code"]
        == "SAVE20"
    )


@pytest.mark.parametrize(
    "params, status", [({}, 400), ({"order_id": "ORD-9999"}, 404), ({"order_id": 1005}, 400)]
)
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
    code, body = call(
        state, "order", "/orders/update-status", "POST", order_id="ORD-1005", new_status="Returned"
    )
    assert code == 200 and body == {
        "order_id": "ORD-1005",
        "previous_status": "delivered",
        "status": "returned",
    }
    assert call(state, "order", "/orders/lookup", order_id="ORD-1005")[1]["status"] == "returned"


@pytest.mark.parametrize(
    "params, status",
    [
        ({"order_id": "ORD-1005", "new_status": "teleported"}, 400),
        ({"order_id": "ORD-1005"}, 400),
        ({"order_id": "ORD-1005", "new_status": "pending"}, 409),
        ({"order_id": "ORD-1005", "new_status": "delivered"}, 409),
        ({"order_id": "ORD-9999", "new_status": "returned"}, 404),
    ],
)
def test_update_status_errors(state, params, status):
    assert state.dispatch("order", "/orders/update-status", "POST", params)[0] == status
    assert not state.has_writes


def test_refunds_are_recorded_and_several_allowed_up_to_the_charge(state):
    charged = BASE["orders"]["ORD-1005"]["total_charged"]
    code, body = call(
        state,
        "order",
        "/orders/process-refund",
        "POST",
        order_id="ORD-1005",
        amount=49.99,
        reason="damaged",
    )
    assert code == 200 and body["refund"] == {
        "refund_id": "RF-ORD-1005-1",
        "amount": 49.99,
        "reason": "damaged",
    }
    rest = round(charged - 49.99, 2)
    code, body = call(
        state,
        "order",
        "/orders/process-refund",
        "POST",
        order_id="ORD-1005",
        amount=str(rest),
        reason="goodwill",
    )
    assert code == 200 and body["refunded_total"] == charged
    order = call(state, "order", "/orders/lookup", order_id="ORD-1005")[1]
    assert [refund["amount"] for refund in order["refunds"]] == [49.99, rest]
    assert order["refunded_total"] == charged
    code, body = call(
        state,
        "order",
        "/orders/process-refund",
        "POST",
        order_id="ORD-1005",
        amount=0.01,
        reason="one cent more",
    )
    assert code == 400 and "exceeds" in body["error"]


@pytest.mark.parametrize(
    "params, status",
    [
        ({"order_id": "ORD-1005", "amount": -5, "reason": "r"}, 400),
        ({"order_id": "ORD-1005", "amount": 0, "reason": "r"}, 400),
        ({"order_id": "ORD-1005", "amount": "lots", "reason": "r"}, 400),
        ({"order_id": "ORD-1005", "amount": 1.005, "reason": "r"}, 400),
        ({"order_id": "ORD-1005", "amount": 90.00, "reason": "r"}, 400),
        ({"order_id": "ORD-1005", "amount": 5}, 400),
        ({"order_id": "ORD-1005", "reason": "r"}, 400),
        ({"order_id": "ORD-1011", "amount": 1, "reason": "already refunded in full"}, 400),
        ({"order_id": "ORD-9999", "amount": 1, "reason": "r"}, 404),
        (
            {"order_id": "ORD-1005", "amount": 1e-300, "reason": "r"},
            400,
        ),  # positive, yet $0.00 in cents
        ({"order_id": "ORD-1005", "amount": 0.004, "reason": "r"}, 400),
        ({"order_id": "ORD-1005", "amount": 1e300, "reason": "r"}, 400),
        ({"order_id": "ORD-1005", "amount": 10**400, "reason": "r"}, 400),  # beyond a float
        ({"order_id": "ORD-1005", "amount": "nan", "reason": "r"}, 400),
        ({"order_id": "ORD-1005", "amount": "1e400", "reason": "r"}, 400),
        ({"order_id": "ORD-1005", "amount": "1" * 5000, "reason": "r"}, 400),
    ],
)
def test_refund_errors(state, params, status):
    assert state.dispatch("order", "/orders/process-refund", "POST", params)[0] == status
    assert not state.has_writes


@pytest.mark.parametrize(
    "amount",
    [49.985, "49.985", 49.994, 49.995, "49.9949", "4.9985e1", "4998.5e-2", 49.991, 49.9901],
)
def test_a_sub_cent_refund_is_refused_so_no_rounding_can_make_it_right(state, amount):
    """Money is whole cents: an amount between two cents is neither, whichever it rounds to."""
    params = {"order_id": "ORD-1005", "amount": amount, "reason": "r"}
    code, body = state.dispatch("order", "/orders/process-refund", "POST", params)
    assert code == 400 and "whole cents" in body["error"] and not state.has_writes


@pytest.mark.parametrize(
    "amount",
    [49.99, "49.99", "49.990", " 49.99 ", 4.999e1, "4.999e1", "4999e-2", 49.989999999999995],
)
def test_every_spelling_of_a_whole_cent_amount_is_that_amount(state, amount):
    """Spellings of $49.99 (and float noise a millionth of a cent from it) are $49.99 exactly."""
    params = {"order_id": "ORD-1005", "amount": amount, "reason": "r"}
    code, body = state.dispatch("order", "/orders/process-refund", "POST", params)
    assert code == 200 and body["refund"]["amount"] == 49.99 and body["refunded_total"] == 49.99
