"""Call identity: the resolved call, through real services."""

from __future__ import annotations

from typing import Any

import pytest

from servicebench_support_queue.mock_services import ENDPOINTS, ServiceState
from servicebench_support_queue.server.servicebench.grading.calls import (
    RESOLVED,
    ApiCall,
    call_identity,
)


def identity(state: ServiceState, service: str, endpoint: str, method: str, **params: Any):
    status, body = state.dispatch(service, endpoint, method, params)
    return call_identity(ApiCall.of(service, endpoint, method, params), status, body)


def test_every_endpoint_resolves_to_a_resource():
    assert set(RESOLVED) == {entry.path for entry in ENDPOINTS}


@pytest.mark.parametrize(
    "service, endpoint, params, respelled",
    [
        (
            "order",
            "/orders/lookup",
            {"order_id": "ORD-1005"},
            [{"order_id": "ord-1005"}, {"order_id": " Ord-1005 "}],
        ),
        (
            "user",
            "/users/lookup",
            {"email": "jane.doe@example.com"},
            [
                {"email": "JANE.DOE@example.com "},
                {"user_id": "usr-001"},
                {"user_id": "USR-001", "email": "Jane.Doe@Example.com"},
            ],
        ),
        ("order", "/orders/by-user", {"user_id": "USR-001"}, [{"user_id": " usr-001"}]),
        ("inventory", "/inventory/price-history", {"sku": "SKU-445"}, [{"sku": "sku-445"}]),
        ("user", "/users/list", {}, [{"page": 1}, {"page": "1", "per_page": 5}]),
    ],
)
def test_reads_of_the_same_record_are_one_call_whatever_the_spelling(
    service, endpoint, params, respelled
):
    state = ServiceState()
    first = identity(state, service, endpoint, "GET", **params)
    assert first[0] == endpoint
    assert all(identity(state, service, endpoint, "GET", **other) == first for other in respelled)


def test_a_write_is_its_record_and_effect_without_free_text():
    state = ServiceState()
    refund = identity(
        state, "order", "/orders/process-refund", "POST", order_id="ORD-1005", amount=10, reason="a"
    )
    again = identity(
        state,
        "order",
        "/orders/process-refund",
        "POST",
        order_id="ord-1005",
        amount="10.00",
        reason="another reason",
    )
    other_amount = identity(
        state, "order", "/orders/process-refund", "POST", order_id="ORD-1005", amount=11, reason="a"
    )
    assert refund == again != other_amount
    note = identity(
        state, "user", "/users/update", "POST", user_id="USR-003", updates={"notes": "first"}
    )
    reworded = identity(
        state, "user", "/users/update", "POST", user_id="usr-003", updates={"notes": "second"}
    )
    with_phone = identity(
        state,
        "user",
        "/users/update",
        "POST",
        user_id="USR-003",
        updates={"notes": "x", "phone": "+1-000-555-0000"},
    )
    assert note == reworded != with_phone
    assert identity(
        state, "user", "/users/update", "POST", user_id="USR-003", updates={"name": "A"}
    ) != (
        identity(state, "user", "/users/update", "POST", user_id="USR-003", updates={"name": "B"})
    )


def test_failed_calls_fold_case_and_whitespace_and_never_meet_a_success():
    state = ServiceState()
    missing = identity(state, "order", "/orders/lookup", "GET", order_id="ORD-0000")
    assert missing[0] == "failed"
    assert identity(state, "order", "/orders/lookup", "GET", order_id=" ord-0000") == missing
    assert identity(state, "order", "/orders/lookup", "GET", order_id="ORD-0001") != missing
    refused = identity(
        state, "order", "/orders/process-refund", "POST", order_id="ORD-1005", amount=0, reason="a"
    )
    assert (
        identity(
            state,
            "order",
            "/orders/process-refund",
            "POST",
            order_id="ORD-1005",
            amount=0,
            reason="b",
        )
        == refused
    )
    assert (
        identity(state, "order", "/orders/lookup", "POST", order_id="ORD-1005")[0] == "failed"
    )  # 405
