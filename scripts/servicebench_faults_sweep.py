"""Play the oracle through faults on many variants of every family, at every level.

    python scripts/servicebench_faults_sweep.py               # 50 seeds per family
    python scripts/servicebench_faults_sweep.py --seeds 500 --json sweep.json

Prints, per level, the episodes played, how many the oracle did not finish at exactly 1.0
with the expected end state (each listed), how often each kind of fault answered a call,
and the budget growth. The tests play a small sample of this; this is the big sweep.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from servicebench_support_queue.server.servicebench.catalogue import families_of_task
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.faults.schedule import LEVELS
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.servicebench.tasks import TASK_CARDS


def sweep(seeds: range, level: str) -> dict[str, Any]:
    kinds: Counter[str] = Counter()
    calls = episodes = growth = 0
    failures = []
    for card in TASK_CARDS:
        for family in [info.name for info in families_of_task(card.id)] or [None]:
            for seed in seeds:
                env = ServiceBenchEnvironment()
                history = [env.reset(task_id=card.id, seed=seed, family=family, faults=level)]
                while not history[-1].done and (action := next_action(history)) is not None:
                    history.append(env.step(action))
                last = history[-1]
                episodes += 1
                calls += len(history) - 1
                kinds.update(record.kind for record in env.state.faults or [])
                growth += (last.info.get("faults") or {}).get("budget_growth", 0)
                outcome = last.info.get("outcome") or {}
                if not (
                    last.done and last.cumulative_reward == 1.0 and outcome.get("end_state_matches")
                ):
                    failures.append(
                        {
                            "task": card.id,
                            "family": family,
                            "seed": seed,
                            "score": last.cumulative_reward,
                        }
                    )
    return {
        "level": level,
        "episodes": episodes,
        "calls": calls,
        "failures": failures,
        "faults_per_call": {kind: round(count / calls, 4) for kind, count in sorted(kinds.items())},
        "budget_growth_per_episode": round(growth / episodes, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=50, help="seeds per family (from 1)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    results = [sweep(range(1, args.seeds + 1), level) for level in LEVELS]
    for result in results:
        print(
            f"{result['level']:>6}: {result['episodes']} episodes, {result['calls']} calls, "
            f"{len(result['failures'])} not at 1.0; faults per call {result['faults_per_call']}; "
            f"budget growth {result['budget_growth_per_episode']} steps per episode"
        )
        for failure in result["failures"]:
            print("   ", failure)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
