"""Does the event loop stay free while clients reset fresh seeds? (issue 21)

Eight clients reset Support Queue episodes on fresh seeds, back to back (each reset draws
and proves a new variant: tens of milliseconds of CPU), while one client asks `/health`
every 20 ms and another plays ServiceBench steps, each timed. The same load runs against
this checkout and against the code of another revision (`--ref`, a temporary git worktree),
alternating A B, B A round by round, one uvicorn worker each:

    python -m bench.loop_bench [--ref main] [--seconds 10] [--rounds 2]

Prints JSON: per server and round, /health and step latency (p50, p99, max, in ms) and
resets per second; then the median ratios (ref / this) of the /health and step p50s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Iterator
from typing import Any

from bench.rawhttp import HttpConnection
from bench.servers import OURS, Target, checkout, serve
from bench.stats import summarize

RESETTERS = 8
PROBE_INTERVAL = 0.02
STEP = json.dumps(
    {"service": "user", "endpoint": "/users/lookup", "params": {"email": "jane.doe@example.com"}}
).encode()


async def _resetter(url: str, seeds: Iterator[int], until: float, counts: dict) -> None:
    connection = await HttpConnection.connect(url)
    while time.perf_counter() < until:
        body = json.dumps({"task_id": "hard_exec_escalations", "seed": next(seeds)}).encode()
        status, _ = await connection.post("/reset", body)
        counts["resets"] += status == 200
        counts["errors"] += status != 200
    await connection.close()


async def _prober(url: str, until: float, latencies: list[float]) -> None:
    connection = await HttpConnection.connect(url)
    while time.perf_counter() < until:
        started = time.perf_counter()
        status, _ = await connection.get("/health")
        assert status == 200
        latencies.append(time.perf_counter() - started)
        await asyncio.sleep(PROBE_INTERVAL)
    await connection.close()


async def _stepper(url: str, until: float, latencies: list[float]) -> None:
    connection = await HttpConnection.connect(url)
    while time.perf_counter() < until:
        _, body = await connection.post("/reset", b'{"task_id": "billing_discrepancy"}')
        episode = json.loads(body)["episode_id"]
        for _ in range(10):
            started = time.perf_counter()
            status, _ = await connection.post("/step", STEP, {"X-Episode-Id": episode})
            latencies.append(time.perf_counter() - started)
            await asyncio.sleep(PROBE_INTERVAL)
    await connection.close()


async def load(url: str, seconds: float, first_seed: int) -> dict[str, Any]:
    until = time.perf_counter() + seconds
    seeds = iter(range(first_seed, first_seed + 1_000_000))
    counts = {"resets": 0, "errors": 0}
    health: list[float] = []
    steps: list[float] = []
    await asyncio.gather(
        *(_resetter(url, seeds, until, counts) for _ in range(RESETTERS)),
        _prober(url, until, health),
        _stepper(url, until, steps),
    )
    return {
        "resets_per_s": counts["resets"] / seconds,
        "reset_errors": counts["errors"],
        "health": summarize(health),
        "step": summarize(steps),
    }


def run(ref: str, seconds: float, rounds: int) -> dict[str, Any]:
    results: dict[str, Any] = {"ref": ref, "rounds": []}
    with checkout(ref) as old_dir:
        before = Target(f"ref {ref}", OURS.app, old_dir)
        with serve(OURS) as ours, serve(before) as theirs:
            for number in range(rounds):
                order = (ours, theirs) if number % 2 == 0 else (theirs, ours)
                row = {}
                for server in order:
                    first_seed = 10_000 + 5_000 * (2 * number + (server is theirs))
                    row[server.target.name] = asyncio.run(load(server.url, seconds, first_seed))
                results["rounds"].append(row)
    names = (before.name, OURS.name)
    for metric in ("health", "step"):
        results[f"{metric}_p50_ratio"] = statistics.median(
            row[names[0]][metric]["p50_ms"] / row[names[1]][metric]["p50_ms"]
            for row in results["rounds"]
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default="main")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(json.dumps(run(args.ref, args.seconds, args.rounds), indent=2))


if __name__ == "__main__":
    main()
