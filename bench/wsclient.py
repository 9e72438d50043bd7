"""A minimal asyncio WebSocket client for load generation.

The load generator must cost far less CPU than the server it measures, so this
speaks just enough of RFC 6455 for text messages: the upgrade handshake, masked
client frames (with an all-zero mask, which the RFC allows and which makes
masking free), unfragmented or fragmented server frames, ping -> pong, close.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import struct
from urllib.parse import urlsplit

ZERO_MASK = b"\x00\x00\x00\x00"
OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


class HandshakeError(ConnectionError):
    """The server did not switch protocols (e.g. refused at capacity)."""


class ClosedError(ConnectionError):
    """The server closed the connection."""

    def __init__(self, code: int | None) -> None:
        super().__init__(f"connection closed by server (code {code})")
        self.code = code


def _frame(opcode: int, payload: bytes) -> bytes:
    """One final, masked client frame."""
    length = len(payload)
    if length < 126:
        header = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
    elif length < 1 << 16:
        header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
    return header + ZERO_MASK + payload


class WSConnection:
    """One client connection; `send` a text message, `recv` the next one."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    @classmethod
    async def connect(cls, url: str, timeout: float = 10.0) -> WSConnection:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        writer.write(request.encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
        status_line = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status_line + b" ":
            writer.close()
            raise HandshakeError(status_line.decode(errors="replace"))
        return cls(reader, writer)

    async def send(self, text: str | bytes) -> None:
        payload = text.encode() if isinstance(text, str) else text
        self._writer.write(_frame(OP_TEXT, payload))
        await self._writer.drain()

    async def recv(self) -> bytes:
        """The next data message's payload; answers pings, raises ClosedError on close."""
        chunks: list[bytes] = []
        while True:
            first, second = await self._reader.readexactly(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", await self._reader.readexactly(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", await self._reader.readexactly(8))
            if second & 0x80:  # servers must not mask, but tolerate it
                mask = await self._reader.readexactly(4)
                payload = bytes(
                    b ^ mask[i % 4] for i, b in enumerate(await self._reader.readexactly(length))
                )
            else:
                payload = await self._reader.readexactly(length)
            if opcode == OP_PING:
                self._writer.write(_frame(OP_PONG, payload))
                continue
            if opcode == OP_PONG:
                continue
            if opcode == OP_CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                raise ClosedError(code)
            chunks.append(payload)
            if first & 0x80:
                return b"".join(chunks)

    async def request(self, text: str | bytes) -> bytes:
        await self.send(text)
        return await self.recv()

    async def close(self, timeout: float = 2.0) -> None:
        """The closing handshake: send a close frame, wait for the server's, then hang up."""
        try:
            self._writer.write(_frame(OP_CLOSE, struct.pack("!H", 1000)))
            await self._writer.drain()
            while True:
                await asyncio.wait_for(self.recv(), timeout)
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            pass
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()
