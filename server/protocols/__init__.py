"""The door: uvicorn's HTTP and WebSocket protocols with limits on what a client makes them hold.

uvicorn bounds little before the app runs: a request head may trickle in for ever and be
of any size, a connection that never sends a request is never closed, a WebSocket
message may be 16 MiB decompressed, and one read may inflate a thousand of them. These
protocol classes (uvicorn's own, subclassed) add the limits; the app adds the rest,
which it can enforce whatever server runs it (a body's deadline and size, a WebSocket's
idle time, its message size, the Origin).

Run them with uvicorn's `--http` and `--ws` options (the Dockerfile's CMD, the console script
`servicebench-support-queue-server` (server/cli.py) and the commands of docs/api.md all do):

    uvicorn servicebench_support_queue.server.app:app \\
        --http servicebench_support_queue.server.protocols:HttpProtocol \\
        --ws servicebench_support_queue.server.protocols:WebSocketProtocol

They read their limits from the same environment variables as the app (MAX_BODY_BYTES,
HEADER_TIMEOUT_SECONDS), so the door and the app always agree.
"""

from __future__ import annotations

from typing import Any

from ..settings import Settings
from .http import HttpProtocol
from .limits import door_limits_of
from .websocket import WebSocketProtocol

__all__ = ["HttpProtocol", "WebSocketProtocol", "UVICORN_ARGS", "uvicorn_options"]

HTTP_PROTOCOL = f"{__name__}:HttpProtocol"
WS_PROTOCOL = f"{__name__}:WebSocketProtocol"
UVICORN_ARGS: tuple[str, ...] = ("--http", HTTP_PROTOCOL, "--ws", WS_PROTOCOL)
"""The uvicorn command-line options that put this door in front of the app."""


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """`uvicorn.run` keyword arguments for the door (what UVICORN_ARGS says on a command line,
    plus uvicorn's own WebSocket message limit set to the door's), as import strings: uvicorn
    hands them to each worker process."""
    return {
        "http": HTTP_PROTOCOL,
        "ws": WS_PROTOCOL,
        "ws_max_size": door_limits_of(settings).ws_message_bytes,
    }
