"""The final-state outcome check, as tau2-bench grades: the world against the task's end state.

The expected end state of a task is the world at reset plus exactly the task's
intended writes:

* a refund task: the task's order carries new refunds totalling the derived amount
  (within $0.01; how many refunds and their reasons are free);
* task 2: the task's order has the target status (`returned`);
* task 3: the customer's `notes` may hold a note documenting the case (optional:
  `TaskSpec.note_fields`).

`episode_outcome(spec, services)` diffs the episode's copy-on-write overlay against
the shared world it started from (mock_services/state.py keeps only what the episode
wrote, so this reads a handful of records, once, when asked), sorts every changed
field into intended changes and collateral damage, and checks the intended writes.
A change to an intended field that does not have the expected result (an over- or
under-refund, another status) is collateral damage too. It is a report: the reward
rules (servicebench_rewards.py) have penalised each damaging call as it was made.
This module depends on the services and the task specs only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...mock_services import ServiceState, thaw, to_cents
from .tasks import TaskSpec

REFUND_TOLERANCE_CENTS = 1
Report = dict[str, Any]


def refund_total_matches(spec: TaskSpec, refunded_cents: int) -> bool:
    """Whether refunds totalling `refunded_cents` in an episode are the task's adjustment."""
    return (
        spec.refund_amount is not None
        and refunded_cents > 0
        and abs(refunded_cents - to_cents(spec.refund_amount)) <= REFUND_TOLERANCE_CENTS
    )


def _refunded_cents(refunds: Any) -> int:
    return sum(to_cents(refund["amount"]) for refund in refunds or ())


def _is_intended(spec: TaskSpec, change: Mapping[str, Any], refunded_cents: int) -> bool:
    table, key, field, after = change["table"], change["key"], change["field"], change["after"]
    if table == "orders" and key == spec.order_id:
        if field == "refunds":
            return refund_total_matches(spec, refunded_cents)
        return field == "status" and spec.target_status is not None and after == spec.target_status
    return table == "users" and key == spec.customer_id and field in spec.note_fields


def world_changes(services: ServiceState) -> list[Report]:
    """Every field the episode changed, `{table, key, field, before, after}`, in write order."""
    changes = []
    for table, key, before, after in services.written():
        for field, value in after.items():
            previous = before.get(field)
            if previous != value:  # read-only world data equals its plain copy
                changes.append(
                    {
                        "table": table,
                        "key": key,
                        "field": field,
                        "before": thaw(previous),
                        "after": thaw(value),
                    }
                )
    return changes


def _checks(spec: TaskSpec, services: ServiceState, refunded_cents: int) -> list[Report]:
    order: Mapping[str, Any] | None = services.read("orders", spec.order_id)
    record = f"orders/{spec.order_id}"
    checks = []
    if spec.refund_amount is not None:
        checks.append(
            {
                "name": "refunded_in_episode",
                "record": record,
                "expected": to_cents(spec.refund_amount) / 100,
                "actual": refunded_cents / 100,
                "met": refund_total_matches(spec, refunded_cents),
            }
        )
    if spec.target_status is not None and order is not None:
        checks.append(
            {
                "name": "status",
                "record": record,
                "expected": spec.target_status,
                "actual": order["status"],
                "met": order["status"] == spec.target_status,
            }
        )
    return checks


def episode_outcome(spec: TaskSpec, services: ServiceState) -> Report:
    """The outcome report (models.EpisodeOutcome's fields) of the episode as it stands."""
    changes = world_changes(services)
    refunded = next(
        (
            _refunded_cents(change["after"]) - _refunded_cents(change["before"])
            for change in changes
            if change["table"] == "orders"
            and change["key"] == spec.order_id
            and change["field"] == "refunds"
        ),
        0,
    )
    intended: list[Report] = []
    collateral: list[Report] = []
    for change in changes:
        (intended if _is_intended(spec, change, refunded) else collateral).append(change)
    checks = _checks(spec, services, refunded)
    return {
        "end_state_matches": not collateral and all(check["met"] for check in checks),
        "checks": checks,
        "intended_changes": intended,
        "collateral_damage": collateral,
    }
