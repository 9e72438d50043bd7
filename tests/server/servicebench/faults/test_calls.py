"""server/servicebench/faults/calls.py and its grading: faults cost the agent nothing, its own
mistakes do, and nothing tells it a timed-out write's fate before its answers do.

Schedules are written by hand (tests/servicebench_faults_support.py) so that each test sets
up the situation it checks. Canonical return_and_refund: 1 user lookup, 2 order lookup,
3 inventory lookup, 4 refund, 5 status update.
"""

from __future__ import annotations

import json

import pytest
from servicebench_faults_support import (
    blind_resender,
    keyed_resender,
    oracle_policy,
    play,
    without_key,
)

from servicebench_support_queue.models import ServiceBenchAction
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.faults.schedule import (
    RATE_LIMITED,
    TIMEOUT,
    UNAVAILABLE,
    Scheduled,
)

REFUND_TASK, REFUND_STEP = "return_and_refund", 4
LOOKUP = ServiceBenchAction(
    service="order", endpoint="/orders/lookup", params={"order_id": "ORD-1005"}
)
PENALTIES = {"duplicate_call", "irrelevant_endpoint", "unintended_write"}


def signals(env: ServiceBenchEnvironment) -> list[str]:
    return [signal for record in env.state.call_history for signal in record.signals]


def assert_perfect(env: ServiceBenchEnvironment, history: list) -> None:
    last = history[-1]
    assert last.done and last.task_completed and last.cumulative_reward == 1.0
    assert last.info["outcome"]["end_state_matches"]
    assert not PENALTIES & set(signals(env))


IDLE_READ = ServiceBenchAction(service="user", endpoint="/users/list", params={})


@pytest.mark.parametrize(
    "fault",
    [
        Scheduled(UNAVAILABLE),
        Scheduled(RATE_LIMITED, wait=3),
        Scheduled(TIMEOUT, applied=False),
        Scheduled(TIMEOUT, applied=True),
    ],
)
@pytest.mark.parametrize("step", [2, REFUND_STEP, 5])
def test_the_oracle_is_perfect_through_any_fault_on_any_call(fault, step):
    env, history = play(oracle_policy, REFUND_TASK, schedule={step: fault})
    assert_perfect(env, history)
    assert history[step].reward == 0.0 and history[step].info["reward_signals"] == []


def test_a_retry_after_a_fault_is_the_first_effective_call():
    """A lookup answered 503, 503 then served: the serving one is graded as the first."""
    faults = {2: Scheduled(UNAVAILABLE), 3: Scheduled(UNAVAILABLE)}
    env, history = play(oracle_policy, REFUND_TASK, schedule=faults)
    assert [o.api_response["status_code"] for o in history[1:5]] == [200, 503, 503, 200]
    assert history[4].info["reward_signals"] == env_rows_of_order_lookup()
    assert_perfect(env, history)


def env_rows_of_order_lookup() -> list[str]:
    _, history = play(oracle_policy, REFUND_TASK, schedule={})
    return history[2].info["reward_signals"]


def test_a_blind_resend_after_an_applied_timeout_refunds_twice_and_fails():
    """The billing adjustment (step 4) timed out but was applied; sent again without a key
    it applies again (the order's balance allows it): a double refund."""
    env, history = play(
        blind_resender, "billing_discrepancy", schedule={4: Scheduled(TIMEOUT, applied=True)}
    )
    assert not history[-1].task_completed and history[-1].cumulative_reward < 1.0
    assert "correct_adjustment_issued_undone" in signals(env)  # the world's total is off
    while not history[-1].done:  # the re-sender stops, satisfied; the episode runs out
        history.append(env.step(IDLE_READ))
    last = history[-1]
    assert not last.task_completed and last.cumulative_reward < 1.0
    outcome = last.info["outcome"]
    assert not outcome["end_state_matches"]
    refund = next(check for check in outcome["checks"] if "refund" in check["name"])
    assert refund["actual"] == 2 * refund["expected"]
    assert last.info["faults"]["double_applied_writes"] == 1


def test_a_blind_resend_after_a_timeout_that_did_not_apply_is_fine():
    env, history = play(
        blind_resender, REFUND_TASK, schedule={REFUND_STEP: Scheduled(TIMEOUT, applied=False)}
    )
    assert_perfect(env, history)
    assert history[-1].info["faults"]["double_applied_writes"] == 0


