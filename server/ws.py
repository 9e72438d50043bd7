"""OpenEnv's WebSocket protocol (`/ws`): one connection, one episode at a time.

Messages in: `{"type": "reset"|"step"|"state"|"close", "data": {...}}`;
messages out: `{"type": "observation"|"state"|"error", "data": {...}}`, as
`openenv.core.EnvClient` speaks them. The episode belongs to the connection
(it is not in the HTTP store) and ends with it. Steps run inline on the event
loop: they take microseconds, so a thread per session would only add cost.
"""

from __future__ import annotations

import json
import weakref
from typing import Any, Optional

from fastapi import WebSocket, WebSocketDisconnect
from openenv.core.env_server.types import WSErrorCode

from server.episode import EpisodeEnvironment, EpisodeError
from server.gateway import Gateway, InvalidRequestError
from server.wire import model_json, result_json, typed_message

__all__ = ["SessionLimit", "WebSocket", "serve"]


class SessionLimit:
    """Counts the open sessions of one app (its root and every prefix) against a maximum."""

    def __init__(self, maximum: int) -> None:
        self.maximum = maximum
        self.active = 0

    @classmethod
    def shared_by(cls, owner: object, maximum: int) -> "SessionLimit":
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


_LIMITS: "weakref.WeakKeyDictionary[object, SessionLimit]" = weakref.WeakKeyDictionary()


def _error(message: str, code: WSErrorCode, **extra: Any) -> bytes:
    return typed_message("error", json.dumps({"message": message, "code": code.value, **extra}).encode())


class _Session:
    """The episode of one connection and the handling of its messages."""

    def __init__(self, gateway: Gateway, max_message_bytes: int) -> None:
        self.gateway = gateway
        self.max_message_bytes = max_message_bytes
        self.env: Optional[EpisodeEnvironment] = None

    def handle(self, raw: str) -> Optional[bytes]:
        """The reply to one message; None means close the connection."""
        if len(raw) > self.max_message_bytes:
            return _error(f"message over {self.max_message_bytes} bytes", WSErrorCode.VALIDATION_ERROR)
        try:
            message = json.loads(raw)
        except json.JSONDecodeError as exc:
            return _error(f"Invalid JSON: {exc}", WSErrorCode.INVALID_JSON)
        if not isinstance(message, dict):
            return _error("message must be a JSON object with a 'type'", WSErrorCode.INVALID_JSON)
        kind = message.get("type")
        data = message.get("data", {})
        try:
            if kind == "reset":
                self.env, observation = self.gateway.start(data)
                return typed_message("observation", result_json(observation))
            if kind == "step":
                observation = self.gateway.act(self._env(), data)
                return typed_message("observation", result_json(observation))
            if kind == "state":
                return typed_message("state", model_json(self._env().state))
            if kind == "close":
                return None
        except InvalidRequestError as exc:
            return _error(str(exc), WSErrorCode.VALIDATION_ERROR, errors=exc.errors, status=exc.status)
        except EpisodeError as exc:
            return _error(str(exc), WSErrorCode.EXECUTION_ERROR, status=exc.status)
        return _error(
            f"Unknown message type: {kind!r}; expected reset, step, state or close",
            WSErrorCode.UNKNOWN_TYPE,
        )

    def _env(self) -> EpisodeEnvironment:
        if self.env is None:
            raise EpisodeError("no episode on this connection: send a reset message first")
        return self.env


async def serve(socket: WebSocket, gateway: Gateway, limit: SessionLimit, max_message_bytes: int) -> None:
    """Run one WebSocket session until the client closes it."""
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
        await socket.close(code=1013)
        return
    session = _Session(gateway, max_message_bytes)
    try:
        while True:
            message = await socket.receive()
            if message["type"] == "websocket.disconnect":
                return
            raw = message.get("text")
            if raw is None:
                raw = (message.get("bytes") or b"").decode("utf-8", errors="replace")
            reply = session.handle(raw)
            if reply is None:
                await socket.close()
                return
            await socket.send_text(reply.decode())
    except WebSocketDisconnect:
        return
    finally:
        limit.release()
