"""JSON-RPC 2.0 framing of MCP: error codes and bodies, message validation, dispatch.

Kept apart from the MCP methods (server/mcp/server.py) so that the rules every message obeys
(an answer to each request, even a malformed one; an error object for each problem;
no reply to a notification or a response) live in one place, and so that the
transports (server/transport/mcp_http.py, server/transport/body_limit.py) can build JSON-RPC errors
without importing the methods. `RpcEndpoint` knows nothing of episodes or tools: a
subclass supplies the method table and may refuse a message before it runs (`screen`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..lifecycle.episode import EpisodeError
from ..strict_json import (
    JsonInputError,
    JsonLimitError,
    MalformedJsonError,
    UnsupportedMediaTypeError,
    body_json,
)
from .sessions import Caller

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603
TRANSPORT_ERROR = -32000
"""A request the transport refuses before reading it: an Origin, a protocol version, an Accept."""
SESSION_NOT_FOUND = -32001

log = logging.getLogger("server")

Method = Callable[[dict[str, Any], Caller], Awaitable[Any]]
"""One JSON-RPC method: its params (an object) and the caller in, its result out."""


def error_body(
    code: int, message: str, request_id: Any = None, data: dict[str, Any] | None = None
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def refusal(message: str) -> dict[str, Any]:
    """The JSON-RPC error for a request refused before it could be read (e.g. too large)."""
    return error_body(INVALID_REQUEST, f"Invalid request: {message}")


@dataclass(frozen=True)
class Reply:
    """What one message gets: a JSON-RPC response with its HTTP status; a notification or a
    response from the client gets none (`body` None: 202 Accepted over HTTP)."""

    body: dict[str, Any] | None
    status: int = 200
    session_id: str | None = None
    """A session `initialize` started: the transport announces it (Mcp-Session-Id)."""


def _valid_id(value: Any) -> bool:
    """A JSON-RPC request id this server answers with: a string or a number (not a bool)."""
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def episode_error_reply(exc: EpisodeError, request_id: Any = None) -> Reply:
    """The JSON-RPC error of an episode operation that failed: invalid params for the
    client's mistakes (an unknown task or session), a server error with the status for
    the server's (the episode store away: 503, send it again)."""
    code = INTERNAL_ERROR if exc.status >= 500 else INVALID_PARAMS
    status = exc.status if exc.status >= 500 else 200
    return Reply(error_body(code, str(exc), request_id, exc.details()), status)


def out_of_range(exc: JsonLimitError) -> Reply:
    """A request with a number out of range: invalid params, answered with the request's id,
    if the number is in its params (else the message itself is invalid)."""
    message = exc.value
    if exc.path[:1] == ("params",) and isinstance(message, dict) and _valid_id(message.get("id")):
        return Reply(error_body(INVALID_PARAMS, f"Invalid params: {exc}", message["id"]))
    return Reply(refusal(str(exc)))


class RpcError(Exception):
    """A request answered with a JSON-RPC error (and, over HTTP, `status`)."""

    def __init__(self, code: int, message: str, status: int = 200) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


@dataclass(frozen=True)
class Opened:
    """A method's result that started a session the transport must announce."""

    result: dict[str, Any]
    session_id: str


def object_param(params: dict[str, Any], key: str) -> dict[str, Any]:
    """`params[key]` when it is an object; {} when absent or null."""
    value = params.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RpcError(INVALID_PARAMS, f"{key} must be an object, got {type(value).__name__}")
    return value


class RpcEndpoint:
    """Answers JSON-RPC messages by running the methods of `methods`."""

    def __init__(self, methods: Mapping[str, Method]) -> None:
        self._methods = dict(methods)

    async def handle(
        self, raw: bytes, content_type: str | None, caller: Caller, can_reply: bool = True
    ) -> Reply:
        """The reply to one raw HTTP body; `can_reply` False: the client accepts no reply
        this server can give, so a request is refused (406) before it runs."""
        try:
            message = body_json(raw, content_type)
        except MalformedJsonError as exc:
            return Reply(error_body(PARSE_ERROR, f"Parse error: {exc}"))
        except UnsupportedMediaTypeError as exc:  # not declared as JSON: no cross-site sends
            return Reply(refusal(str(exc)), exc.status)
        except JsonLimitError as exc:
            return out_of_range(exc)
        except JsonInputError as exc:
            return Reply(refusal(str(exc)))
        return await self.handle_message(message, caller, can_reply)

    async def handle_message(self, message: Any, caller: Caller, can_reply: bool = True) -> Reply:
        """The reply to one parsed message (an HTTP body, or a WebSocket `mcp` message's data)."""
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or ("method" not in message and not ({"result", "error"} & set(message)))
        ):
            return Reply(refusal('expected {"jsonrpc": "2.0", "method": ..., "id": ...}'))
        method = message.get("method")
        if method is None:  # a response to a request of ours: this server sends none
            return Reply(None, 202)
        if not isinstance(method, str):
            return Reply(refusal(f"method must be a string, got {type(method).__name__}"))
        try:
            screened = await self.screen(caller, method)
        except EpisodeError as exc:  # the store is away: which session is gone is not known
            request_id = message.get("id")
            return episode_error_reply(exc, request_id if _valid_id(request_id) else None)
        if screened is not None:
            return screened
        if "id" not in message:
            if method.startswith("notifications/"):
                return Reply(None, 202)
            return Reply(
                refusal(f"{method} is a request and needs an id (only notifications/* omit it)"),
                400,
            )
        request_id = message["id"]
        if not _valid_id(request_id):
            kind = "null" if request_id is None else type(request_id).__name__
            return Reply(refusal(f"id must be a string or a number, got {kind}"))
        if not can_reply:
            return Reply(
                error_body(
                    TRANSPORT_ERROR,
                    "Not Acceptable: the Accept header must allow application/json "
                    "or text/event-stream",
                    request_id,
                ),
                406,
            )
        return await self._answer(method, message.get("params"), caller, request_id)

    async def screen(self, caller: Caller, method: str) -> Reply | None:
        """A reply refusing a message (request or notification) before it runs; None lets it
        through. The base refuses nothing."""
        return None

    async def _answer(self, method: str, params: Any, caller: Caller, request_id: Any) -> Reply:
        params = {} if params is None else params  # an empty array is still not an object
        if not isinstance(params, dict):
            return Reply(error_body(INVALID_PARAMS, "params must be an object", request_id))
        handler = self._methods.get(method)
        if handler is None:
            return Reply(error_body(METHOD_NOT_FOUND, f"Method not found: {method}", request_id))
        try:
            result = await handler(params, caller)
        except RpcError as exc:
            return Reply(error_body(exc.code, exc.message, request_id), exc.status)
        except EpisodeError as exc:
            return episode_error_reply(exc, request_id)
        except Exception as exc:  # noqa: BLE001 - a bug: still a JSON-RPC answer
            log.exception("unhandled error in the MCP method %s", method)
            return Reply(
                error_body(INTERNAL_ERROR, f"Internal error: {type(exc).__name__}", request_id)
            )
        if isinstance(result, Opened):
            return Reply(_ok(result.result, request_id), session_id=result.session_id)
        return Reply(_ok(result, request_id))


def _ok(result: Any, request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "SESSION_NOT_FOUND",
    "TRANSPORT_ERROR",
    "Method",
    "Opened",
    "Reply",
    "RpcEndpoint",
    "RpcError",
    "episode_error_reply",
    "error_body",
    "object_param",
    "refusal",
]
