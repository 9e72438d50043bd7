"""Every benchmark of BENCHMARKS.md, in one run: `python -m bench.run [--quick]`.

Sections (pick some with --only): http, ws, inprocess, asgi, memory, sessions, startup,
stores.
Peers are measured in the same run with the same uvicorn settings and the same
load generator, alternating A B A B round by round, and each ratio is the median
of the per-round ratios, so that drift of a shared machine cancels out.
Results go to bench/results/latest.json and latest.md (latest-quick.* for --quick) and stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import asgi_bench, episodes_load, http_bench, inprocess, store_bench, ws_bench, wsload
from bench.aio import run
from bench.machine import machine_info
from bench.plans import Plan, episode_mix, step_cycle, write_lua
from bench.report import render
from bench.servers import BARE, OPENENV, OURS, WS_FLOOR, WS_IDEAL, RunningServer, serve

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Config:
    rounds: int = 3
    http_seconds: float = 10.0
    http_connections: int = 8
    ws_seconds: float = 8.0
    ws_connections: tuple[int, ...] = (16, 256)
    """A few busy clients, and the hundreds of concurrent rollouts of an RL trainer."""
    live_counts: tuple[int, ...] = (1_000, 10_000, 100_000)
    latency_seconds: float = 8.0
    latency_rounds: int = 6
    """p99s of ~0.4 ms move by 10% from drift alone: more rounds, in alternating order."""
    sessions: int = 1_000
    session_seconds: float = 30.0
    startup_rounds: int = 3


QUICK = Config(
    rounds=2,
    http_seconds=3,
    ws_seconds=3,
    ws_connections=(16,),
    live_counts=(1_000, 5_000),
    latency_seconds=3,
    latency_rounds=2,
    sessions=200,
    session_seconds=5,
    startup_rounds=1,
)


def _median_ratio(rounds: list[dict[str, dict[str, Any]]], metric: str, a: str, b: str) -> float:
    return statistics.median(r[a][metric] / r[b][metric] for r in rounds)


def http_section(config: Config) -> dict[str, Any]:
    """(1) the episode mix and (2) single steps, over HTTP with wrk, against both peers."""
    plans = {"episode_mix": episode_mix(), "single_step": step_cycle()}
    out: dict[str, Any] = {}
    with (
        tempfile.TemporaryDirectory() as folder,
        serve(OURS) as ours,
        serve(OPENENV) as openenv,
        serve(BARE) as bare,
    ):
        for name, plan in plans.items():
            ours_file = write_lua(plan, Path(folder) / f"{name}.lua")
            echo_file = write_lua(plan.as_echo(), Path(folder) / f"{name}-echo.lua")
            rounds = []
            for _ in range(config.rounds):
                rounds.append(
                    {
                        server.target.name: http_bench.run_wrk(
                            server.url, plan_file, config.http_connections, config.http_seconds
                        )
                        for server, plan_file in (
                            (ours, ours_file),
                            (openenv, echo_file),
                            (bare, echo_file),
                        )
                    }
                )
            metric = "requests_per_s" if name == "episode_mix" else "steps_per_s"
            out[name] = {
                "metric": metric,
                "rounds": rounds,
                "vs_bare": _median_ratio(rounds, metric, OURS.name, BARE.name),
                "vs_openenv": _median_ratio(rounds, metric, OURS.name, OPENENV.name),
            }
    return out


WSThroughput = Callable[[str, Plan, int, float], dict[str, Any]]


def _ws_generator() -> tuple[str, WSThroughput]:
    """The C load generator if it builds; else the asyncio client, with a warning."""
    try:
        wsload.build()
        return "wsload (C, bench/wsload.c)", wsload.throughput
    except wsload.Unavailable as error:
        print(
            f"   {error}: falling back to the asyncio client (bench/wsclient.py), which costs 2-3x "
            "more CPU per message and keeps the servers below saturation",
            flush=True,
        )
        return "wsclient.py (asyncio)", lambda url, plan, n, s: run(
            ws_bench.throughput(url, plan, n, s)
        )


def _ws_measure(
    server: RunningServer, plan: Plan, throughput: WSThroughput, connections: int, seconds: float
) -> dict[str, Any]:
    """One run, plus the server process's CPU (all threads) per message during it."""
    before = wsload.process_cpu_seconds(server.pid)
    result = throughput(server.ws_url, plan, connections, seconds)
    used = wsload.process_cpu_seconds(server.pid) - before
    result["server_cpu_us_per_message"] = (
        used / result["samples"] * 1e6 if result["samples"] else float("nan")
    )
    return result


def ws_section(config: Config) -> dict[str, Any]:
    """(3) steps/s through OpenEnv's WebSocket protocol, ours against the reference's /ws,
    with the no-op floor and the minimal ServiceBench server as bounds, per connection count."""
    generator, throughput = _ws_generator()
    plans = {OURS.name: episode_mix()}
    plans[WS_IDEAL.name] = plans[OURS.name]
    plans[OPENENV.name] = plans[WS_FLOOR.name] = plans[OURS.name].as_echo()
    by_connections = []
    with (
        serve(OURS) as ours,
        serve(OPENENV) as openenv,
        serve(WS_FLOOR) as floor,
        serve(WS_IDEAL) as ideal,
    ):
        servers = (ours, openenv, floor, ideal)
        for connections in config.ws_connections:
            for server in servers:  # warm-up, not recorded: first-connection and first-call costs
                throughput(server.ws_url, plans[server.target.name], connections, 1.0)
            rounds = [
                {
                    server.target.name: _ws_measure(
                        server,
                        plans[server.target.name],
                        throughput,
                        connections,
                        config.ws_seconds,
                    )
                    for server in servers
                }
                for _ in range(config.rounds)
            ]
            by_connections.append(
                {
                    "connections": connections,
                    "rounds": rounds,
                    "vs_openenv": _median_ratio(rounds, "steps_per_s", OURS.name, OPENENV.name),
                    "minimal_vs_openenv": _median_ratio(
                        rounds, "steps_per_s", WS_IDEAL.name, OPENENV.name
                    ),
                }
            )
    return {"generator": generator, "by_connections": by_connections}


