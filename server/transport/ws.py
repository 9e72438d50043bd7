"""OpenEnv's WebSocket protocol (`/ws`), plus a `resume` message of ours.

Messages in: `{"type": "reset"|"step"|"state"|"close", "data": {...}}`;
messages out: `{"type": "observation"|"state"|"error", "data": {...}}`, as
`openenv.core.EnvClient` speaks them. A step may carry `"step_index": N` beside its
`data` (the number of the step it is, as over HTTP): a retried step is then answered
again, never applied twice.

A connection's episode lives in the episode store like an HTTP episode, keyed by its
id, so it outlives the connection: after a disconnect, a new connection sends
`{"type": "resume", "data": {"episode_id": ...}}` and gets the episode's latest
observation, then steps on. The connection drops its episode when it ends it: on a
new `reset` (once that reset succeeded), on a `close` message, or on a normal close of
the socket (code 1000); any other disconnect (a dropped network, a killed client, a
server restart) keeps it until it expires (`EPISODE_TTL_SECONDS` idle) and hands it
over: the next connection to resume it owns it, and ends it as its own. A connection
ends only what it owns (server/lifecycle/owners.py): an episode it resumed while another live
connection held it, an HTTP episode or an MCP session, it plays and leaves as it was.

A connection may instead attach to an MCP session (`/ws?session_id=`, as OpenEnv's
`MCPToolClient` connects): its messages then play that session's episode, a reset
restarts it under the same id, and the session outlives the connection (the
connection never drops it). A `{"type": "mcp", "data": <JSON-RPC request>}` message is
answered by the MCP server (server/mcp/server.py) as `{"type": "mcp", "data": <JSON-RPC
response>}`, for the attached session.

Every message gets a reply: one that is not JSON this server accepts
(server/strict_json.py), or that the episode refuses, gets OpenEnv's error reply and
the session stays open with its episode as it was.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect

from ...openenv_types import WSErrorCode
from .. import strict_json
from ..lifecycle.episode import EpisodeError
from ..lifecycle.episodes import Episodes, InvalidRequestError, checked_step_index
from ..lifecycle.owners import UNKNOWN_CLIENT, Actor, connection_owner, scope_client
from ..mcp.server import SESSION, McpServer
from ..mcp.sessions import Caller
from .encoding import model_json, result_json, typed_message

__all__ = ["SessionLimit", "WebSocket", "serve"]

log = logging.getLogger("server")


class SessionLimit:
    """Counts the open sessions of one app (its root and every prefix) against a maximum."""

    def __init__(self, maximum: int) -> None:
        self.maximum = maximum
        self.active = 0

    @classmethod
    def shared_by(cls, owner: object, maximum: int) -> SessionLimit:
        """The one limit of everything serving `owner` (the app's shared episode store)."""
        limit = _LIMITS.get(owner)
        if limit is None:
            limit = _LIMITS[owner] = cls(maximum)
        return limit

    def acquire(self) -> bool:
        if self.active >= self.maximum:
            return False
        self.active += 1
        return True

    def release(self) -> None:
        self.active -= 1


_LIMITS: weakref.WeakKeyDictionary[object, SessionLimit] = weakref.WeakKeyDictionary()


def _error(message: str, code: WSErrorCode, **extra: Any) -> bytes:
    return typed_message(
        "error", json.dumps({"message": message, "code": code.value, **extra}).encode()
    )


class _Session:
    """The episode of one connection and the handling of its messages."""

    def __init__(
        self,
        episodes: Episodes,
        max_message_bytes: int,
        mcp: McpServer | None = None,
        attached: str | None = None,
        client: str = UNKNOWN_CLIENT,
    ) -> None:
        self.episodes = episodes
        self.max_message_bytes = max_message_bytes
        self.mcp = mcp
        self.attached = attached
        """The MCP session (episode id) this connection plays, if it attached to one."""
        self.episode_id: str | None = attached
        self.actor = Actor(connection_owner(), client)
        """What this connection owns: the episodes it reset, and those it took over by
        `resume` (server/lifecycle/owners.py). It ends those, and no other."""
        self.client = client

    async def handle(self, raw: str | bytes) -> bytes | None:
        """The reply to one message; None means close the connection.

        Whatever the message holds, the reply is a message: a bad one gets OpenEnv's
        error reply and leaves the session and its episode as they were.
        """
        if len(raw) * 4 > self.max_message_bytes and self._too_large(raw):  # 4: UTF-8's widest
            return _error(
                f"message over {self.max_message_bytes} bytes",
                WSErrorCode.VALIDATION_ERROR,
                status=413,
            )
        try:
            return await self._answer(strict_json.loads(raw))
        except strict_json.MalformedJsonError as exc:
            return _error(str(exc), WSErrorCode.INVALID_JSON, status=exc.status)
        except InvalidRequestError as exc:
            return _error(
                str(exc), WSErrorCode.VALIDATION_ERROR, status=exc.status, **exc.details()
            )
        except EpisodeError as exc:
            return _error(str(exc), WSErrorCode.EXECUTION_ERROR, status=exc.status, **exc.details())
        except Exception as exc:  # noqa: BLE001 - a bug: say so, and keep the session open
            log.exception("unhandled error in a WebSocket message")
            return _error(
                f"internal error: {type(exc).__name__}", WSErrorCode.EXECUTION_ERROR, status=500
            )

    def _too_large(self, raw: str | bytes) -> bool:
        limit = self.max_message_bytes
        if len(raw) > limit:
            return True
        return isinstance(raw, str) and len(raw.encode("utf-8", "surrogatepass")) > limit

    async def _answer(self, message: Any) -> bytes | None:
        if not isinstance(message, dict):
            return _error(
                "message must be a JSON object with a 'type'", WSErrorCode.INVALID_JSON, status=400
            )
        kind = message.get("type")
        data = message.get("data", {})
        if kind == "step":
            episode_id = self._episode()
            step_index = checked_step_index(message.get("step_index"))
            if self.mcp is not None:
                data, step_index = self.mcp.tool_action(data, step_index)
            _, observation = await self.episodes.step(episode_id, data, step_index)
            return typed_message("observation", result_json(observation))
        if kind == "reset":
            if self.attached is not None:  # the connection speaks for the session it named
                _, observation = await self.episodes.restart(self.attached, data, SESSION)
                return typed_message("observation", result_json(observation))
            env, observation = await self.episodes.reset(data, self.actor, latest=False)
            await self.leave()
            self.episode_id = env.episode_id
            return typed_message("observation", result_json(observation))
        if kind == "state":
            return typed_message(
                "state", model_json((await self.episodes.find(self._episode())).state)
            )
        if kind == "resume":
            if self.attached is not None:
                raise InvalidRequestError(
                    "this connection plays the MCP session it attached to (?session_id=): "
                    "resume an episode on a connection of its own"
                )
            env, observation = await self.episodes.resume(
                data.get("episode_id") if isinstance(data, dict) else None, self.actor
            )
            if env.episode_id != self.episode_id:
                await self.release()  # the one it played before: the next resume's
            self.episode_id = env.episode_id
            return typed_message("observation", result_json(observation))
        if kind == "close":
            return None
        if kind == "mcp" and self.mcp is not None:
            return await self._mcp(data)
        return _error(
            f"Unknown message type: {kind!r}; expected reset, step, state, resume, mcp or close",
            WSErrorCode.UNKNOWN_TYPE,
        )

    def _episode(self) -> str:
        if self.episode_id is None:
            raise EpisodeError(
                "no episode on this connection: send a reset message first (or resume one: "
                '{"type": "resume", "data": {"episode_id": ...}})'
            )
        return self.episode_id

    async def leave(self) -> None:
        """End the connection's episode, if the connection owns it (one it reset or took
        over; never an MCP session's, nor an episode it only plays)."""
        episode_id, self.episode_id = self.episode_id, None
        if episode_id is None or episode_id == self.attached:
            return
        try:
            await self.episodes.end(episode_id, self.actor)
        except EpisodeError as exc:  # the store is away: the episode expires on its own
            log.warning("could not end WebSocket episode %s: %s", episode_id, exc)

    async def release(self) -> None:
        """The connection went away without ending its episode: leave it, if it owns it, to
        the next connection that resumes it (server/lifecycle/owners.py)."""
        episode_id, self.episode_id = self.episode_id, None
        if episode_id is None or episode_id == self.attached:
            return
        try:
            await self.episodes.release(episode_id, self.actor)
        except EpisodeError as exc:  # the store is away: a resume will play it, not own it
            log.warning("could not release WebSocket episode %s: %s", episode_id, exc)

    async def _mcp(self, data: Any) -> bytes:
        """The MCP server's answer to a JSON-RPC message, for this connection's session."""
        assert self.mcp is not None
        caller = Caller(session_id=self.attached, over_websocket=True, client=self.client)
        body = (await self.mcp.handle_message(data, caller)).body
        return typed_message("mcp", json.dumps({} if body is None else body).encode())


NORMAL_CLOSURE = 1000
GOING_AWAY = 1001
TRY_AGAIN_LATER = 1013


async def _attach(socket: WebSocket, mcp: McpServer | None) -> str | None | bool:
    """The MCP session `?session_id=` attaches to (None: none named); False: refused, and
    the client was told why (OpenEnv's SESSION_ERROR) and the connection closed."""
    session_id = socket.query_params.get("session_id")
    if session_id is None or mcp is None:
        return None
    close_code = 1008
    try:
        problem = await mcp.attach(session_id)
    except EpisodeError as exc:  # the store is away, or holds another version's log
        problem = str(exc)
        close_code = TRY_AGAIN_LATER if exc.status >= 500 else close_code
    if problem is None:
        return session_id
    await socket.send_text(_error(problem, WSErrorCode.SESSION_ERROR).decode())
    await socket.close(code=close_code)
    return False


async def serve(
    socket: WebSocket,
    episodes: Episodes,
    limit: SessionLimit,
    max_message_bytes: int,
    mcp: McpServer | None = None,
    idle_seconds: float | None = None,
) -> None:
    """Run one WebSocket session until the client closes it, or sends nothing for
    `idle_seconds` (then it is closed with 1001 and its episode kept, to resume)."""
    await socket.accept()
    if not limit.acquire():
        await socket.send_text(
            _error(
                f"server at capacity: {limit.maximum} WebSocket sessions",
                WSErrorCode.CAPACITY_REACHED,
                active_sessions=limit.active,
                max_sessions=limit.maximum,
            ).decode()
        )
        await socket.close(code=TRY_AGAIN_LATER)
        return
    try:
        attached = await _attach(socket, mcp)
    except BaseException:
        limit.release()  # whatever happened, the slot is not this connection's any more
        raise
    if attached is False:
        limit.release()
        return
    session = _Session(
        episodes, max_message_bytes, mcp, attached or None, scope_client(socket.scope)
    )
    try:
        while True:
            try:
                async with asyncio.timeout(idle_seconds):
                    message = await socket.receive()
            except TimeoutError:
                await socket.close(GOING_AWAY, f"idle for {idle_seconds:g}s")
                return
            if message["type"] == "websocket.disconnect":
                if message.get("code") == NORMAL_CLOSURE:
                    await session.leave()
                return
            raw = message.get("text")
            reply = await session.handle(raw if raw is not None else message.get("bytes") or b"")
            if reply is None:
                await session.leave()
                await socket.close()
                return
            await socket.send_text(reply.decode())
    except WebSocketDisconnect:
        return
    finally:
        limit.release()
        await session.release()  # a no-op once the connection ended its episode
        if mcp is not None and session.attached is not None:
            try:
                await mcp.detach(session.attached)
            except EpisodeError as exc:  # the store is away: a deferred close waits for expiry
                log.warning("could not detach from MCP session %s: %s", session.attached, exc)
