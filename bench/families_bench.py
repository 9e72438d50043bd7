"""Reset and step cost of every ServiceBench family, side by side with the canonical tasks.

    .venv/bin/python -m bench.families_bench                 # 8 seeds x 5 rounds per family
    .venv/bin/python -m bench.families_bench --seeds 16 --rounds 9 --json

In one process and one run: every family's variants are built and proven first (a
cache miss is bench/variants_bench.py's business), then each round plays the oracle
once on every (family, seed) and on each canonical task, timing `reset` and each
`step` with process CPU time (what a busy, shared machine distorts least), in an
order shuffled anew each round so that drift in the machine's speed spreads over all
of them alike. Reported per family: the median over rounds of the mean reset and
mean step cost, and their ratio to the canonical tasks' (the three seed tasks,
canonical worlds, measured in the same rounds). The issue's bound: no family's step
above 2x the canonical step.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time
from typing import Any

from servicebench_support_queue.models import ServiceBenchObservation
from servicebench_support_queue.server.servicebench.catalogue import FAMILIES
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.servicebench.tasks import SEED_TASK_IDS

CANONICAL = "canonical tasks"
Case = tuple[str, str, int | None, str | None]
"""(row label, task id, seed, family)."""


def oracle_actions(task_id: str, seed: int | None, family: str | None) -> list[Any]:
    """The oracle's calls on the episode (planned once, replayed while timing)."""
    env = ServiceBenchEnvironment()
    history: list[ServiceBenchObservation] = [env.reset(task_id=task_id, seed=seed, family=family)]
    actions = []
    while not history[-1].done and (action := next_action(history)) is not None:
        actions.append(action)
        history.append(env.step(action))
    return actions


def timed(case: Case, actions: list[Any]) -> tuple[float, list[float]]:
    """CPU microseconds of one reset and of each step of the replayed episode."""
    _, task_id, seed, family = case
    env = ServiceBenchEnvironment()
    start = time.process_time()
    env.reset(task_id=task_id, seed=seed, family=family)
    reset = (time.process_time() - start) * 1e6
    steps = []
    for action in actions:
        start = time.process_time()
        env.step(action)
        steps.append((time.process_time() - start) * 1e6)
    return reset, steps


def run(seeds: int, rounds: int, repeat: int) -> dict[str, Any]:
    cases: list[Case] = [(CANONICAL, task_id, None, None) for task_id in SEED_TASK_IDS]
    cases += [
        (info.name, info.task_id, seed, info.name)
        for info in FAMILIES
        for seed in (*range(1, seeds // 2 + 1), *range(100_000, 100_000 + seeds - seeds // 2))
    ]
    plans = {case: oracle_actions(*case[1:]) for case in cases}  # builds and proves each variant
    per_round: dict[str, list[tuple[float, float]]] = {label: [] for label, *_ in cases}
    rng = random.Random(0)
    for _ in range(rounds):
        order = list(cases) * repeat
        rng.shuffle(order)
        resets: dict[str, list[float]] = {label: [] for label in per_round}
        steps: dict[str, list[float]] = {label: [] for label in per_round}
        for case in order:
            reset, step = timed(case, plans[case])
            resets[case[0]].append(reset)
            steps[case[0]].extend(step)
        for label in per_round:
            per_round[label].append(
                (statistics.fmean(resets[label]), statistics.fmean(steps[label]))
            )
    base_reset = statistics.median(r for r, _ in per_round[CANONICAL])
    base_step = statistics.median(s for _, s in per_round[CANONICAL])
    rows = {}
    for label, samples in per_round.items():
        reset = statistics.median(r for r, _ in samples)
        step = statistics.median(s for _, s in samples)
        rows[label] = {
            "reset_us": round(reset, 1),
            "step_us": round(step, 1),
            "reset_ratio": round(reset / base_reset, 2),
            "step_ratio": round(step / base_step, 2),
        }
    return {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "seeds_per_family": seeds,
        "rounds": rounds,
        "rows": rows,
        "worst_step_ratio": max(row["step_ratio"] for row in rows.values()),
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| Family | Reset (µs CPU) | Step (µs CPU) | Reset / canonical | Step / canonical |",
        "|---|---|---|---|---|",
    ]
    for label, row in result["rows"].items():
        lines.append(
            f"| {label} | {row['reset_us']:.0f} | {row['step_us']:.0f} | "
            f"{row['reset_ratio']:.2f}x | {row['step_ratio']:.2f}x |"
        )
    lines.append(f"\nWorst step ratio: {result['worst_step_ratio']:.2f}x (bound: 2x).")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=8, help="seeds per family (half held out)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="episodes per case per round")
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args()
    result = run(args.seeds, args.rounds, args.repeat)
    print(json.dumps(result, indent=2) if args.json else markdown(result))


if __name__ == "__main__":
    main()