def inprocess_section(config: Config) -> dict[str, Any]:
    """(4) env.step in-process, on the optimal paths and on the single-step cycle."""
    return {
        "episode_mix": inprocess.step_rates(episode_mix()),
        "single_step": inprocess.step_rates(step_cycle()),
    }


def asgi_section(config: Config) -> dict[str, Any]:
    """Server CPU per request / message with no sockets (each app's ASGI callable, in-process)."""
    return asgi_bench.asgi_section(
        rounds=max(3, config.rounds + 2), cycles=150 if config.rounds > 2 else 50
    )


def memory_section(config: Config) -> dict[str, Any]:
    """(5) RSS per live episode and (6) p99 step latency with 10 vs the most live episodes."""
    plan, cycle = episode_mix(), step_cycle()
    most = max(config.live_counts)
    crowded_env = {"MAX_LIVE_EPISODES": str(2 * most), "EPISODE_TTL_SECONDS": "86400"}
    with (
        serve(OURS, env=crowded_env) as crowded,
        serve(OURS, env={"MAX_LIVE_EPISODES": "10"}) as quiet,
    ):
        for server in (crowded, quiet):  # warm both up: first-request costs are not per episode
            run(episodes_load.step_latency(server.url, cycle, 1.0))
        time.sleep(0.5)
        baseline = crowded.rss_bytes()
        memory, filled = [], 0
        for count in sorted(config.live_counts):
            failures = run(episodes_load.fill(crowded.url, plan, count - filled))
            filled = count
            time.sleep(0.5)
            rss = crowded.rss_bytes()
            memory.append(
                {
                    "live_episodes": count,
                    "rss_mb": rss / 2**20,
                    "failures": failures,
                    "bytes_per_episode": (rss - baseline) / count,
                }
            )
        rounds = []
        for number in range(
            config.latency_rounds
        ):  # A B, B A, A B, ...: drift hits both sides alike
            order = (("10", quiet), (str(most), crowded))
            rounds.append(
                dict(
                    (
                        label,
                        run(episodes_load.step_latency(server.url, cycle, config.latency_seconds)),
                    )
                    for label, server in (order if number % 2 == 0 else order[::-1])
                )
            )
    return {
        "baseline_rss_mb": baseline / 2**20,
        "memory": memory,
        "latency_rounds": rounds,
        "most_live": most,
        "p99_ratio": _median_ratio(rounds, "p99_ms", str(most), "10"),
    }


def sessions_section(config: Config) -> dict[str, Any]:
    """(7) many WebSocket sessions on one worker, each stepping about once a second."""
    with serve(OURS) as ours:
        return run(
            ws_bench.many_sessions(
                ours.ws_url, episode_mix(), config.sessions, config.session_seconds
            )
        )


def startup_section(config: Config) -> dict[str, Any]:
    """(8) process start to the first healthy /health, and the idle RSS a second later, for each server."""
    times: dict[str, list[float]] = {t.name: [] for t in (OURS, OPENENV, BARE)}
    rss: dict[str, list[float]] = {t.name: [] for t in (OURS, OPENENV, BARE)}
    for _ in range(config.startup_rounds):
        for target in (OURS, OPENENV, BARE):
            with serve(target) as server:
                times[target.name].append(server.seconds_to_healthy)
                time.sleep(1.0)
                rss[target.name].append(server.rss_bytes() / 2**20)
    return {
        name: {
            "median_s": statistics.median(values),
            "runs_s": values,
            "idle_rss_mb": statistics.median(rss[name]),
        }
        for name, values in times.items()
    }


def stores_section(config: Config) -> dict[str, Any]:
    """The episode stores (memory, SQLite, Redis; Redis with two workers) under the same mix."""
    return store_bench.stores_section(
        config.rounds, config.http_seconds, config.latency_seconds / 2
    )


SECTIONS: dict[str, Callable[[Config], dict[str, Any]]] = {
    "http": http_section,
    "ws": ws_section,
    "inprocess": inprocess_section,
    "asgi": asgi_section,
    "memory": memory_section,
    "sessions": sessions_section,
    "startup": startup_section,
    "stores": stores_section,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="short runs (a smoke test, not figures)"
    )
    parser.add_argument(
        "--only", nargs="+", choices=sorted(SECTIONS), help="run only these sections"
    )
    args = parser.parse_args(argv)
    config = QUICK if args.quick else Config()
    results: dict[str, Any] = {
        "machine": machine_info(),
        "config": config.__dict__,
        "quick": args.quick,
    }
    for name, section in SECTIONS.items():
        if args.only is None or name in args.only:
            started = time.perf_counter()
            print(f"== {name} ...", flush=True)
            results[name] = section(config)
            print(f"   done in {time.perf_counter() - started:.0f}s", flush=True)
    results["machine"]["loadavg_end"] = list(os.getloadavg())
    RESULTS.mkdir(exist_ok=True)
    stem = "latest-quick" if args.quick else "latest"  # a smoke run never overwrites the figures
    (RESULTS / f"{stem}.json").write_text(json.dumps(results, indent=2))
    markdown = render(results)
    (RESULTS / f"{stem}.md").write_text(markdown)
    print(markdown)


if __name__ == "__main__":
    main()
