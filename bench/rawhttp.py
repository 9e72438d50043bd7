"""A minimal keep-alive HTTP/1.1 client for load generation from Python.

Cheaper per request than a general client, so that filling a server with
100,000 episodes or timing single steps measures the server, not the client.
It handles exactly what these servers send: responses with Content-Length.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit


class HttpConnection:
    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._host = host

    @classmethod
    async def connect(cls, url: str) -> HttpConnection:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer, f"{host}:{port}")

    async def post(
        self, path: str, body: bytes, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        """(status, body) of one POST with a JSON body."""
        extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        self._writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {self._host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n".encode()
            + body
        )
        return await self._read_response()

    async def get(self, path: str) -> tuple[int, bytes]:
        self._writer.write(f"GET {path} HTTP/1.1\r\nHost: {self._host}\r\n\r\n".encode())
        return await self._read_response()

    async def _read_response(self) -> tuple[int, bytes]:
        head = await self._reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self._reader.readexactly(length)

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()
