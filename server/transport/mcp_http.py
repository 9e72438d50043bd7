"""MCP's Streamable HTTP transport (spec 2025-06-18) at `/mcp` of every scope.

POST carries one JSON-RPC message. Before anything is read or run:

* `Origin` (DNS-rebinding protection): server/transport/origins.py's rule, the same as `/ws`'s:
  absent, a loopback origin or one of `CORS_ORIGINS` passes; any other is 403.
* `MCP-Protocol-Version`: absent (the spec then assumes 2025-03-26) or a version this
  server speaks; any other is 400.
* `Accept`: a request's reply is JSON or an SSE stream of that one message, as the
  client prefers (JSON on a tie and without the header); accepting neither is 406,
  and the request does not run.

A notification, or a response, is accepted with 202 and no body. `initialize` starts a
session (an episode) and names it in the `Mcp-Session-Id` header of its reply; a
request naming a session that is gone gets 404, a method that needs a session and has
none 400, and every other problem a JSON-RPC error. The endpoint URL's query names a
new session's task: `/servicebench/mcp?task_id=billing_discrepancy&seed=7`. GET is 405
(this server sends nothing unprompted, so it opens no stream); DELETE with
`Mcp-Session-Id` ends the session.
"""

from __future__ import annotations

import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response

from ..lifecycle.episode import EpisodeError
from ..lifecycle.owners import scope_client
from ..mcp.rpc import (
    INVALID_REQUEST,
    SESSION_NOT_FOUND,
    TRANSPORT_ERROR,
    Reply,
    episode_error_reply,
    error_body,
    refusal,
)
from ..mcp.server import SUPPORTED_VERSIONS, McpServer
from ..mcp.sessions import Caller
from ..settings import Settings
from .body_limit import BodyRefused
from .fast_path import CONTENT_TYPE_HEADER, json_bytes
from .origins import origin_allowed, origin_refusal

JSON, SSE = "application/json", "text/event-stream"
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"


def _quality(ranges: list[tuple[str, float]], media: str) -> float:
    """The q a media type gets from the most specific range that matches it (0: none)."""
    kind = media.split("/")[0]
    specificity = {media: 2, f"{kind}/*": 1, "*/*": 0}
    best: tuple[int, float] | None = None
    for media_range, q in ranges:
        rank = specificity.get(media_range)
        if rank is not None and (best is None or rank > best[0]):
            best = (rank, q)
    return best[1] if best else 0.0


def preferred_media(accept: str | None) -> str | None:
    """JSON or SSE, as `Accept` prefers (JSON on a tie, and without the header); None: neither."""
    if accept is None or not accept.strip():
        return JSON
    ranges: list[tuple[str, float]] = []
    for part in accept.split(","):
        media, *params = (piece.strip() for piece in part.split(";"))
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
                q = q if math.isfinite(q) and 0.0 <= q <= 1.0 else 0.0
        if media:
            ranges.append((media.lower(), q))
    json_q, sse_q = _quality(ranges, JSON), _quality(ranges, SSE)
    if max(json_q, sse_q) <= 0.0:
        return None
    return JSON if json_q >= sse_q else SSE


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json_bytes(body), status, headers, media_type=JSON)


def render(reply: Reply, media: str) -> Response:
    """The HTTP response of a reply: 202 without a body, else JSON or one SSE event."""
    if reply.body is None:
        return Response(status_code=202)
    headers = {SESSION_HEADER: reply.session_id} if reply.session_id else {}
    if media == SSE and reply.status == 200:
        event = b"event: message\ndata: " + json_bytes(reply.body) + b"\n\n"
        return Response(event, 200, {**headers, "Cache-Control": "no-cache"}, media_type=SSE)
    return _json(reply.body, reply.status, headers)


def refused_request(request: Request, settings: Settings) -> Response | None:
    """The answer to a request the transport refuses before reading it, if it does."""
    origin = request.headers.get("origin")
    if not origin_allowed(origin, settings.cors_origins):
        return _json(
            error_body(
                TRANSPORT_ERROR,
                origin_refusal(origin or "", "MCP"),
            ),
            403,
        )
    version = request.headers.get(VERSION_HEADER)
    if version is not None and version.strip() not in SUPPORTED_VERSIONS:
        return _json(
            error_body(
                TRANSPORT_ERROR,
                f"Bad Request: unsupported MCP-Protocol-Version {version!r}; this server "
                f"speaks {', '.join(SUPPORTED_VERSIONS)}",
            ),
            400,
        )
    return None


def install(app: FastAPI, server: McpServer, settings: Settings) -> None:
    """Serve `server` at `/mcp` of `app` (POST, GET, DELETE)."""

    @app.post("/mcp", tags=["MCP"], summary="MCP Streamable HTTP: one JSON-RPC message")
    async def post_message(request: Request) -> Response:
        refused = refused_request(request, settings)
        if refused is not None:
            return refused
        try:
            raw = await request.body()
        except BodyRefused as exc:  # streamed past the limit or too slow: a JSON-RPC answer
            return _json(refusal(str(exc.detail)), exc.status_code)
        media = preferred_media(request.headers.get("accept"))
        caller = Caller(
            session_id=request.headers.get(SESSION_HEADER),
            defaults=dict(request.query_params),
            client=scope_client(request.scope),
        )
        reply = await server.handle(
            raw, request.headers.get(CONTENT_TYPE_HEADER), caller, can_reply=media is not None
        )
        return render(reply, media or JSON)

    @app.get("/mcp", tags=["MCP"], summary="Not served: no server-initiated stream (405)")
    async def open_stream(request: Request) -> Response:
        refused = refused_request(request, settings)
        if refused is not None:
            return refused
        return _json(
            error_body(
                TRANSPORT_ERROR,
                "Method Not Allowed: this server sends nothing unprompted, so it opens no "
                "stream; POST JSON-RPC messages to this endpoint",
            ),
            405,
            {"Allow": "POST, DELETE"},
        )

    @app.delete("/mcp", tags=["MCP"], summary="End the session named by Mcp-Session-Id")
    async def end_session(request: Request) -> Response:
        refused = refused_request(request, settings)
        if refused is not None:
            return refused
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is None:
            return _json(
                error_body(
                    INVALID_REQUEST,
                    "DELETE ends the session named by the Mcp-Session-Id header; none was sent",
                ),
                400,
            )
        try:
            closed = await server.close(session_id)
        except EpisodeError as exc:
            reply = episode_error_reply(exc)
            return _json(reply.body, reply.status)
        if closed is None:
            return _json(error_body(SESSION_NOT_FOUND, "Session not found"), 404)
        return _json(closed)
