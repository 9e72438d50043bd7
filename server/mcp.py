"""MCP over JSON-RPC 2.0 (`POST /mcp`): the episode operations as MCP tools.

Tools: `reset`, `step`, `state` and `list_tasks`. They run through the same
`Episodes` as the HTTP routes, so an episode started over MCP can be stepped
over HTTP and the other way round. Every request, even a malformed one,
answers 200 with a JSON-RPC response, as the MCP transport expects: a body
that is not JSON this server accepts (server/strict_json.py) is a parse error
(-32700) or an invalid request (-32600), and a body over the size limit answers
413 with an invalid-request error object (server/body_limit.py).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from .. import __version__
from .episode import EpisodeError
from .episodes import Episodes, ResetRequest
from .strict_json import JsonInputError, MalformedJsonError, body_json

PROTOCOL_VERSION = "2025-06-18"
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603

log = logging.getLogger("server")


def _error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _ok(result: Any, request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def tool_list(episodes: Episodes) -> list[dict[str, Any]]:
    episode = {"episode_id": {"type": "string", "description": "The id /reset returned"}}
    return [
        {
            "name": "reset",
            "description": "Start an episode of a task; returns the first observation and its episode_id.",
            "inputSchema": ResetRequest.model_json_schema(),
        },
        {
            "name": "step",
            "description": "Apply one action to an episode; returns observation, reward and done.",
            "inputSchema": {
                "type": "object",
                "required": ["episode_id", "action"],
                "properties": {**episode, "action": episodes.action_schema},
            },
        },
        {
            "name": "state",
            "description": "The full state of an episode.",
            "inputSchema": {"type": "object", "required": ["episode_id"], "properties": episode},
        },
        {
            "name": "list_tasks",
            "description": "Every task: id, env, title, difficulty, description, step budget.",
            "inputSchema": {"type": "object", "properties": {}},
        },
    ]


def _call(episodes: Episodes, name: Any, arguments: dict[str, Any]) -> Any:
    if name == "reset":
        env, observation = episodes.reset(arguments)
        return {**json.loads(observation.model_dump_json()), "episode_id": env.episode_id}
    if name == "step":
        env, observation = episodes.step(arguments.get("episode_id"), arguments.get("action"))
        return json.loads(observation.model_dump_json())
    if name == "state":
        return json.loads(episodes.find(arguments.get("episode_id")).state.model_dump_json())
    if name == "list_tasks":
        return [card.model_dump() for env in episodes.envs for card in env.tasks]
    raise LookupError(f"unknown tool {name!r}; tools: reset, step, state, list_tasks")


def refusal(message: str) -> dict[str, Any]:
    """The JSON-RPC error for a request refused before it could be read (e.g. too large)."""
    return _error(INVALID_REQUEST, f"Invalid request: {message}")


def handle(episodes: Episodes, raw: bytes, content_type: str | None = None) -> dict[str, Any]:
    """The JSON-RPC response to one raw request body; every problem is a JSON-RPC error."""
    try:
        request = body_json(raw, content_type)
    except MalformedJsonError as exc:
        return _error(PARSE_ERROR, f"Parse error: {exc}")
    except JsonInputError as exc:
        return refusal(str(exc))
    if (
        not isinstance(request, dict)
        or request.get("jsonrpc") != "2.0"
        or not isinstance(request.get("method"), str)
    ):
        return refusal('expected {"jsonrpc": "2.0", "method": ..., "id": ...}')
    request_id: Any | None = request.get("id")
    if request_id is not None and (
        isinstance(request_id, bool) or not isinstance(request_id, (str, int, float))
    ):
        return refusal(f"id must be a string, a number or null, got {type(request_id).__name__}")
    method = request["method"]
    params = request.get("params")
    params = {} if params is None else params  # absent; an empty array is still not an object
    if not isinstance(params, dict):
        return _error(INVALID_PARAMS, "params must be an object", request_id)
    if method == "initialize":
        return _ok(
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "+".join(episodes.env_names), "version": __version__},
            },
            request_id,
        )
    if method == "tools/list":
        return _ok({"tools": tool_list(episodes)}, request_id)
    if method != "tools/call":
        return _error(METHOD_NOT_FOUND, f"Method not found: {method}", request_id)
    arguments = params.get("arguments")
    arguments = {} if arguments is None else arguments
    if not isinstance(arguments, dict):
        return _error(INVALID_PARAMS, "arguments must be an object", request_id)
    try:
        result = _call(episodes, params.get("name"), arguments)
    except LookupError as exc:
        return _error(INVALID_PARAMS, str(exc), request_id)
    except EpisodeError as exc:
        text = json.dumps({"detail": str(exc), "status": exc.status})
        return _ok({"content": [{"type": "text", "text": text}], "isError": True}, request_id)
    except Exception as exc:  # noqa: BLE001 - a bug: still a JSON-RPC answer
        log.exception("unhandled error in an MCP tool call")
        return _error(INTERNAL_ERROR, f"Internal error: {type(exc).__name__}", request_id)
    text = json.dumps(result)
    return _ok(
        {
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"result": result},
            "isError": False,
        },
        request_id,
    )
