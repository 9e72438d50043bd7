"""The limits the door enforces, read once per process from the settings (server/settings.py)."""

from __future__ import annotations

import asyncio
import json
import struct
from dataclasses import dataclass
from functools import cache
from http import HTTPStatus
from typing import Any

from uvicorn.config import Config
from uvicorn.server import ServerState

from ..settings import Settings

try:  # the kernel's send queue, to see a slow client read (Linux and most Unixes)
    import fcntl
    import termios
except ImportError:  # pragma: no cover - Windows: the transport's buffer alone
    fcntl = termios = None  # type: ignore[assignment]

MAX_HEAD_BYTES = 32 * 1024
"""A request line plus headers larger than this answers 431 (uvicorn's httptools has no limit)."""
MAX_PIPELINED = 16
"""Requests a client may send ahead of its answers on one connection (HTTP pipelining)."""
WS_DOOR_FACTOR = 2
"""uvicorn's WebSocket message limit is this many times MAX_BODY_BYTES: a message between the
two gets the app's 413 error reply and the session goes on; a larger one is refused by the
WebSocket protocol itself (close 1009, "message too big") before it is read, decompressed or
not. The episode of a connection closed so survives it (`resume` it on a new connection)."""


@dataclass(frozen=True)
class DoorLimits:
    header_timeout: float
    send_timeout: float
    """A connection whose client reads none of what it was sent for this long is dropped."""
    ws_message_bytes: int
    """The largest WebSocket message uvicorn reads (decompressed)."""


def door_limits_of(settings: Settings) -> DoorLimits:
    return DoorLimits(
        header_timeout=settings.header_timeout_seconds,
        send_timeout=settings.send_timeout_seconds,
        ws_message_bytes=WS_DOOR_FACTOR * settings.max_body_bytes,
    )


@cache
def door_limits() -> DoorLimits:
    """This process's limits, from its environment (as the app's settings are read)."""
    return door_limits_of(Settings.from_env())


def error_response(status: int, detail: str) -> bytes:
    """A whole HTTP/1.1 JSON error response that closes the connection."""
    body = json.dumps({"detail": detail}).encode()
    phrase = HTTPStatus(status).phrase
    return (
        f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


class WriteStallGuard:
    """Mixin for a protocol: drop the connection when its client has read nothing of what it
    was sent for SEND_TIMEOUT_SECONDS. The transport pauses the app's sends once its buffer
    is full (uvicorn's sends wait for it), so a client that never reads holds that buffer
    and one reply, for that long at most; one that reads slowly but reads is left alone."""

    transport: asyncio.Transport
    _stall: asyncio.TimerHandle | None = None
    _unread = 0

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)  # type: ignore[call-arg]
        self.set_limits(config, server_state)

    def set_limits(self, config: Config, server_state: ServerState) -> None:
        """The protocol's own per-connection limits (uvicorn's protocol is set up by then)."""

    def pause_writing(self) -> None:
        super().pause_writing()  # type: ignore[misc]
        if self._stall is None:
            self._arm()

    def resume_writing(self) -> None:
        self._cancel_stall()
        super().resume_writing()  # type: ignore[misc]

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_stall()
        super().connection_lost(exc)  # type: ignore[misc]

    def _unsent(self) -> int:
        """Bytes sent to the client and not yet taken by it: the transport's buffer plus the
        kernel's send queue (Linux: TIOCOUTQ; elsewhere the buffer alone)."""
        size = self.transport.get_write_buffer_size()
        sock = self.transport.get_extra_info("socket")
        if fcntl is None:
            return size
        try:
            queued = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        except (AttributeError, OSError, ValueError):
            return size
        return size + struct.unpack("i", queued)[0]

    def _arm(self) -> None:
        self._unread = self._unsent()
        loop = asyncio.get_running_loop()
        self._stall = loop.call_later(door_limits().send_timeout, self._check)

    def _cancel_stall(self) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def _check(self) -> None:
        self._stall = None
        if self.transport.is_closing():
            return
        if self._unsent() < self._unread:  # the client read some
            self._arm()
        else:
            self.transport.abort()
