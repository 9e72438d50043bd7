"""What each of ServiceBench's milestone and outcome rows checks, one named function each.

A milestone row is reached by reading: a successful call to one of its endpoints whose
answer shows the fact the row names (`MILESTONES`). An outcome row is held while every
intended write of that row (`spec.expected`) is held by the effects of this episode's
writes (`outcome_held`). The reward rules (rewards.py) decide when each is checked and paid.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import NamedTuple

from ....mock_services.paths import (
    INVENTORY_CHECK_STOCK,
    INVENTORY_LOOKUP,
    INVENTORY_PRICE_HISTORY,
    ORDERS_BY_USER,
    ORDERS_LOOKUP,
    PAYMENTS_BY_ORDER,
    SHIPMENTS_BY_ORDER,
    USERS_LOOKUP,
)
from ..spec import TaskSpec
from .calls import ApiCall, Body
from .effects import Effects
from .outcome import expectation_met

Check = Callable[[TaskSpec, ApiCall, Body, tuple[str, ...]], bool]
"""(task, call, answer, milestones reached so far) -> whether the answer reaches the row."""


class Milestone(NamedTuple):
    """A milestone row reached by reading: a successful call to one of `endpoints` (any
    call if there are none: a composite of other milestones) whose answer passes `check`."""

    endpoints: frozenset[str]
    check: Check


def _is_task_order(spec: TaskSpec, body: Body) -> bool:
    return body.get("order_id") == spec.order_id


def _is_order_details(spec: TaskSpec, call: ApiCall, body: Body, reached: tuple[str, ...]) -> bool:
    """The task's order, in full (owner, status, lines, charge)."""
    return _is_task_order(spec, body)


def customer_found(spec: TaskSpec, call: ApiCall, body: Body, reached: tuple[str, ...]) -> bool:
    """The task's customer record."""
    return body.get("user_id") == spec.customer_id


def order_status_seen(spec: TaskSpec, call: ApiCall, body: Body, reached: tuple[str, ...]) -> bool:
    """The task's order: its details, or its row in its customer's order list."""
    if call.endpoint == ORDERS_LOOKUP:
        return _is_task_order(spec, body)
    return any(order["order_id"] == spec.order_id for order in body.get("orders", ()))


def order_return_eligible(
    spec: TaskSpec, call: ApiCall, body: Body, reached: tuple[str, ...]
) -> bool:
    """The task's order, shown eligible for return."""
    return _is_task_order(spec, body) and body.get("return_eligible") is True


def damaged_item_in_order(
    spec: TaskSpec, call: ApiCall, body: Body, reached: tuple[str, ...]
) -> bool:
    """The task's order, with the damaged item among its lines."""
    return _is_task_order(spec, body) and any(
        item["sku"] == spec.item_sku for item in body.get("items", ())
    )


def damaged_item_checked(
    spec: TaskSpec, call: ApiCall, body: Body, reached: tuple[str, ...]
) -> bool:
    """The damaged item's catalogue record."""
    return body.get("sku") == spec.item_sku


def order_evidence_shown(
    spec: TaskSpec, call: ApiCall, body: Body, reached: tuple[str, ...]
) -> bool:
    """The task's order with every field the root cause depends on (`spec.order_evidence`)."""
    return _is_task_order(spec, body) and all(bool(body.get(name)) for name in spec.order_evidence)


def order_prices_checked(
    spec: TaskSpec, call: ApiCall, body: Body, reached: tuple[str, ...]
) -> bool:
    """A price of one of the order's SKUs, from an endpoint that shows the one that matters."""
    return call.endpoint in spec.price_evidence and body.get("sku") in spec.order_skus


def root_cause_found(spec: TaskSpec, call: ApiCall, body: Body, reached: tuple[str, ...]) -> bool:
    """Both the order's evidence and its prices, by whichever calls."""
    return "order_data_retrieved" in reached and "inventory_prices_verified" in reached


def about_the_order(spec: TaskSpec, call: ApiCall, body: Body, reached: tuple[str, ...]) -> bool:
    """An answer about the task's order (its shipments, its payments)."""
    return _is_task_order(spec, body)


ORDER_DETAILS = frozenset({ORDERS_LOOKUP})
ANY_CALL: frozenset[str] = frozenset()

MILESTONES: Mapping[str, Milestone] = MappingProxyType(
    {
        "user_id_retrieved": Milestone(frozenset({USERS_LOOKUP}), customer_found),
        "order_status_retrieved": Milestone(ORDER_DETAILS | {ORDERS_BY_USER}, order_status_seen),
        "return_eligibility_confirmed": Milestone(ORDER_DETAILS, order_return_eligible),
        "item_presence_verified": Milestone(ORDER_DETAILS, damaged_item_in_order),
        "inventory_checked": Milestone(frozenset({INVENTORY_LOOKUP}), damaged_item_checked),
        "order_data_retrieved": Milestone(ORDER_DETAILS, order_evidence_shown),
        "inventory_prices_verified": Milestone(
            frozenset({INVENTORY_LOOKUP, INVENTORY_PRICE_HISTORY}), order_prices_checked
        ),
        "root_cause_identified": Milestone(ANY_CALL, root_cause_found),
        "requester_verified": Milestone(frozenset({USERS_LOOKUP}), customer_found),
        "order_checked": Milestone(ORDER_DETAILS, _is_order_details),
        "stock_checked": Milestone(
            frozenset({INVENTORY_CHECK_STOCK, INVENTORY_LOOKUP}), damaged_item_checked
        ),
        "shipment_checked": Milestone(frozenset({SHIPMENTS_BY_ORDER}), about_the_order),
        "payments_checked": Milestone(frozenset({PAYMENTS_BY_ORDER}), about_the_order),
        "price_history_checked": Milestone(
            frozenset({INVENTORY_PRICE_HISTORY}), damaged_item_checked
        ),
    }
)


def outcome_held(spec: TaskSpec, row: str, effects: Effects) -> bool:
    """Whether the episode's effects hold every intended write of the outcome row `row`."""
    expects = [expect for expect in spec.expected if expect.row == row]
    return bool(expects) and all(expectation_met(expect, effects) for expect in expects)
