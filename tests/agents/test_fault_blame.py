"""Whose fault a failed episode is (agents/fault_blame.py), on states built call by call.

tests/server/servicebench/faults/test_controls.py checks the same rule on real episodes of
the fault controls; here each clause of the rule is held to a state made for it.
"""

from __future__ import annotations

from typing import Any

from servicebench_support_queue.agents.fault_blame import (
    CAUSES,
    double_writes,
    failure_cause,
    failure_counts,
    fault_counts,
    unretried,
)

LOOKUP = ("orders", "/orders/lookup", "GET")
REFUND = ("orders", "/orders/process-refund", "POST")


def call(step: int, route: tuple[str, str, str], status: int, **params: Any) -> dict[str, Any]:
    service, endpoint, method = route
    return {
        "step": step,
        "service": service,
        "endpoint": endpoint,
        "method": method,
        "params": params,
        "status_code": status,
    }


def fault(step: int, kind: str, route: tuple[str, str, str], **extra: Any) -> dict[str, Any]:
    return {"step": step, "kind": kind, "service": route[0], "endpoint": route[1], **extra}


def state(calls: list[dict[str, Any]], faults: list[dict[str, Any]]) -> dict[str, Any]:
    return {"call_history": calls, "faults": faults, "task_completed": False}


def test_a_success_has_no_cause_whatever_it_was_served() -> None:
    calls = [call(1, LOOKUP, 503, order_id="ORD-1")]
    assert failure_cause(state(calls, [fault(1, "unavailable", LOOKUP)]), success=True) is None


def test_a_failure_without_faults_is_the_agents() -> None:
    assert failure_cause(state([call(1, LOOKUP, 200, order_id="ORD-1")], []), False) == "agent"
    assert failure_cause({}, False) == "agent"  # no state could be read


def test_a_fault_never_answered_again_is_unretried() -> None:
    calls = [call(1, LOOKUP, 200, order_id="ORD-1"), call(2, REFUND, 503, order_id="ORD-1")]
    faults = [fault(2, "unavailable", REFUND)]
    assert unretried(calls, faults) == 1
    assert failure_cause(state(calls, faults), False) == "fault_unretried"


def test_a_fault_retried_to_an_answer_is_not_the_cause() -> None:
    calls = [
        call(1, LOOKUP, 429, order_id="ORD-1"),
        call(2, LOOKUP, 429, order_id="ORD-1"),
        call(3, LOOKUP, 200, order_id="ORD-1"),
    ]
    faults = [fault(1, "rate_limited", LOOKUP), fault(2, "rate_limited", LOOKUP)]
    assert unretried(calls, faults) == 0
    assert failure_cause(state(calls, faults), False) == "agent"


def test_an_applied_504_write_checked_by_a_lookup_is_not_unretried() -> None:
    calls = [
        call(1, REFUND, 504, order_id="ORD-1", amount=5.0, idempotency_key="k1"),
        call(2, LOOKUP, 200, order_id="ORD-1"),
    ]
    applied = [fault(1, "timeout", REFUND, applied=True)]
    assert unretried(calls, applied) == 0
    lost = [fault(1, "timeout", REFUND, applied=False)]
    assert unretried(calls, lost) == 1  # the write never happened and was never sent again


def test_an_applied_504_write_resent_without_its_key_is_a_double_write() -> None:
    calls = [
        call(1, REFUND, 504, order_id="ORD-1", amount=5.0),
        call(2, REFUND, 200, order_id="ORD-1", amount=5.0, reason="again"),
    ]
    faults = [fault(1, "timeout", REFUND, applied=True)]
    assert double_writes(calls, faults) == 1
    assert failure_cause(state(calls, faults), False) == "fault_double_write"


def test_a_resend_with_the_same_key_or_after_an_unapplied_504_is_no_double_write() -> None:
    keyed = [
        call(1, REFUND, 504, order_id="ORD-1", amount=5.0, idempotency_key="k1"),
        call(2, REFUND, 200, order_id="ORD-1", amount=5.0, idempotency_key="k1"),
    ]
    assert double_writes(keyed, [fault(1, "timeout", REFUND, applied=True)]) == 0
    unkeyed = [call(1, REFUND, 504, order_id="ORD-1"), call(2, REFUND, 200, order_id="ORD-1")]
    assert double_writes(unkeyed, [fault(1, "timeout", REFUND, applied=False)]) == 0


def test_a_resend_without_key_in_an_unfinished_episode_counts_whatever_its_unknown_fate() -> None:
    unkeyed = [call(1, REFUND, 504, order_id="ORD-1"), call(2, REFUND, 200, order_id="ORD-1")]
    assert double_writes(unkeyed, [fault(1, "timeout", REFUND, applied=None)]) == 1
    reads = [call(1, LOOKUP, 504, order_id="ORD-1"), call(2, LOOKUP, 200, order_id="ORD-1")]
    assert double_writes(reads, [fault(1, "timeout", LOOKUP)]) == 0  # a read retried: fine


def test_a_new_key_or_a_write_to_another_record_is_judged_by_its_record() -> None:
    new_key = [
        call(1, REFUND, 504, order_id="ORD-1", idempotency_key="k1"),
        call(2, REFUND, 200, order_id="ORD-1", idempotency_key="k2"),
    ]
    assert double_writes(new_key, [fault(1, "timeout", REFUND, applied=True)]) == 1
    other = [call(1, REFUND, 504, order_id="ORD-1"), call(2, REFUND, 200, order_id="ORD-2")]
    assert double_writes(other, [fault(1, "timeout", REFUND, applied=True)]) == 0


def test_the_double_write_wins_over_an_unretried_fault() -> None:
    calls = [
        call(1, REFUND, 504, order_id="ORD-1"),
        call(2, REFUND, 200, order_id="ORD-1"),
        call(3, LOOKUP, 503, order_id="ORD-1"),
    ]
    faults = [fault(1, "timeout", REFUND, applied=True), fault(3, "unavailable", LOOKUP)]
    assert failure_cause(state(calls, faults), False) == "fault_double_write"


def test_counts_by_kind_and_by_cause() -> None:
    faults = [fault(1, "timeout", REFUND), fault(2, "timeout", LOOKUP), fault(3, "stale", LOOKUP)]
    assert fault_counts(state([], faults)) == {"timeout": 2, "stale": 1}
    records = [
        {"success": True, "failure_cause": None},
        {"success": False, "failure_cause": "fault_unretried"},
        {"success": False, "failure_cause": "agent"},
        {"success": False},  # Support Queue: no cause recorded, the agent's own
    ]
    assert failure_counts(records) == {
        "fault_double_write": 0,
        "fault_unretried": 1,
        "agent": 2,
    }
    assert list(failure_counts([])) == list(CAUSES)
