"""An ASGI middleware that bounds a request body in bytes (413) and in time (408).

It checks Content-Length up front and counts the bytes of chunked bodies as they
arrive, so an oversized body is refused without being read into memory. And the whole
body must have arrived `timeout` seconds after the app first asks for it: a client that
trickles its body, or sends less than its Content-Length and waits (a truncated body),
gets 408 instead of holding the request for ever. Either refusal closes the connection
(the rest of the body is never read). An MCP endpoint (`.../mcp`) gets the refusal as a
JSON-RPC error object, as MCP clients expect; every other path gets `{"detail": ...}`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.exceptions import HTTPException

from ..mcp.rpc import refusal

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
CLOSE = (b"connection", b"close")


class BodyRefused(HTTPException):
    """Raised while the app reads the body, so that its error handler answers it."""


class BodyTooLarge(BodyRefused):
    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"request body over the {max_bytes}-byte limit (MAX_BODY_BYTES)")


class BodyTimedOut(BodyRefused):
    def __init__(self, seconds: float) -> None:
        super().__init__(
            408, f"request body not received within {seconds:g}s (BODY_TIMEOUT_SECONDS)"
        )


class BodyLimitMiddleware:
    def __init__(
        self, app: Callable[..., Awaitable[None]], max_bytes: int, timeout_seconds: float
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_seconds = timeout_seconds

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
            await _respond(send, 413, _refusal_body(scope, BodyTooLarge(self.max_bytes).detail))
            return
        received = 0
        started = refused = False
        deadline: float | None = None

        async def limited_receive() -> Message:
            nonlocal received, refused, deadline
            if deadline is None:
                deadline = asyncio.get_running_loop().time() + self.timeout_seconds
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                refused = True
                raise BodyTimedOut(self.timeout_seconds) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    refused = True
                    raise BodyTooLarge(self.max_bytes)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if refused:  # the body was not all read: this connection cannot carry another
                    message = {**message, "headers": [*message.get("headers", ()), CLOSE]}
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyRefused as exc:
            if not started:
                await _respond(send, exc.status_code, _refusal_body(scope, exc.detail))


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
            "headers": [(b"content-type", b"application/json"), CLOSE],
        }
    )
    await send({"type": "http.response.body", "body": body})
