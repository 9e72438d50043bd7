"""HTTP load with wrk: whole episodes and single steps, parsed from the Lua script's summary."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

LUA_SCRIPT = Path(__file__).resolve().parent / "lua" / "episodes.lua"


def wrk_binary() -> str:
    found = shutil.which("wrk")
    if found is None:
        raise RuntimeError("wrk not found: apt-get install -y wrk (bench/run_all.sh does it)")
    return found


def run_wrk(url: str, plan_file: Path, connections: int, seconds: float) -> dict[str, Any]:
    """One wrk run of the plan; requests/s, steps/s and latency percentiles (ms)."""
    command = [
        wrk_binary(),
        "-t",
        str(connections),
        "-c",
        str(connections),
        "-d",
        f"{seconds:g}s",
        "--timeout",
        "10s",
        "-s",
        str(LUA_SCRIPT),
        url,
        "--",
        str(plan_file),
    ]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    line = next((row for row in output.splitlines() if row.startswith("BENCH_JSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no summary:\n{output}")
    raw = json.loads(line.removeprefix("BENCH_JSON "))
    duration = raw["duration_us"] / 1e6
    return {
        "requests_per_s": raw["requests"] / duration,
        "steps_per_s": raw["steps"] / duration,
        "episodes_per_s": raw["episodes"] / duration,
        "p50_ms": raw["p50_us"] / 1000,
        "p90_ms": raw["p90_us"] / 1000,
        "p99_ms": raw["p99_us"] / 1000,
        "max_ms": raw["max_us"] / 1000,
        "errors": raw["bad_replies"] + raw["socket_errors"],
        "requests": raw["requests"],
    }
