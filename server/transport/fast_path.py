"""POST /reset and POST /step: the episode routes, shared by FastAPI and a plain-ASGI fast path.

These two routes carry nearly all of a trainer's traffic, and FastAPI's per-request
machinery (routing, dependency solving, the exception and exit-stack middleware)
costs more than a whole ServiceBench step. So `EpisodeRoutes`, a middleware inside
the app's own middleware (CORS, body limit), answers them directly, with the same
functions the FastAPI routes call. The FastAPI routes stay: they document the
routes in the OpenAPI schema and serve anything the fast path does not take.
Both produce the same bytes, statuses and error bodies.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from starlette.exceptions import HTTPException

from ..lifecycle.episode import EpisodeError
from ..lifecycle.episodes import Episodes, InvalidRequestError, split_step_body
from ..lifecycle.owners import HTTP_OWNER, Actor, scope_client
from ..strict_json import body_json
from .encoding import error_payload, result_json

log = logging.getLogger("server")

EPISODE_HEADER = "x-episode-id"
CONTENT_TYPE_HEADER = "content-type"
_CONTENT_TYPE_KEY, _EPISODE_KEY = CONTENT_TYPE_HEADER.encode(), EPISODE_HEADER.encode()
JSON_HEADERS = ((b"content-type", b"application/json"),)

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


async def reset_result(
    episodes: Episodes, raw: bytes, content_type: str | None, client: str
) -> bytes:
    """A new HTTP episode: its id is its only key (the client it counts for is `client`)."""
    env, observation = await episodes.reset(body_json(raw, content_type), Actor(HTTP_OWNER, client))
    return result_json(observation, env.episode_id)


async def step_result(
    episodes: Episodes,
    raw: bytes,
    content_type: str | None,
    header_id: str | None,
    query_id: str | None,
) -> bytes:
    """One step; the episode is named by the body, else the X-Episode-Id header, else ?episode_id=."""
    body = body_json(raw, content_type)
    if body is None:
        raise InvalidRequestError('step needs a JSON body: {"action": {...}, "episode_id": ...}')
    action, episode_id, step_index = split_step_body(body)
    env, observation = await episodes.step(episode_id or header_id or query_id, action, step_index)
    return result_json(observation, env.episode_id)


def json_bytes(content: Any) -> bytes:
    """JSON as Starlette's JSONResponse writes it, so both paths answer byte for byte alike.

    Text that UTF-8 cannot encode (a lone surrogate, which the parser keeps out of
    every request) is written as an ASCII escape instead of failing the error reply.
    """
    text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(content, allow_nan=False, separators=(",", ":")).encode()


def episode_error_json(exc: EpisodeError) -> bytes:
    return json_bytes(error_payload(str(exc), **exc.details()))


def unexpected_error_json(exc: Exception) -> bytes:
    log.exception("unhandled error")
    return json_bytes(error_payload(f"internal error: {type(exc).__name__}"))


def route_path(scope: Scope) -> str:
    """The path below the mount point (a mounted app sees the full path and its root_path)."""
    path, root = scope["path"], scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root) : len(root) + 1] in ("/", ""):
        return path[len(root) :] or "/"
    return path


def _content_type_and_episode(scope: Scope) -> tuple[str | None, str | None]:
    """The Content-Type and X-Episode-Id headers (the first of each), in one pass over the headers."""
    content_type = episode = None
    for key, value in scope["headers"]:
        key = key.lower()
        if key == _CONTENT_TYPE_KEY and content_type is None:
            content_type = value.decode("latin-1")
        elif key == _EPISODE_KEY and episode is None:
            episode = value.decode("latin-1")
    return content_type, episode


def _query_episode_id(scope: Scope) -> str | None:
    query = scope.get("query_string", b"")
    if b"episode_id" not in query:
        return None
    values = parse_qs(query.decode("latin-1")).get("episode_id")
    return values[-1] if values else None  # the last one, as Starlette's query_params.get


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None if the client went away first."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


class EpisodeRoutes:
    """ASGI middleware answering POST /reset and POST /step of one surface; the rest passes on."""

    def __init__(self, app: ASGIApp, episodes: Episodes) -> None:
        self.app = app
        self.episodes = episodes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        path = route_path(scope)
        if path != "/step" and path != "/reset":
            await self.app(scope, receive, send)
            return
        try:
            raw = await _read_body(receive)
        except HTTPException as exc:  # the body limit's 413, raised while the body streams in
            await _respond(send, exc.status_code, json_bytes(error_payload(str(exc.detail))))
            return
        if raw is None:
            return
        try:
            content_type, header_id = _content_type_and_episode(scope)
            if path == "/step":
                status, content = (
                    200,
                    await step_result(
                        self.episodes, raw, content_type, header_id, _query_episode_id(scope)
                    ),
                )
            else:
                status, content = (
                    200,
                    await reset_result(self.episodes, raw, content_type, scope_client(scope)),
                )
        except EpisodeError as exc:
            status, content = exc.status, episode_error_json(exc)
        except Exception as exc:  # noqa: BLE001 - the same last resort as the app's handler
            status, content = 500, unexpected_error_json(exc)
        await _respond(send, status, content)


async def _respond(send: Send, status: int, content: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*JSON_HEADERS, (b"content-length", str(len(content)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": content})
