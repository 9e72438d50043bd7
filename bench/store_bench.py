"""The episode stores under load: memory, SQLite and Redis, one worker each, and Redis with
two workers; the same wrk episode mix as figure 1, round after round (A B C D, ...).

Per run it records what wrk saw (requests/s, steps/s), the CPU every process spent
(the server's, all its workers; Redis's; wrk's own) and, from Redis's INFO, how many
commands Redis ran. Then per backend: server CPU per step on the single-step cycle,
and each step's latency timed one by one (bench/episodes_load.py: no coordinated-
omission correction), whose p99 is the figure.
"""

from __future__ import annotations

import contextlib
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import episodes_load, http_bench
from bench.aio import run
from bench.plans import episode_mix, step_cycle, write_lua
from bench.servers import OURS, RunningServer, free_port, serve
from bench.wsload import process_cpu_seconds

MEMORY, SQLITE, REDIS, REDIS_2W = "memory", "sqlite", "redis", "redis, 2 workers"
CONNECTIONS = (16, 64)
"""wrk connections (one per wrk thread): a few busy clients, and enough requests in flight to
keep the workers busy while each waits for its store (a trainer runs hundreds of rollouts)."""


@contextlib.contextmanager
def redis_server(directory: Path) -> Iterator[tuple[str, int]]:
    """A redis-server as the tests and compose.yaml run it: AOF, `appendfsync always`."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server not found: apt-get install -y redis-server")
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory)]
    command += ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while redis_info(port) is None:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0", process.pid
    finally:
        process.terminate()
        process.wait(timeout=20)


def redis_info(port: int) -> dict[str, int] | None:
    """Commands Redis has run so far, by name (INFO commandstats); None if it is not up."""
    import redis

    try:
        stats = redis.Redis(port=port, socket_timeout=5).info("commandstats")
    except redis.RedisError:
        return None
    return {name.removeprefix("cmdstat_"): row["calls"] for name, row in stats.items()}


def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children (uvicorn's workers)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return process_cpu_seconds(pid) + sum(tree_cpu_seconds(int(child)) for child in children)


def measured_wrk(
    server: RunningServer,
    plan_file: Path,
    seconds: float,
    redis: tuple[int, int] | None,
    connections: int = CONNECTIONS[0],
) -> dict[str, Any]:
    """One wrk run, with the CPU of the server, of Redis and of wrk itself per request."""
    server_cpu, wrk_cpu = tree_cpu_seconds(server.pid), resource.getrusage(resource.RUSAGE_CHILDREN)
    redis_cpu = process_cpu_seconds(redis[1]) if redis else 0.0
    commands = redis_info(redis[0]) if redis else None
    result = http_bench.run_wrk(server.url, plan_file, connections, seconds)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    requests, steps = result["requests"], result["steps_per_s"] * seconds
    server_seconds = tree_cpu_seconds(server.pid) - server_cpu
    result["server_cores"] = server_seconds / seconds
    result["server_cpu_us_per_request"] = server_seconds / requests * 1e6
    result["server_cpu_us_per_step"] = server_seconds / steps * 1e6
    wrk_seconds = after.ru_utime + after.ru_stime - wrk_cpu.ru_utime - wrk_cpu.ru_stime
    result["wrk_cores"] = wrk_seconds / seconds
    if redis:
        redis_seconds = process_cpu_seconds(redis[1]) - redis_cpu
        result["redis_cores"] = redis_seconds / seconds
        result["redis_cpu_us_per_step"] = redis_seconds / steps * 1e6
        now = redis_info(redis[0]) or {}
        ran = {k: v - (commands or {}).get(k, 0) for k, v in now.items() if k != "info"}
        result["redis_commands_per_request"] = sum(ran.values()) / requests
        result["redis_scripts_per_request"] = ran.get("evalsha", 0) / requests
    return result


def stores_section(rounds: int, seconds: float, latency_seconds: float) -> dict[str, Any]:
    mix, cycle = episode_mix(), step_cycle()
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        redis_url, redis_pid = stack.enter_context(redis_server(folder / "redis"))
        redis_port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
        stores = {
            MEMORY: ({"EPISODE_STORE": "memory"}, ()),
            SQLITE: ({"EPISODE_STORE": f"sqlite://{folder / 'episodes.db'}"}, ()),
            REDIS: ({"EPISODE_STORE": redis_url}, ()),
            REDIS_2W: ({"EPISODE_STORE": redis_url}, ("--workers", "2")),
        }
        servers = {
            name: stack.enter_context(serve(OURS, env=env, args=args))
            for name, (env, args) in stores.items()
        }
        files = {
            "mix": write_lua(mix, folder / "mix.lua"),
            "cycle": write_lua(cycle, folder / "cycle.lua"),
        }
        uses_redis = {name: (redis_port, redis_pid) if "redis" in name else None for name in stores}
        for name, server in servers.items():  # warm-up (and both workers up), not recorded
            time.sleep(3 if name == REDIS_2W else 0)
            http_bench.run_wrk(server.url, files["mix"], CONNECTIONS[-1], 2.0)
        mix_rounds: dict[int, list[Any]] = {c: [] for c in CONNECTIONS}
        cycle_rounds, latency_rounds = [], []
        for number in range(rounds):
            order = list(servers.items())
            order = order if number % 2 == 0 else order[::-1]  # A B C D, D C B A, ...
            for connections in CONNECTIONS:
                mix_rounds[connections].append(
                    {
                        n: measured_wrk(s, files["mix"], seconds, uses_redis[n], connections)
                        for n, s in order
                    }
                )
            cycle_rounds.append(
                {
                    n: measured_wrk(s, files["cycle"], max(1, round(seconds / 2)), uses_redis[n])
                    for n, s in order
                }
            )
            latency_rounds.append(
                {
                    n: run(episodes_load.step_latency(s.url, cycle, latency_seconds))
                    for n, s in order
                }
            )
    return {
        "by_connections": [
            {
                "connections": connections,
                "mix_rounds": found,
                "vs_memory": {
                    name: _median_ratio(found, "requests_per_s", name, MEMORY) for name in stores
                },
                "two_workers_vs_one": _median_ratio(found, "requests_per_s", REDIS_2W, REDIS),
            }
            for connections, found in mix_rounds.items()
        ],
        "cycle_rounds": cycle_rounds,
        "latency_rounds": latency_rounds,
    }


def _median_ratio(rounds: list[dict[str, dict[str, Any]]], metric: str, a: str, b: str) -> float:
    return statistics.median(r[a][metric] / r[b][metric] for r in rounds)


def _median(rounds: list[dict[str, dict[str, Any]]], name: str, metric: str) -> float:
    return statistics.median(r[name][metric] for r in rounds)


def render(section: dict[str, Any]) -> list[str]:
    """The stores' tables for bench/results/latest.md."""
    lines = []
    for run_ in section["by_connections"]:
        mix = run_["mix_rounds"]
        lines += [
            f"### Episode stores: the HTTP episode mix, wrk with {run_['connections']} "
            "connections (medians of the rounds)",
            "",
            "| store | req/s | vs memory | server CPU | Redis CPU | wrk's CPU | "
            "Redis commands / scripts per request | p99 (wrk) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name in mix[0]:
            redis = "redis" in name
            lines.append(
                f"| {name} | {_median(mix, name, 'requests_per_s'):,.0f} "
                f"| {run_['vs_memory'][name]:.2f}x "
                f"| {_median(mix, name, 'server_cores'):.2f} cores "
                + (f"| {_median(mix, name, 'redis_cores'):.2f} cores " if redis else "| - ")
                + f"| {_median(mix, name, 'wrk_cores'):.2f} cores "
                + (
                    f"| {_median(mix, name, 'redis_commands_per_request'):.1f} / "
                    f"{_median(mix, name, 'redis_scripts_per_request'):.2f} "
                    if redis
                    else "| - "
                )
                + f"| {_median(mix, name, 'p99_ms'):.1f} ms |"
            )
        lines += [
            "",
            f"Two workers against one, both on Redis: {run_['two_workers_vs_one']:.2f}x req/s.",
            "",
        ]
    cycle, latency = section["cycle_rounds"], section["latency_rounds"]
    lines += [
        f"### Episode stores: CPU per step (single-step cycle, wrk, {CONNECTIONS[0]} connections) "
        "and step latency (2 clients, each step timed)",
        "",
        "| store | server CPU µs/step | Redis CPU µs/step | step p50 | step p99 |",
        "|---|---|---|---|---|",
    ]
    for name in cycle[0]:
        redis_cpu = (
            f"{_median(cycle, name, 'redis_cpu_us_per_step'):.0f}" if "redis" in name else "-"
        )
        lines.append(
            f"| {name} | {_median(cycle, name, 'server_cpu_us_per_step'):.0f} | {redis_cpu} "
            f"| {_median(latency, name, 'p50_ms'):.2f} ms | {_median(latency, name, 'p99_ms'):.2f} ms |"
        )
    return lines + [""]
