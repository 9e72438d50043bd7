"""In-process rates: ServiceBench env.step and reset, without any server around them.

Plays the oracle's optimal paths (bench.plans) on one environment instance, timing
each call with perf_counter; reports the best of several rounds (the machine is
shared, and the best round is the one least disturbed by other processes).
"""

from __future__ import annotations

import time
from typing import Any

from bench.plans import Plan
from servicebench_support_queue.models import ServiceBenchAction
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.transport.encoding import result_json


def _actions(plan: Plan) -> list[tuple[str, list[ServiceBenchAction]]]:
    import json

    return [
        (
            json.loads(episode.reset_body)["task_id"],
            [ServiceBenchAction.model_validate_json(step) for step in episode.steps],
        )
        for episode in plan.episodes
    ]


def step_rates(plan: Plan, seconds: float = 1.0, rounds: int = 5) -> dict[str, Any]:
    """Steps/s of env.step alone, of env.step + JSON encoding, and resets/s."""
    episodes = _actions(plan)
    env = ServiceBenchEnvironment()
    best = {"env_step_per_s": 0.0, "env_step_encoded_per_s": 0.0, "env_reset_per_s": 0.0}
    clock = time.perf_counter
    for round_number in range(rounds * 2):
        encode = round_number % 2 == 1  # alternate plain and encoded rounds
        steps = resets = 0
        step_time = reset_time = 0.0
        deadline = clock() + seconds
        while clock() < deadline:
            for task_id, actions in episodes:
                started = clock()
                observation = env.reset(task_id=task_id)
                if encode:
                    result_json(observation)
                reset_time += clock() - started
                resets += 1
                for action in actions:
                    started = clock()
                    observation = env.step(action)
                    if encode:
                        result_json(observation)
                    step_time += clock() - started
                    steps += 1
        key = "env_step_encoded_per_s" if encode else "env_step_per_s"
        best[key] = max(best[key], steps / step_time)
        if not encode:
            best["env_reset_per_s"] = max(best["env_reset_per_s"], resets / reset_time)
    return best
