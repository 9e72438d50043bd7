"""An ASGI middleware that answers 413 to request bodies over a size limit.

It checks Content-Length up front and counts the bytes of chunked bodies as
they arrive, so an oversized body is refused without being read into memory.
An MCP endpoint (`.../mcp`) gets the refusal as a JSON-RPC error object, as MCP
clients expect; every other path gets `{"detail": ...}`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.exceptions import HTTPException

from .mcp_rpc import refusal

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class BodyTooLarge(HTTPException):
    """Raised while the app reads the body, so its HTTP error handler answers 413."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"request body over the {max_bytes}-byte limit (MAX_BODY_BYTES)")


class BodyLimitMiddleware:
    def __init__(self, app: Callable[..., Awaitable[None]], max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and not declared.isdigit():
            await _respond(
                send, 400, _refusal_body(scope, f"invalid Content-Length {declared[:40]!r}")
            )
            return
        if declared is not None and (len(declared) > 20 or int(declared) > self.max_bytes):
            await self._refuse(scope, send)
            return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await self._refuse(scope, send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        await _respond(send, 413, _refusal_body(scope, str(BodyTooLarge(self.max_bytes).detail)))


def _refusal_body(scope: Scope, message: str) -> bytes:
    """The JSON error of a refused body: a JSON-RPC error object for MCP, else `{"detail": ...}`."""
    if scope["path"].endswith("/mcp"):
        return json.dumps(refusal(message)).encode()
    return json.dumps({"detail": message}).encode()


async def _respond(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"connection", b"close")],
        }
    )
    await send({"type": "http.response.body", "body": body})
