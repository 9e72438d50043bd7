"""1,000 WebSocket sessions stepping about once a second, on one worker: this checkout beside
another revision in the same run (issue 21; BENCHMARKS.md figure 7).

Each server runs `bench.instrumented:app` (the app, plus a record of the garbage
collector's pauses and the event loop's lag, in the server process), one uvicorn worker.
bench/ws_bench.py's `many_sessions` connects 1,000 sessions, then each plays the
ServiceBench episode mix, one message about every second (seeded phases), for SECONDS;
every message is timed. Rounds alternate A B, B A.

    python -m bench.sessions_compare [--ref d02cc68] [--sessions 1000] [--seconds 30] [--rounds 2]

`--ref` defaults to the last commit before the episode stores (server/store/).
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

import httpx

from bench import ws_bench
from bench.aio import run
from bench.plans import episode_mix
from bench.servers import REPO, Target, checkout, serve
from servicebench_support_queue.server.servicebench.tasks import SEED_TASK_IDS

BEFORE_STORES = "d02cc68"
"""The parent of 8d8a0df, which put every transport's episodes in the episode stores."""
APP = "bench.instrumented:app"


def _round(server: Any, sessions: int, seconds: float) -> dict[str, Any]:
    httpx.get(f"{server.url}/__diagnostics", timeout=30)  # start the record afresh
    # The seed documents' tasks: the revision before the stores serves those three alone, and
    # answers the later task cards with cheap errors, which would flatter its latency.
    plan = episode_mix(SEED_TASK_IDS)
    result = run(ws_bench.many_sessions(server.ws_url, plan, sessions, seconds))
    result["server"] = httpx.get(f"{server.url}/__diagnostics", timeout=60).json()
    return result


def compare(ref: str, sessions: int, seconds: float, rounds: int) -> dict[str, Any]:
    ours = Target("this checkout", APP, REPO, ws_path="/servicebench/ws")
    results: dict[str, Any] = {"ref": ref, "sessions": sessions, "rounds": []}
    with checkout(ref) as old_dir:
        before = Target(f"ref {ref}", APP, old_dir, ws_path="/servicebench/ws")
        with serve(ours) as a, serve(before) as b:
            for number in range(rounds):
                row = {}
                for server in (a, b) if number % 2 == 0 else (b, a):
                    row[server.target.name] = _round(server, sessions, seconds)
                results["rounds"].append(row)
    failed = [name for row in results["rounds"] for name, got in row.items() if got["errors"]]
    if failed:  # an error reply is cheap: a latency ratio over errors would mean nothing
        results["p99_ratio"] = None
        results["invalid"] = f"error replies from {sorted(set(failed))}"
        return results
    results["p99_ratio"] = statistics.median(
        row[before.name]["p99_ms"] / row[ours.name]["p99_ms"] for row in results["rounds"]
    )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default=BEFORE_STORES)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(json.dumps(compare(args.ref, args.sessions, args.seconds, args.rounds), indent=2))


if __name__ == "__main__":
    main()
