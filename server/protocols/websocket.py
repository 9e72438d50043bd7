"""uvicorn's WebSocket protocol (websockets' sans-I/O core), with what it holds bounded.

As uvicorn runs it, a WebSocket message may be 16 MiB (`--ws-max-size`), decompressed:
a 16 KB permessage-deflate frame inflates to 16 MiB. And it hands the parser all it
reads at once: one read of 256 KB can hold a thousand compressed frames, each inflated
and queued for the app before the app has read the first (it pauses reading only
after). Here:

* a message is at most `WS_DOOR_FACTOR` x MAX_BODY_BYTES, decompressed (and never more than
  `--ws-max-size`): larger is refused by the protocol (close 1009) as its frames come in,
  before it is inflated past the limit. Between MAX_BODY_BYTES and that, the app answers
  with its 413 error reply and the session goes on;
* the parser is fed one frame at a time, and nothing more once a whole message waits for
  the app: what a connection holds ahead of the app is one message plus the undecoded
  bytes of one read;
* the write stall guard drops a client that reads none of its replies (limits.py): the app's
  sends wait once the transport's buffer is full, so unread replies stay bounded too.
"""

from __future__ import annotations

from uvicorn._types import ASGIReceiveEvent
from uvicorn.config import Config
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState

from .limits import WriteStallGuard, door_limits


def frame_size(data: bytes | bytearray) -> int | None:
    """The size of the WebSocket frame `data` starts with (header and payload), or None if
    its header is not all there yet (RFC 6455 section 5.2)."""
    if len(data) < 2:
        return None
    length, header = data[1] & 0x7F, 2
    if length == 126:
        header = 4
    elif length == 127:
        header = 10
    if len(data) < header:
        return None
    if header > 2:
        length = int.from_bytes(data[2:header], "big")
    return header + (4 if data[1] & 0x80 else 0) + length


class WebSocketProtocol(WriteStallGuard, WebSocketsSansIOProtocol):
    def set_limits(self, config: Config, server_state: ServerState) -> None:
        self.max_message_bytes = min(config.ws_max_size, door_limits().ws_message_bytes)
        self.conn.max_message_size = self.max_message_bytes
        self.unfed = bytearray()
        """Bytes read but not given to the parser yet (a message waits for the app)."""
        self.frame_left = 0
        """Bytes of the frame being fed that the parser has not had yet."""

    def data_received(self, data: bytes) -> None:
        if not self.handshake_initiated:  # the handshake request, as the HTTP protocol read it
            super().data_received(data)
            return
        self.unfed += data
        self._feed()

    def _feed(self) -> None:
        """Give the parser one frame at a time until a message waits for the app."""
        while self.unfed and not self.read_paused and not self.transport.is_closing():
            if not self.frame_left:
                size = frame_size(self.unfed)
                if size is None:
                    return
                self.frame_left = size
            chunk = bytes(self.unfed[: self.frame_left])
            del self.unfed[: len(chunk)]
            self.frame_left -= len(chunk)
            super().data_received(chunk)
        if self.transport.is_closing():
            self.unfed.clear()

    async def receive(self) -> ASGIReceiveEvent:
        message = await self.queue.get()
        if self.read_paused and self.queue.empty():
            self.read_paused = False
            self._feed()  # what was read meanwhile first: it may queue the next message
            if not self.read_paused and not self.transport.is_closing():
                self.transport.resume_reading()
        return message
