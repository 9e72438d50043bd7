"""ServiceBench + Support Queue: one OpenEnv environment server, two environments.

The repository root is this package: pyproject.toml maps it to the import name
`servicebench_support_queue`, so `pip install .` adds exactly one top-level package
(plus console scripts) and every module inside imports its neighbours relatively.

    from servicebench_support_queue import ServiceBenchEnv, SupportQueueAction
    from servicebench_support_queue.server.app import create_app

The public names below (the wire types of `models` and the clients of `client`) are
loaded on first use: importing the package alone costs nothing, so `inference.py`
can check its flags before the heavy imports (OpenEnv, httpx) happen.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any

__version__ = "1.0.0"
"""The one version source: pyproject.toml reads it, and so do /metadata, OpenAPI and MCP."""

DATA_DIR = Path(__file__).resolve().parent / "data"
"""The seed data, scenario families and rule tables (installed as package data)."""

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "TaskCard",
            "ServiceBenchAction",
            "ServiceBenchObservation",
            "ServiceBenchState",
            "SupportQueueAction",
            "SupportQueueObservation",
            "SupportQueueState",
            "Ticket",
        ),
        "models",
    ),
    **dict.fromkeys(
        (
            "EnvHttpClient",
            "AsyncEnvHttpClient",
            "ServiceBenchEnv",
            "SupportQueueEnv",
            "EnvClientError",
            "EnvServerError",
        ),
        "client",
    ),
}

__all__ = ["DATA_DIR", "__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups find it directly
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
