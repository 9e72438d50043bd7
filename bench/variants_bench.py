"""Build + prove time and memory of seeded ServiceBench variants, and the oracle's score on them.

    .venv/bin/python -m bench.variants_bench                 # seeds 1-1000 of every task
    .venv/bin/python -m bench.variants_bench --seeds 100000-100999 --json

For each task it builds and proves every seed's variant the way `reset` does on a
cache miss (`VariantCache.build_proven`: attempts until one passes the proof),
timing each one with wall-clock and process CPU time (CPU time is what a busy,
shared machine distorts least); then it reports the spread, how many seeds needed
a second attempt, the families drawn, the oracle's score on every served variant,
and the memory one proven variant holds (its world, spec and readings: shared by
every episode that plays it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
import tracemalloc
from collections import Counter
from typing import Any

from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.servicebench.variants import build_variant
from servicebench_support_queue.server.tasks.variants import VariantCache

TASKS = ("order_status_lookup", "return_and_refund", "billing_discrepancy")


def seed_range(text: str) -> range:
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def spread(values: list[float]) -> dict[str, float]:
    return {
        "mean": statistics.fmean(values),
        "p50": percentile(values, 0.50),
        "p99": percentile(values, 0.99),
        "max": max(values),
    }


def time_builds(task_id: str, seeds: range) -> dict[str, Any]:
    registry = VariantCache(build_variant, ServiceBenchEnvironment.prove_variant)
    wall_ms, cpu_ms, families, retried = [], [], Counter(), 0
    for seed in seeds:
        wall, cpu = time.perf_counter(), time.process_time()
        variant = registry.build_proven(task_id, seed)
        cpu_ms.append((time.process_time() - cpu) * 1000)
        wall_ms.append((time.perf_counter() - wall) * 1000)
        families[variant.family] += 1
        retried += variant.attempt > 0
    return {
        "wall_ms": spread(wall_ms),
        "cpu_ms": spread(cpu_ms),
        "families": dict(families),
        "seeds_needing_another_attempt": retried,
    }


def oracle_scores(task_id: str, seeds: range) -> dict[str, Any]:
    """Play the oracle through the public reset path on every seed."""
    scores = []
    env = ServiceBenchEnvironment()
    for seed in seeds:
        history = [env.reset(task_id=task_id, seed=seed)]
        while (action := next_action(history)) is not None:
            history.append(env.step(action))
        scores.append(env.score)
    return {
        "episodes": len(scores),
        "mean": statistics.fmean(scores),
        "min": min(scores),
        "all_exactly_one": all(score == 1.0 for score in scores),
    }


def variant_bytes(task_id: str, seeds: range, count: int = 200) -> float:
    """Heap bytes one proven variant keeps alive (world + spec + readings)."""
    registry = VariantCache(build_variant, ServiceBenchEnvironment.prove_variant, capacity=count)
    picked = list(seeds)[:count]
    registry.get(task_id, picked[0])  # warm the imports and caches outside the measurement
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    kept = [registry.build_proven(task_id, seed) for seed in picked]
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    total = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return total / len(kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=seed_range, default=seed_range("1-1000"))
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
            "platform": platform.platform(),
        },
        "seeds": f"{args.seeds.start}-{args.seeds.stop - 1}",
        "tasks": {},
    }
    for task_id in TASKS:
        results["tasks"][task_id] = {
            **time_builds(task_id, args.seeds),
            "oracle": oracle_scores(task_id, args.seeds),
            "bytes_per_variant": variant_bytes(task_id, args.seeds),
        }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"seeds {results['seeds']}, {results['machine']}")
    print(
        "| task | build+prove CPU ms mean / p50 / p99 / max | wall ms mean / p99 | retried | "
        "oracle (all 1.0?) | KB per variant | families |"
    )
    print("|---|---|---|---|---|---|---|")
    for task_id, row in results["tasks"].items():
        cpu, wall = row["cpu_ms"], row["wall_ms"]
        print(
            f"| {task_id} | {cpu['mean']:.2f} / {cpu['p50']:.2f} / {cpu['p99']:.2f} / {cpu['max']:.2f} | "
            f"{wall['mean']:.2f} / {wall['p99']:.2f} | {row['seeds_needing_another_attempt']} | "
            f"{row['oracle']['mean']:.3f} ({row['oracle']['all_exactly_one']}) | "
            f"{row['bytes_per_variant'] / 1024:.1f} | {row['families']} |"
        )


if __name__ == "__main__":
    main()
