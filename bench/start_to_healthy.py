"""Process start to healthy: this server beside a bare FastAPI app, under the same uvicorn.

    .venv/bin/python -m bench.start_to_healthy --rounds 10 [--before CHECKOUT] [--json]

Each round starts each app once (alternately, so the drift of a shared machine touches both),
as the Dockerfile runs it: one uvicorn worker on loopback (bench/servers.py). Per start:

- `healthy_s`: from `Popen` to the first 200 of a raw `GET /health`;
- `cpu_s`: the CPU time the process had used by then (user + system, from /proc), which a
  busy machine distorts less than wall time;
- for this server, `graded_s`: from `Popen` until a Support Queue episode on a held-out seed has
  been reset and one ticket graded (what waits for the safety rules, warmed after start-up).

`--before` adds another tree of this project (e.g. `git archive main | tar -x -C /tmp/before`
then `uv sync --frozen` there), served by its own venv, to each round. The ratio is the median
of the per-round ratios. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import httpx

from bench.servers import OURS, REPO, RunningServer, Target, serve
from bench.web_interface_bench import cpu_seconds

BARE = Target("bare-fastapi", "bench.bare_app:app", REPO)
ACTION = {"priority": "P3", "disposition": "respond"}  # and the first queue the ticket allows


def graded_after(server: RunningServer, started: float) -> float:
    """Seconds from `started` until a seeded Support Queue reset and one step have answered."""
    with httpx.Client(base_url=server.url, timeout=300) as client:
        reset = client.post("/reset", json={"task_id": "easy_inbox_cleanup", "seed": 100_003})
        reset.raise_for_status()
        queue = reset.json()["observation"]["allowed_queues"][0]
        action = {**ACTION, "queue": queue}
        body = {"episode_id": reset.json()["episode_id"], "action": action}
        client.post("/step", json=body).raise_for_status()
    return time.perf_counter() - started


def one_start(target: Target) -> dict[str, float]:
    started = time.perf_counter()
    with serve(target, timeout=600) as server:
        row = {"healthy_s": server.seconds_to_healthy, "cpu_s": cpu_seconds(server.pid)}
        if target.app == OURS.app:
            row["graded_s"] = graded_after(server, started)
    return row


def median_ratio(ours: list[float], peer: list[float]) -> float:
    return statistics.median(a / b for a, b in zip(ours, peer, strict=True))


def run(rounds: int, before: Path | None) -> dict[str, Any]:
    targets = {"ours": OURS, "bare": BARE}
    if before is not None:
        python = str(before / ".venv" / "bin" / "python")
        targets["before"] = Target("before", OURS.app, before, python=python)
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in targets}
    for _ in range(rounds):
        for name, target in targets.items():
            rows[name].append(one_start(target))
    result: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "load_at_end": _load()},
        "rounds": rounds,
    }
    for name, found in rows.items():
        result[name] = {
            key: {
                "median": round(statistics.median(row[key] for row in found), 3),
                "min": round(min(row[key] for row in found), 3),
                "max": round(max(row[key] for row in found), 3),
            }
            for key in found[0]
        }
    for peer in (name for name in rows if name != "ours"):
        for key in ("healthy_s", "cpu_s"):
            ours = [row[key] for row in rows["ours"]]
            other = [row[key] for row in rows[peer]]
            result[f"ratio_{key}_vs_{peer}"] = round(median_ratio(ours, other), 2)
    return result


def _load() -> str:
    with open("/proc/loadavg") as loadavg:
        return " ".join(loadavg.read().split()[:3])


def markdown(result: dict[str, Any]) -> str:
    def cell(name: str, key: str) -> str:
        figure = result[name].get(key)
        if figure is None:
            return "-"
        return f"{figure['median']:.2f} s ({figure['min']:.2f}–{figure['max']:.2f})"

    names = {"ours": "this server", "before": "before (--before)", "bare": "bare FastAPI"}
    lines = [
        "| app | start → healthy | CPU by then | start → first Support Queue grade |",
        "|---|---|---|---|",
    ]
    for name, label in names.items():
        if name in result:
            lines.append(
                f"| {label} | {cell(name, 'healthy_s')} | {cell(name, 'cpu_s')} | "
                f"{cell(name, 'graded_s')} |"
            )
    for peer in ("bare", "before"):
        if f"ratio_healthy_s_vs_{peer}" in result:
            lines.append(
                f"| this server / {names[peer]} | {result[f'ratio_healthy_s_vs_{peer}']:.2f}x | "
                f"{result[f'ratio_cpu_s_vs_{peer}']:.2f}x | |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--before", type=Path, help="another checkout, with its .venv, to compare")
    parser.add_argument("--json", action="store_true", help="print the JSON, not the table")
    args = parser.parse_args()
    result = run(args.rounds, args.before)
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    print(f"{args.rounds} rounds; load average at the end {result['machine']['load_at_end']}")


if __name__ == "__main__":
    main()