@pytest.mark.parametrize("applied", [True, False])
def test_a_keyed_resend_after_a_timeout_applies_once_and_costs_nothing(applied):
    env, history = play(
        keyed_resender, REFUND_TASK, schedule={REFUND_STEP: Scheduled(TIMEOUT, applied=applied)}
    )
    assert_perfect(env, history)
    assert history[REFUND_STEP + 1].api_response["status_code"] == 200  # the resend


@pytest.mark.parametrize("applied", [True, False])
def test_the_oracle_checks_a_timed_out_write_before_writing_again(applied):
    env, history = play(
        oracle_policy, REFUND_TASK, schedule={REFUND_STEP: Scheduled(TIMEOUT, applied=applied)}
    )
    calls = [record.endpoint for record in env.state.call_history]
    check = REFUND_STEP  # index of the call after the timeout
    assert calls[check] == "/orders/lookup"  # the check: a lookup of the refunded order
    refunds = [c for c in calls if c == "/orders/process-refund"]
    assert len(refunds) == (1 if applied else 2)  # applied: the lookup showed it, no resend
    assert_perfect(env, history)


def comparable(observation: ServiceBenchObservation) -> dict:  # noqa: F821
    seen = observation.model_dump()
    del seen["info"]["episode_id"]
    return seen


def comparable_state(env: ServiceBenchEnvironment) -> dict:
    return env.state.model_dump(exclude={"episode_id"})


def test_nothing_tells_a_timed_out_writes_fate_before_the_answers_do():
    """Same actions, one timeout applied and one not: every observation and the state are
    the same bytes until the first answer that shows the write; `applied` only once done."""
    runs = {}
    for applied in (True, False):
        env = ServiceBenchEnvironment()
        schedule = {REFUND_STEP: Scheduled(TIMEOUT, applied=applied)}
        _, history = play(
            blind_resender, REFUND_TASK, env=env, schedule=schedule, limit=REFUND_STEP - 1
        )
        history.append(env.step(blind_resender(history)))  # the timed-out refund (step 4)
        runs[applied] = (env, history)
    (env_yes, seen_yes), (env_no, seen_no) = runs[True], runs[False]
    assert [comparable(o) for o in seen_yes] == [comparable(o) for o in seen_no]
    assert comparable_state(env_yes) == comparable_state(env_no)
    [record] = [r for r in env_yes.state.faults if r.kind == "timeout"]
    assert record.applied is None and seen_yes[-1].info["max_steps"] == 12 + 2
    shown_yes, shown_no = env_yes.step(LOOKUP), env_no.step(LOOKUP)
    assert shown_yes.api_response != shown_no.api_response  # the lookup tells
    while not env_yes.done:
        env_yes.step(LOOKUP)
    assert [r.applied for r in env_yes.state.faults if r.kind == "timeout"] == [True]


def test_an_applied_write_nobody_looked_at_is_graded_at_the_end():
    """A wrong refund that timed out but was applied, never looked at: its penalty is taken
    when the episode ends, and the end state shows it."""
    wrong = ServiceBenchAction(
        service="order",
        endpoint="/orders/process-refund",
        method="POST",
        params={"order_id": "ORD-1005", "amount": 10.0, "reason": "goodwill"},
    )
    env = ServiceBenchEnvironment()
    _, history = play(
        lambda h: None, REFUND_TASK, env=env, schedule={1: Scheduled(TIMEOUT, applied=True)}
    )
    history.append(env.step(wrong))
    assert history[-1].reward == 0.0
    while not history[-1].done:
        history.append(env.step(IDLE_READ))
    final = history[-1]
    assert "wrong_refund_amount" in final.info["reward_signals"]
    assert not final.info["outcome"]["end_state_matches"]


def test_a_stale_read_shows_the_record_before_the_write_once():
    env, history = play(
        oracle_policy, REFUND_TASK, schedule={}, stale={REFUND_STEP + 1}, limit=REFUND_STEP
    )
    before_refund = history[2].api_response["data"]["refunds"]
    stale, fresh = env.step(LOOKUP), env.step(LOOKUP)
    assert stale.success and stale.api_response["data"]["refunds"] == before_refund
    assert len(fresh.api_response["data"]["refunds"]) == len(before_refund) + 1
    assert env.state.faults == []  # silent until the end
    while not env.done:
        env.step(LOOKUP)
    assert [(r.kind, r.step) for r in env.state.faults] == [("stale_read", REFUND_STEP + 1)]


