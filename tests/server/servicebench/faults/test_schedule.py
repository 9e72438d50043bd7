"""server/servicebench/faults/schedule.py: the fault schedule, its determinism, rates and guarantees,
and how a reset asks for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from servicebench_faults_support import oracle_policy, play

from servicebench_support_queue.models import ServiceBenchAction
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.faults.schedule import (
    ANSWERED_KINDS,
    FAULT_DATA,
    LEVELS,
    MAX_CONSECUTIVE,
    FaultPlan,
)
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.tasks.episode_errors import FaultLevelError

REPO = Path(__file__).resolve().parents[4]
TASKS = ("return_and_refund", "billing_discrepancy", "cancel_request")


def transcript(task_id: str, seed: int, level: str) -> str:
    """The oracle's episode as JSON: every observation (less the episode id) and the state."""
    env, history = play(oracle_policy, task_id, seed=seed, faults=level)
    seen = [o.model_dump(mode="json") for o in history]
    for observation in seen:
        observation["info"].pop("episode_id")
    return json.dumps([seen, env.state.model_dump(mode="json", exclude={"episode_id"})])


SCRIPT = """
import json, sys
sys.path[:0] = ["tests", "tests/server/servicebench/faults"]
from test_schedule import transcript
print(json.dumps([transcript(t, s, l) for t, s, l in json.loads(sys.argv[1])]))
"""


def test_the_same_reset_and_actions_meet_the_same_faults_in_another_process():
    cases = [(task, seed, level) for task in TASKS for seed in (1, 2) for level in LEVELS[1:]]
    here = [transcript(*case) for case in cases]
    assert here == [transcript(*case) for case in cases]
    there = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(cases)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONHASHSEED": "12345"},  # another hash seed: no hash() used
    ).stdout
    assert json.loads(there) == here
    assert any('"kind": "timeout"' in text for text in here)  # faults were met


def test_seeds_families_and_levels_have_schedules_of_their_own():
    route = ("order", "/orders/lookup", "GET")

    def pattern(plan: FaultPlan) -> tuple:
        return tuple(plan.decide(step, route, False) for step in range(1, 200))

    plans = [
        FaultPlan.of(level, task, family, seed)
        for level in LEVELS[1:]
        for task, family in (("cancel_request", "cancel_unshipped"), ("cancel_request", None))
        for seed in (1, 2, 3)
    ]
    patterns = [pattern(plan) for plan in plans]
    assert len(set(patterns)) == len(patterns)
    assert pattern(FaultPlan.of("heavy", "cancel_request", None, 1)) == patterns[9]


def test_the_rates_are_the_data_files():
    """Over many calls each kind answers at its rate: light ~10% of calls, heavy ~30%."""
    routes = [("order", "/orders/lookup", "GET"), ("order", "/orders/process-refund", "POST")]
    for level in LEVELS:
        rates = FAULT_DATA["levels"][level]
        counts: Counter[str] = Counter()
        draws = 0
        for seed in range(20):
            plan = FaultPlan.of(level, "return_and_refund", None, seed)
            for step in range(1, 300):
                for route in routes:
                    draws += 1
                    scheduled = plan.decide(step, route, route[2] == "POST")
                    counts[scheduled.kind if scheduled else "none"] += 1
        for kind in ANSWERED_KINDS:
            assert abs(counts[kind] / draws - rates[kind]) < 0.01, (level, kind)
        total = sum(rates[kind] for kind in ANSWERED_KINDS)
        assert total == {"off": 0.0, "light": 0.1, "heavy": 0.3}[level]


def test_a_call_repeated_gets_through_after_two_faults_or_a_rate_limits_wait():
    lookup = ServiceBenchAction(
        service="order", endpoint="/orders/lookup", params={"order_id": "ORD-1005"}
    )
    longest = 0
    for seed in range(1, 40):
        env = ServiceBenchEnvironment()
        env.reset(task_id="return_and_refund", seed=seed, faults="heavy")
        run, wait = 0, 0
        while not env.done:
            answer = env.step(lookup).api_response
            if answer["status_code"] in (429, 503, 504):
                run += 1
                wait = max(wait, answer.get("retry_after_steps", 0))
                assert run <= MAX_CONSECUTIVE + max(0, wait - 1)
                longest = max(longest, run)
            else:
                run, wait = 0, 0
    assert longest >= MAX_CONSECUTIVE  # the cap was reached, and held


def test_faults_off_is_the_episode_as_before():
    """Off: no fault field anywhere, the catalogue without keys, and the same bytes as a
    reset that does not name faults."""
    for task in TASKS:
        named = transcript(task, 3, "off")
        _, history = play(oracle_policy, task, seed=3, faults="off")
        assert '"faults' not in named and "fault_level" not in named
        assert "idempotency_key" not in json.dumps(history[0].available_endpoints)
        assert named == transcript_default(task, 3)


def transcript_default(task_id: str, seed: int) -> str:
    env = ServiceBenchEnvironment()
    history = [env.reset(task_id=task_id, seed=seed)]
    while not history[-1].done and (action := oracle_policy(history)) is not None:
        history.append(env.step(action))
    seen = [o.model_dump(mode="json") for o in history]
    for observation in seen:
        observation["info"].pop("episode_id")
    return json.dumps([seen, env.state.model_dump(mode="json", exclude={"episode_id"})])


def test_with_faults_the_catalogue_offers_keys_and_info_counts_faults():
    env, history = play(oracle_policy, "cancel_request", seed=1, faults="heavy")
    assert "idempotency_key" in json.dumps(history[0].available_endpoints)
    assert all("faults_injected" in o.info for o in history)
    assert history[-1].info["faults"]["level"] == "heavy"
    assert env.state.fault_level == "heavy"


@pytest.mark.parametrize("level", ["extreme", "OFF", "", 3, None])
def test_an_unknown_level_is_refused_by_name(level):
    with pytest.raises(FaultLevelError, match="faults level") as error:
        ServiceBenchEnvironment().reset(task_id="return_and_refund", faults=level)
    assert error.value.status == 422 and "light" in str(error.value)


def test_support_queue_has_no_faults():
    SupportQueueEnvironment().reset(faults="off")
    with pytest.raises(FaultLevelError, match="ServiceBench only"):
        SupportQueueEnvironment().reset(faults="light")
