"""uvicorn's httptools protocol, with the limits it lacks on what a client makes it hold.

uvicorn times out only an idle keep-alive connection (`--timeout-keep-alive`), and only
until the client sends one byte: a client that trickles a request's head, or never
sends one, holds its connection (and its file descriptor) for ever, and the head itself
has no size limit. This protocol adds, per connection:

* the head deadline and the connection cap of the waiting room (waiting.py);
* a head size limit (`MAX_HEAD_BYTES`, else 431) and a pipelining limit
  (`MAX_PIPELINED` requests ahead of their answers, else 429), both JSON errors;
* the write stall guard (a client that reads none of its answers is dropped).

The body's deadline is the app's (server/transport/body_limit.py): it holds with any server.
"""

from __future__ import annotations

import asyncio

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from .limits import MAX_HEAD_BYTES, MAX_PIPELINED, WriteStallGuard, door_limits, error_response
from .waiting import room_of


class _Refused(Exception):
    """Raised from a parser callback to stop parsing; `send_400_response` answers it."""


class HttpProtocol(WriteStallGuard, HttpToolsProtocol):
    def set_limits(self, config: Config, server_state: ServerState) -> None:
        self.room = room_of(server_state, door_limits().header_timeout)
        self.head_bytes = self.heads_done = self.body_bytes = 0
        self.head_started = self.in_body = False
        self.refusal: tuple[int, str] | None = None

    # -------------------------------------------------------------- the room

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self.room.make_room(len(self.connections)):
            transport.close()  # every connection is busy: the newcomer cannot be held
            return
        self.room.wait_for_head(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.room.leave(self)
        super().connection_lost(exc)

    def head_timed_out(self) -> None:
        if self.transport.is_closing():
            return
        if self.head_started:
            self.transport.write(
                error_response(408, "request head not received in time (HEADER_TIMEOUT_SECONDS)")
            )
        self.transport.close()

    def evict(self) -> None:
        """Closed to make room for a new connection (the server is at its connection cap); a
        request whose body was still coming in sees the client disconnect."""
        self.transport.close()

    # ---------------------------------------------------------------- parsing

    def data_received(self, data: bytes) -> None:
        """Parse, then count what was not body toward the head's size. A head's bytes are
        counted as they come (the parser keeps a header's pieces until it ends, so counting
        what it hands over would be too late): at most MAX_HEAD_BYTES plus one read held."""
        self.head_started = True
        self.heads_done = self.body_bytes = 0
        super().data_received(data)
        if self.heads_done or self.in_body or self.transport.is_closing():
            return
        self.head_bytes += len(data) - self.body_bytes
        if self.head_bytes > MAX_HEAD_BYTES:
            self.refusal = (431, f"request line and headers over {MAX_HEAD_BYTES} bytes")
            self.send_400_response("")

    def on_headers_complete(self) -> None:
        if len(self.pipeline) >= MAX_PIPELINED:
            self.refusal = (429, f"more than {MAX_PIPELINED} requests sent ahead of their answers")
            raise _Refused(self.refusal[1])  # stops the parser; send_400_response answers
        super().on_headers_complete()
        self.heads_done += 1
        self.head_bytes = 0
        self.in_body = True
        self.room.wait_for_body(self)

    def on_body(self, body: bytes) -> None:
        self.body_bytes += len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.in_body = False
        self.room.leave(self)  # the request is all in: the app's turn

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self.pipeline:
            self.head_started = False
            self.room.wait_for_head(self)

    def handle_websocket_upgrade(self) -> None:
        self.room.leave(self)  # a WebSocket session now: its own limits apply
        super().handle_websocket_upgrade()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request it cannot parse, as JSON (and ours to a refused one)."""
        status, detail = self.refusal or (400, msg)
        self.transport.write(error_response(status, detail))
        self.transport.close()