def test_a_rate_limited_service_answers_429_until_the_wait_is_over():
    other = ServiceBenchAction(service="user", endpoint="/users/lookup", params={"email": "x@y.z"})
    env = ServiceBenchEnvironment()
    play(lambda h: None, REFUND_TASK, env=env, schedule={1: Scheduled(RATE_LIMITED, wait=3)})
    first = env.step(LOOKUP)
    assert first.api_response["retry_after_steps"] == 3
    assert env.step(other).api_response["status_code"] == 404  # another service answers
    again = env.step(LOOKUP)
    assert again.api_response["status_code"] == 429 and again.api_response["retry_after_steps"] == 1
    assert again.reward == 0.0 and again.info["reward_signals"] == []
    assert env.step(LOOKUP).success  # 3 steps have passed
    assert [r.kind for r in env.state.faults] == ["rate_limited", "rate_limited"]


def test_budget_grows_with_fault_answers_and_no_further():
    env = ServiceBenchEnvironment()
    every_step = {step: Scheduled(UNAVAILABLE) for step in range(1, 100)}
    play(lambda h: None, REFUND_TASK, env=env, schedule=every_step)
    steps = 0
    while not env.done:
        observation = env.step(LOOKUP)
        steps += 1
        assert observation.info["max_steps"] == 12 + observation.info["faults_injected"] or (
            observation.info["max_steps"] == 24
        )
    assert steps == 24  # the budget doubled at most: max_steps 12, grown by 12
    assert env.score == 0.0


def test_repeating_a_faulting_call_earns_nothing_and_costs_nothing():
    """Faults cannot be farmed: retrying a call that faults gives nothing, and the calls
    that get through are graded exactly as without faults."""
    scores = []
    for schedule in (
        {},
        {2: Scheduled(UNAVAILABLE), 3: Scheduled(TIMEOUT), 4: Scheduled(RATE_LIMITED, wait=2)},
    ):
        env = ServiceBenchEnvironment()
        play(lambda h: None, REFUND_TASK, env=env, schedule=schedule)
        rewards = [env.step(LOOKUP).reward for _ in range(8)]
        scores.append((env.score, sorted(rewards)))
    assert scores[0][0] == scores[1][0]
    assert max(scores[1][1]) <= max(scores[0][1])


def test_a_keyed_write_resent_after_its_success_is_still_a_duplicate():
    """Only a retry after a fault is free: the same keyed write again after it succeeded
    earns the duplicate penalty, and is not applied twice."""
    env, history = play(oracle_policy, REFUND_TASK, schedule={}, limit=REFUND_STEP)
    refund = next(a for a in [oracle_policy(history[:REFUND_STEP])] if a is not None)
    again = env.step(refund)
    assert "duplicate_call" in again.info["reward_signals"]
    assert again.api_response["data"] == history[REFUND_STEP].api_response["data"]
    assert json.dumps(without_key(refund).params)  # the key is only part of the request


@pytest.mark.parametrize("second", [True, False])
def test_a_check_stays_free_when_the_keyed_resend_times_out_too(second):
    """The refund times out (applied), its check reads stale, the keyed resend times out too
    (a replay: nothing changes either way), and the second check is free as the first."""
    schedule = {
        REFUND_STEP: Scheduled(TIMEOUT, applied=True),
        REFUND_STEP + 2: Scheduled(TIMEOUT, applied=second),
    }
    env, history = play(oracle_policy, REFUND_TASK, schedule=schedule, stale={REFUND_STEP + 1})
    assert [r.kind for r in env.state.faults] == ["timeout", "stale_read", "timeout"]
    assert_perfect(env, history)


BOGUS_WRITE = ServiceBenchAction(
    service="order",
    endpoint="/orders/process-refund",
    method="POST",
    params={"order_id": "ORD-0000", "amount": 5.0, "reason": "farm"},
)


@pytest.mark.parametrize("action", [BOGUS_WRITE, IDLE_READ])
def test_faults_buy_no_reward_and_no_free_steps(action):
    """A policy that never does the task scores 0 through faults, and the budget grows only
    by the calls the faults spoilt (and one lookup per write timeout): it never gets more
    calls served than the task's max_steps plus the checks its write timeouts call for."""
    for seed in range(1, 25):
        env = ServiceBenchEnvironment()
        env.reset(task_id="cancel_request", seed=seed, faults="heavy")
        while not env.done:
            observation = env.step(action)
        faults = env.state.faults
        timeouts = sum(1 for record in faults if record.kind == "timeout")
        assert env.score == 0.0
        assert observation.info["max_steps"] == 12 + observation.info["faults"]["budget_growth"]
        assert env.step_count == observation.info["max_steps"]
        assert env.step_count - len([f for f in faults if f.kind != "stale_read"]) <= 12 + timeouts
