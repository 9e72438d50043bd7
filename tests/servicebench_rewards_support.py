"""Shared by the ServiceBench reward tests: canonical calls, and playing them through real services."""

from __future__ import annotations

from typing import Any

from servicebench_support_queue.mock_services import ServiceState
from servicebench_support_queue.server.servicebench.grading.rewards import (
    ApiCall,
    Progress,
    StepOutcome,
    score_call,
)
from servicebench_support_queue.server.servicebench.tasks import TASK_SPECS, TaskSpec

Call = tuple[str, str, str, dict[str, Any]]

JANE: Call = ("user", "/users/lookup", "GET", {"email": "jane.doe@example.com"})
JANE_BY_ID: Call = ("user", "/users/lookup", "GET", {"user_id": "USR-001"})
JOHN: Call = ("user", "/users/lookup", "GET", {"email": "john.doe@example.com"})
NOBODY: Call = ("user", "/users/lookup", "GET", {"email": "nobody@example.com"})
JANES_ORDERS: Call = ("order", "/orders/by-user", "GET", {"user_id": "USR-001"})
ORDER_1005: Call = ("order", "/orders/lookup", "GET", {"order_id": "ORD-1005"})
ORDER_1006: Call = ("order", "/orders/lookup", "GET", {"order_id": "ORD-1006"})
SKU_445: Call = ("inventory", "/inventory/lookup", "GET", {"sku": "SKU-445"})
SKU_204: Call = ("inventory", "/inventory/lookup", "GET", {"sku": "SKU-204"})
RETURNED: Call = (
    "order",
    "/orders/update-status",
    "POST",
    {"order_id": "ORD-1005", "new_status": "returned"},
)
LIST_USERS: Call = ("user", "/users/list", "GET", {})
PRIYA: Call = ("user", "/users/lookup", "GET", {"user_id": "USR-003"})
ORDER_1009: Call = ("order", "/orders/lookup", "GET", {"order_id": "ORD-1009"})
SKU_555: Call = ("inventory", "/inventory/lookup", "GET", {"sku": "SKU-555"})
SKU_118: Call = ("inventory", "/inventory/lookup", "GET", {"sku": "SKU-118"})
PRICES_555: Call = ("inventory", "/inventory/price-history", "GET", {"sku": "SKU-555"})


def refund(order_id: str, amount: Any, reason: str = "refund") -> Call:
    return (
        "order",
        "/orders/process-refund",
        "POST",
        {"order_id": order_id, "amount": amount, "reason": reason},
    )


def play(task: str | TaskSpec, *calls: Call) -> list[StepOutcome]:
    """Score the calls in order against fresh services; return every step's outcome."""
    spec = TASK_SPECS[task] if isinstance(task, str) else task
    services, progress, outcomes = ServiceState(), Progress(), []
    for service, endpoint, method, params in calls:
        status, body = services.dispatch(service, endpoint, method, params)
        outcome = score_call(
            spec, progress, ApiCall.of(service, endpoint, method, params), status, body
        )
        progress = outcome.progress
        outcomes.append(outcome)
    return outcomes


def last(task: str | TaskSpec, *calls: Call) -> StepOutcome:
    return play(task, *calls)[-1]


T1, T2, T3 = "order_status_lookup", "return_and_refund", "billing_discrepancy"
