"""WebSocket throughput with a C load generator (bench/wsload.c), for figure 3.

Why C: on a 2-vCPU machine the load generator shares the CPUs with the server.
The asyncio client (bench/wsclient.py) spends 20-45 µs of CPU per message and
keeps the servers below saturation. wsload is to WebSocket what wrk is to HTTP:
one thread, one epoll loop, nonblocking sockets, zero-mask client frames,
replies checked in place: about 1 µs of user CPU per message, plus the kernel's
loopback send/recv (10-15 µs in all), so the servers run at a full core.

How it runs: `throughput()` builds the binary on demand (gcc into
bench/results/bin/, git-ignored; rebuilt when the source is newer), writes the
plan's cycle to a file, one message per line:

    FLAGS <tab> MESSAGE <tab> CHECK <tab> CHECK ...

FLAGS `s` marks a step (counted in steps/s) and `b` an episode's reset (where a
connection may start: connection i starts at the i-th reset, as ws_bench does).
Every reply must start with `{"type":"observation"` (`^` check, spaces ignored);
the last reply of an episode with `ends_done` must contain `"done":true` and
`"cumulative_reward":1.0` (`+` checks), or must not contain `"done":true` if
`ends_done` is False (`-` check), as bench/lua/episodes.lua checks over HTTP.
wsload then plays the cycle on N connections for D seconds (handshakes first,
off the clock) and prints one JSON object: counts, errors (bad replies, failed
handshakes, lost connections, replies timed out), steps/s, messages/s, its own
CPU seconds, and latency percentiles (nearest rank, ms, as bench/stats.py).

    python -m bench.wsload WS_URL [CONNECTIONS SECONDS]   # a manual check, ServiceBench plan
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from bench.plans import Plan
from bench.ws_bench import OBSERVATION_PREFIX, messages

SOURCE = Path(__file__).resolve().parent / "wsload.c"
BINARY = Path(__file__).resolve().parent / "results" / "bin" / "wsload"
DONE, PERFECT = '"done":true', '"cumulative_reward":1.0'


class Unavailable(RuntimeError):
    """No C compiler: the caller falls back to the Python client."""


def build() -> Path:
    """The wsload binary, compiled if missing or older than its source."""
    if BINARY.exists() and BINARY.stat().st_mtime >= SOURCE.stat().st_mtime:
        return BINARY
    compiler = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        raise Unavailable("no C compiler (gcc or cc) on PATH to build bench/wsload.c")
    BINARY.parent.mkdir(parents=True, exist_ok=True)
    partial = BINARY.with_suffix(f".{os.getpid()}.tmp")  # atomic: never run a half-written binary
    subprocess.run(
        [compiler, "-std=c11", "-O2", "-Wall", "-Wextra", "-o", str(partial), str(SOURCE)],
        check=True,
    )
    partial.replace(BINARY)
    return BINARY


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, all threads (from /proc): what a server spent serving the load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cycle_lines(plan: Plan) -> list[str]:
    """The plan's cycle in wsload's line format, with the checks each reply must pass."""
    cycle = iter(messages(plan))
    lines = []
    for episode in plan.episodes:
        for position in range(len(episode.steps) + 1):
            message, is_step = next(cycle)
            flags = ("s" if is_step else "") + ("b" if position == 0 else "") or "-"
            checks = ["^" + OBSERVATION_PREFIX.decode()]
            if position == len(episode.steps) and episode.ends_done is not None:
                checks += ["+" + DONE, "+" + PERFECT] if episode.ends_done else ["-" + DONE]
            fields = [flags, message.decode(), *checks]
            if any("\t" in field or "\n" in field for field in fields):
                raise ValueError(f"a tab or newline in a message or check: {fields}")
            lines.append("\t".join(fields))
    return lines


def run_wsload(
    ws_url: str, cycle_file: Path, connections: int, seconds: float, timeout: float = 10.0
) -> dict[str, Any]:
    """One wsload run: its JSON, with missing percentiles (no replies) as NaN like stats.summarize."""
    command = [
        str(build()),
        "-c",
        str(connections),
        "-d",
        str(seconds),
        "-t",
        str(timeout),
        ws_url,
        str(cycle_file),
    ]
    result = subprocess.run(
        command, capture_output=True, text=True, check=True, timeout=seconds + 3 * timeout + 10
    )
    out = json.loads(result.stdout)
    return {key: math.nan if value is None else value for key, value in out.items()}


def throughput(ws_url: str, plan: Plan, connections: int, seconds: float) -> dict[str, Any]:
    """Same result shape as ws_bench.throughput (steps_per_s, errors, p50_ms...), plus wsload's counts."""
    with tempfile.TemporaryDirectory() as folder:
        cycle_file = Path(folder) / f"{plan.name}.cycle"
        cycle_file.write_text("\n".join(cycle_lines(plan)) + "\n", encoding="utf-8")
        out = run_wsload(ws_url, cycle_file, connections, seconds)
    out["cpu_us_per_message"] = (
        out["cpu_s"] / out["messages"] * 1e6 if out["messages"] else math.nan
    )
    return {"generator": "wsload", **out}


if __name__ == "__main__":
    import sys

    from bench.plans import episode_mix

    count, duration = (int(sys.argv[2]), float(sys.argv[3])) if len(sys.argv) > 3 else (16, 5.0)
    print(json.dumps(throughput(sys.argv[1], episode_mix(), count, duration), indent=2))
