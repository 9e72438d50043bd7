"""Same (task, seed), same episode, byte for byte, in any process whatever PYTHONHASHSEED is."""

from __future__ import annotations

import os
import subprocess
import sys

SEEDS = (1, 4242, 99_999, 100_007)

# Plays every task on every seed with the heuristic policy and prints the JSON of each
# observation and of the final state, one per line.
EPISODES = f"""
from servicebench_support_queue.server.support_queue.heuristic import triage
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.tasks import TASKS

env = SupportQueueEnvironment()
for task in TASKS:
    for seed in {SEEDS!r}:
        obs = env.reset(task_id=task.card.id, seed=seed, episode_id="fixed")
        print(obs.model_dump_json())
        while not obs.done:
            obs = env.step(triage(obs))
            print(obs.model_dump_json())
        print(env.state.model_dump_json())
"""


def run_episodes(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", EPISODES],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.stdout


def test_episodes_are_byte_identical_across_processes_and_hash_seeds() -> None:
    first, second = run_episodes("1"), run_episodes("4071")
    assert first == second
    lines = first.splitlines()
    assert len(lines) == len(SEEDS) * (2 + 2 + 3 + 2 + 4 + 2)  # reset + steps + state per episode
    assert len(set(lines)) > len(lines) // 2  # the seeds really give different episodes
