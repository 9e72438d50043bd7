"""What the benchmarks ran on: recorded with every result, since only same-run ratios compare."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES = (
    "openenv",
    "fastapi",
    "starlette",
    "uvicorn",
    "uvloop",
    "httptools",
    "websockets",
    "pydantic",
    "pydantic-core",
)


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _wrk_version() -> str:
    try:
        result = subprocess.run(["wrk", "--version"], capture_output=True, text=True)
    except FileNotFoundError:
        return "not installed"
    return (result.stdout or result.stderr).splitlines()[0].strip()


def _memory_gb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 2**20
    return 0.0


def machine_info() -> dict[str, Any]:
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": _cpu_model(),
        "memory_gb": round(_memory_gb(), 1),
        "kernel": platform.release(),
        "python": sys.version.split()[0],
        "packages": {name: metadata.version(name) for name in PACKAGES},
        "wrk": _wrk_version(),
        "loadavg_start": list(os.getloadavg()),
    }
