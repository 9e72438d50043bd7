"""Build + prove time of seeded Support Queue variants, their memory, and the heuristic on them.

    .venv/bin/python -m bench.sq_variants_bench                      # seeds 1-1000 of every task
    .venv/bin/python -m bench.sq_variants_bench --seeds 100000-100199 --json

For each task it builds and proves every seed's variant the way `reset` does on a
cache miss (`VariantCache.build_proven`: attempts until one passes the proof),
timing each with wall-clock and process CPU time (CPU time is what a busy, shared
machine distorts least), after a warm-up that fills the stemming and fact caches.
It reports the spread, how many seeds needed another attempt, the situations drawn,
the memory one proven variant holds (shared by every episode that plays it), the
time of a cached `reset`, and the heuristic policy's mean score on those seeds.
Nothing here is a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import tracemalloc
from collections import Counter
from typing import Any

from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.heuristic import triage
from servicebench_support_queue.server.support_queue.proof import prove
from servicebench_support_queue.server.support_queue.scenarios import COMPOSITIONS
from servicebench_support_queue.server.support_queue.variants import build_variant
from servicebench_support_queue.server.tasks.variants import VariantCache

WARM_UP_SEEDS = range(900_000, 900_050)


def seed_range(text: str) -> range:
    first, _, last = text.partition("-")
    return range(int(first), int(last or first) + 1)


def spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    pick = lambda share: ordered[min(len(ordered) - 1, int(share * len(ordered)))]  # noqa: E731
    return {
        "mean": round(statistics.fmean(values), 3),
        "p50": round(pick(0.5), 3),
        "p99": round(pick(0.99), 3),
        "max": round(ordered[-1], 3),
    }


def time_builds(task_id: str, seeds: range) -> dict[str, Any]:
    registry = VariantCache(build_variant, prove)
    for seed in WARM_UP_SEEDS:
        registry.build_proven(task_id, seed)
    registry.rejections = 0
    wall_ms, cpu_ms, situations, retried = [], [], Counter(), 0
    for seed in seeds:
        wall, cpu = time.perf_counter(), time.process_time()
        variant = registry.build_proven(task_id, seed)
        cpu_ms.append((time.process_time() - cpu) * 1000)
        wall_ms.append((time.perf_counter() - wall) * 1000)
        situations.update(f.situation for f in variant.factors)
        retried += variant.attempt > 0
    return {
        "build_and_prove_wall_ms": spread(wall_ms),
        "build_and_prove_cpu_ms": spread(cpu_ms),
        "seeds_needing_another_attempt": retried,
        "rejected_attempts": registry.rejections,
        "situations": dict(sorted(situations.items())),
    }


def variant_bytes(task_id: str, seeds: range) -> int:
    """Mean bytes allocated per proven variant kept alive (tickets, texts, compiled facts)."""
    registry = VariantCache(build_variant, prove, capacity=len(seeds))
    for seed in WARM_UP_SEEDS:
        registry.build_proven(task_id, seed)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for seed in seeds:
        registry.get(task_id, seed)
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
    tracemalloc.stop()
    return grown // len(seeds)


def cached_reset_us(task_id: str, seed: int, repeats: int = 2000) -> float:
    env = SupportQueueEnvironment()
    env.reset(task_id=task_id, seed=seed)
    start = time.perf_counter()
    for _ in range(repeats):
        env.reset(task_id=task_id, seed=seed)
    return round((time.perf_counter() - start) / repeats * 1e6, 1)


def heuristic_score(task_id: str, seeds: range) -> dict[str, float]:
    env, scores = SupportQueueEnvironment(), []
    for seed in seeds:
        observation = env.reset(task_id=task_id, seed=seed)
        while not observation.done:
            observation = env.step(triage(observation))
        scores.append(env.score)
    return {
        "episodes": len(scores),
        "mean": round(statistics.fmean(scores), 4),
        "stderr": round(statistics.stdev(scores) / len(scores) ** 0.5, 4),
        "min": min(scores),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=seed_range, default=seed_range("1-1000"))
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    report: dict[str, Any] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "seeds": f"{args.seeds.start}-{args.seeds.stop - 1}",
        "tasks": {},
    }
    for task_id in COMPOSITIONS:
        report["tasks"][task_id] = {
            **time_builds(task_id, args.seeds),
            "bytes_per_proven_variant": variant_bytes(task_id, args.seeds[:200]),
            "cached_reset_us": cached_reset_us(task_id, args.seeds.start),
            "heuristic": heuristic_score(task_id, args.seeds),
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"Python {report['python']} on {report['machine']}, seeds {report['seeds']}")
    for task_id, row in report["tasks"].items():
        cpu, wall = row["build_and_prove_cpu_ms"], row["build_and_prove_wall_ms"]
        print(
            f"\n{task_id}\n  build+prove cpu ms  mean {cpu['mean']}  p50 {cpu['p50']}  "
            f"p99 {cpu['p99']}  max {cpu['max']}\n  build+prove wall ms mean {wall['mean']}  "
            f"p50 {wall['p50']}  p99 {wall['p99']}  max {wall['max']}\n  seeds needing another "
            f"attempt: {row['seeds_needing_another_attempt']}\n  bytes per proven variant: "
            f"{row['bytes_per_proven_variant']}\n  cached reset: {row['cached_reset_us']} us\n"
            f"  heuristic: {row['heuristic']}"
        )


if __name__ == "__main__":
    main()
