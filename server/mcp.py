"""MCP over JSON-RPC 2.0: each environment's actions as tools, its episodes as sessions.

The tools are the agent's actions (action_tools.py: one per ServiceBench endpoint,
`triage` for Support Queue), never the episode controls OpenEnv reserves (reset,
step, state, close). An MCP session is an episode of the shared store and its id is
the episode id (server/mcp_sessions.py): `initialize` and OpenEnv's
`openenv/session/create` start one, `tools/call` steps it, `prompts/get` (one prompt
per task) restarts it on another task under the same id, `openenv/session/close` (or
the transport's DELETE) ends it. The transport (server/mcp_http.py, or a WebSocket's
`mcp` message) names the caller's session; a request may name one in
`params.session_id`, as OpenEnv's `MCPToolClient` does.

Every request gets a JSON-RPC response, even a malformed one (-32700, -32600), and
every problem is an error object; a tool call that did not happen (a finished
episode, an invalid action, another environment's tool) is a result with
`isError: true`, as MCP has tool failures reported, and leaves the episode as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..action_tools import tools_of
from ..error_messages import shown
from .episode import EpisodeEnvironment, EpisodeError
from .episodes import Episodes, InvalidRequestError
from .mcp_content import prompt, session_instructions, step_content, tool_error, tool_result
from .mcp_sessions import Attachments, Caller, new_session_data
from .sessions import EpisodeNotFoundError
from .strict_json import JsonInputError, MalformedJsonError, body_json

PROTOCOL_VERSION = "2025-06-18"
SUPPORTED_VERSIONS = (PROTOCOL_VERSION, "2025-03-26")
"""Protocol versions this server speaks: the latest first (Streamable HTTP came in 2025-03-26)."""
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR = -32603
TRANSPORT_ERROR = -32000
"""A request the transport refuses before reading it: an Origin, a protocol version, an Accept."""
SESSION_NOT_FOUND = -32001

log = logging.getLogger("server")


def error_body(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


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


def episode_error_reply(exc: EpisodeError, request_id: Any = None) -> Reply:
    """The JSON-RPC error of an episode operation that failed: invalid params for the
    client's mistakes (an unknown task or session), a server error with the status for
    the server's (the episode store away: 503, send it again)."""
    if exc.status >= 500:
        return Reply(error_body(INTERNAL_ERROR, str(exc), request_id), exc.status)
    return Reply(error_body(INVALID_PARAMS, str(exc), request_id))


class RpcError(Exception):
    """A request answered with a JSON-RPC error (and, over HTTP, `status`)."""

    def __init__(self, code: int, message: str, status: int = 200) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


@dataclass(frozen=True)
class _Opened:
    """A result that started a session the transport must announce."""

    result: dict[str, Any]
    session_id: str


def _no_session(method: str) -> RpcError:
    return RpcError(
        INVALID_REQUEST,
        f"{method} plays an episode, so it needs a session: send initialize and then the "
        "Mcp-Session-Id header its reply carries, or call openenv/session/create and pass "
        "its session_id in params",
        status=400,
    )


def _object(params: dict[str, Any], key: str) -> dict[str, Any]:
    value = params.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RpcError(INVALID_PARAMS, f"{key} must be an object, got {type(value).__name__}")
    return value


class McpServer:
    """The MCP methods of one scope (both environments at the root, one under a prefix)."""

    def __init__(self, episodes: Episodes, attachments: Attachments) -> None:
        self.episodes = episodes
        self.attachments = attachments
        tools = tools_of(episodes.env_names)
        self.tools = {tool.name: tool for tool in tools}
        self._tool_list = [tool.mcp_tool() for tool in tools]
        self.tasks = {card.id: card for env in episodes.envs for card in env.tasks}
        self._methods: dict[str, Callable[[dict[str, Any], Caller], Awaitable[Any]]] = {
            "initialize": self._initialize,
            "ping": self._ping,
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "prompts/list": self._list_prompts,
            "prompts/get": self._get_prompt,
            "openenv/session/create": self._create_session,
            "openenv/session/close": self._close_session,
        }

    # ------------------------------------------------------------------ messages

    async def handle(
        self, raw: bytes, content_type: str | None, caller: Caller, can_reply: bool = True
    ) -> Reply:
        """The reply to one raw HTTP body; `can_reply` False: the client accepts no reply
        this server can give, so a request is refused (406) before it runs."""
        try:
            message = body_json(raw, content_type)
        except MalformedJsonError as exc:
            return Reply(error_body(PARSE_ERROR, f"Parse error: {exc}"))
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
            stale = await self._stale_session(caller, method)
        except EpisodeError as exc:  # the store is away: which session is gone is not known
            request_id = message.get("id")
            valid_id = isinstance(request_id, (str, int, float)) and not isinstance(
                request_id, bool
            )
            return episode_error_reply(exc, request_id if valid_id else None)
        if stale is not None:
            return stale
        if "id" not in message:
            if method.startswith("notifications/"):
                return Reply(None, 202)
            return Reply(
                refusal(f"{method} is a request and needs an id (only notifications/* omit it)"),
                400,
            )
        request_id = message["id"]
        if isinstance(request_id, bool) or not isinstance(request_id, (str, int, float)):
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

    async def _stale_session(self, caller: Caller, method: str) -> Reply | None:
        """404 for a session the transport names that is gone (MCP: start a new one)."""
        if caller.session_id is None or caller.over_websocket or method == "initialize":
            return None
        if await self._find(caller.session_id) is not None:
            return None
        return Reply(
            error_body(
                SESSION_NOT_FOUND,
                f"Session not found: {shown(caller.session_id)} (it was closed, expired or "
                "dropped to make room): send initialize to start a new one",
            ),
            404,
        )

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
        if isinstance(result, _Opened):
            return Reply(_ok(result.result, request_id), session_id=result.session_id)
        return Reply(_ok(result, request_id))

    # ------------------------------------------------------------------ sessions

    async def _find(self, session_id: str) -> EpisodeEnvironment | None:
        try:
            return await self.episodes.find(session_id)
        except EpisodeNotFoundError:
            return None

    async def session(
        self, params: dict[str, Any], caller: Caller, method: str
    ) -> EpisodeEnvironment | None:
        """The episode of the session a request speaks for: `params.session_id`, else the
        transport's; None if neither names one."""
        named = params.get("session_id")
        if named is not None and not isinstance(named, str):
            raise RpcError(INVALID_PARAMS, "session_id must be a string")
        if named is not None and caller.session_id not in (None, named):
            raise RpcError(
                INVALID_PARAMS,
                f"params.session_id names another session than the transport's; {method} "
                "speaks for one session",
            )
        session_id = named if named is not None else caller.session_id
        if session_id is None:
            return None
        env = await self._find(session_id)
        if env is None:
            raise RpcError(INVALID_PARAMS, f"Unknown session_id: {shown(session_id)}")
        return env

    async def _initialize(self, params: dict[str, Any], caller: Caller) -> Any:
        version = params.get("protocolVersion")
        if not isinstance(version, str):
            raise RpcError(INVALID_PARAMS, "initialize needs protocolVersion (a string)")
        result: dict[str, Any] = {
            "protocolVersion": version if version in SUPPORTED_VERSIONS else PROTOCOL_VERSION,
            "capabilities": {"tools": {"listChanged": False}, "prompts": {"listChanged": False}},
            "serverInfo": {"name": "+".join(self.episodes.env_names), "version": __version__},
        }
        if caller.over_websocket:  # the WebSocket's own reset messages start its episodes
            return result
        env, observation = await self.episodes.reset(new_session_data(caller.defaults, {}))
        result["instructions"] = session_instructions(env, observation)
        return _Opened(result, env.episode_id)

    async def _create_session(self, params: dict[str, Any], caller: Caller) -> dict[str, Any]:
        if caller.over_websocket and caller.session_id is not None:
            return {"session_id": caller.session_id}
        env, observation = await self.episodes.reset(new_session_data(caller.defaults, params))
        return step_content(env, observation)

    async def _close_session(self, params: dict[str, Any], caller: Caller) -> dict[str, Any]:
        target = params.get("session_id")
        if not isinstance(target, str) or not target:
            raise RpcError(INVALID_PARAMS, "Invalid params: 'session_id' (a string) is required")
        if caller.over_websocket and target == caller.session_id:
            raise RpcError(
                INVALID_REQUEST, "Cannot close the session of this WebSocket: close the WebSocket"
            )
        closed = await self.close(target)
        if closed is None:
            raise RpcError(INVALID_PARAMS, f"Unknown session_id: {shown(target)}")
        return closed

    async def close(self, session_id: str) -> dict[str, Any] | None:
        """End a session now, or when the WebSocket attached to it detaches; None if unknown."""
        if await self._find(session_id) is None:
            return None
        if self.attachments.defer_close(session_id):
            return {"session_id": session_id, "closed": False, "closing": True}
        await self.episodes.close(session_id)
        return {"session_id": session_id, "closed": True}

    async def attach(self, session_id: str) -> str | None:
        """Attach a WebSocket to a session (`/ws?session_id=`); the problem, if refused."""
        if await self._find(session_id) is None:
            return f"Unknown session_id: {shown(session_id)}"
        if not self.attachments.attach(session_id):
            return f"Session {shown(session_id)} already has an attached WebSocket"
        return None

    async def detach(self, session_id: str) -> None:
        """The WebSocket left: the session lives on, unless a close was asked for meanwhile."""
        if self.attachments.detach(session_id) and await self._find(session_id) is not None:
            await self.episodes.close(session_id)

    # ------------------------------------------------------------------ tools and prompts

    async def _ping(self, params: dict[str, Any], caller: Caller) -> dict[str, Any]:
        return {}

    async def _list_prompts(self, params: dict[str, Any], caller: Caller) -> dict[str, Any]:
        return {"prompts": [prompt(card) for card in self.tasks.values()]}

    async def _list_tools(self, params: dict[str, Any], caller: Caller) -> dict[str, Any]:
        await self.session(params, caller, "tools/list")  # a session it names must exist
        return {"tools": self._tool_list}

    async def _call_tool(self, params: dict[str, Any], caller: Caller) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "tools/call needs the tool's name (a string)")
        tool = self.tools.get(name)
        if tool is None:
            raise RpcError(
                INVALID_PARAMS, f"Tool not found: {shown(name)}; tools: {', '.join(self.tools)}"
            )
        arguments = _object(params, "arguments")
        env = await self.session(params, caller, "tools/call")
        if env is None:
            raise _no_session("tools/call")
        if tool.env != env.env_name:
            return tool_error(
                f"{name} is a {tool.env} tool and this session plays {env.env_name}: "
                f"start a {tool.env} task in it with prompts/get",
                409,
            )
        try:
            env, observation = await self.episodes.step(env.episode_id, tool.action(arguments))
        except EpisodeError as exc:
            return tool_error(str(exc), exc.status)
        return tool_result(step_content(env, observation))

    async def _get_prompt(self, params: dict[str, Any], caller: Caller) -> dict[str, Any]:
        name = params.get("name")
        card = self.tasks.get(name) if isinstance(name, str) else None
        if card is None:
            raise RpcError(
                INVALID_PARAMS,
                f"Prompt not found: {shown(name)}; prompts (one per task): "
                + ", ".join(self.tasks),
            )
        arguments = _object(params, "arguments")
        unknown = sorted(set(arguments) - {"seed"})
        if unknown:
            raise RpcError(INVALID_PARAMS, f"unknown argument(s) {shown(unknown)}; takes: seed")
        env = await self.session(params, caller, "prompts/get")
        if env is None:
            raise _no_session("prompts/get")
        request: dict[str, Any] = {"task_id": card.id}
        seed = arguments.get("seed")
        if seed is not None and seed != "":
            request["seed"] = _seed(seed)
        env, observation = await self.episodes.restart(env.episode_id, request)
        return {
            "description": card.title,
            "messages": [
                {
                    "role": "user",
                    "content": {"type": "text", "text": session_instructions(env, observation)},
                }
            ],
        }

    # ------------------------------------------------------------------ WebSocket steps

    def tool_action(self, data: Any) -> Any:
        """A WebSocket step's action data; OpenEnv's `call_tool` action
        (`MCPToolClient.step(CallToolAction(...))`) becomes the tool's action."""
        if not isinstance(data, dict) or data.get("type") != "call_tool":
            return data
        name, arguments = data.get("tool_name"), data.get("arguments", {})
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise InvalidRequestError(f"unknown tool {shown(name)}; tools: {', '.join(self.tools)}")
        if not isinstance(arguments, dict):
            raise InvalidRequestError("call_tool arguments must be an object")
        return tool.action(arguments)


def _ok(result: Any, request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _seed(value: Any) -> int:
    """A prompt argument's seed (MCP prompt arguments are strings): digits, or a number."""
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        return int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise RpcError(INVALID_PARAMS, f"seed must be written in digits, got {shown(value)}")


__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "Caller",
    "McpServer",
    "Reply",
    "RpcError",
    "error_body",
    "refusal",
]
