"""MCP over JSON-RPC 2.0: each environment's actions as tools, its episodes as sessions.

The tools are the agent's actions (action_tools.py: one per ServiceBench endpoint,
`triage` for Support Queue), never the episode controls OpenEnv reserves (reset,
step, state, close). An MCP session is an episode of the shared store and its id is
the episode id (server/mcp/sessions.py): `initialize` and OpenEnv's
`openenv/session/create` start one, `tools/call` steps it, `prompts/get` (one prompt
per task) restarts it on another task under the same id, `openenv/session/close` (or
the transport's DELETE) ends it. The transport (server/transport/mcp_http.py, or a WebSocket's
`mcp` message) names the caller's session; a request may name one in
`params.session_id`, as OpenEnv's `MCPToolClient` does.

Every request gets a JSON-RPC response, even a malformed one (-32700, -32600), and
every problem is an error object; a tool call that did not happen (a finished
episode, an invalid action, another environment's tool) is a result with
`isError: true`, as MCP has tool failures reported, and leaves the episode as it was.
The JSON-RPC framing (error codes, message validation, dispatch) is server/mcp/rpc.py;
this module holds only the methods of a scope.
"""

from __future__ import annotations

from typing import Any

from ... import __version__
from ...action_tools import split_call, tools_of
from ...error_messages import shown
from ..lifecycle.episode import EpisodeEnvironment, EpisodeError
from ..lifecycle.episodes import (
    MAX_SEED,
    Episodes,
    InvalidRequestError,
    checked_step_index,
    seed_from_text,
)
from ..lifecycle.owners import MCP_OWNER, Actor
from ..lifecycle.sessions import EpisodeNotFoundError
from .content import prompt, session_instructions, step_content, tool_error, tool_result
from .rpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    SESSION_NOT_FOUND,
    Opened,
    Reply,
    RpcEndpoint,
    RpcError,
    error_body,
    object_param,
)
from .sessions import Attachments, Caller, new_session_data

SESSION = Actor(MCP_OWNER)
"""Who restarts or ends a session: whoever presents its id (MCP's own model)."""
PROTOCOL_VERSION = "2025-06-18"
SUPPORTED_VERSIONS = (PROTOCOL_VERSION, "2025-03-26")
"""Protocol versions this server speaks: the latest first (Streamable HTTP came in 2025-03-26)."""


def _no_session(method: str) -> RpcError:
    return RpcError(
        INVALID_REQUEST,
        f"{method} plays an episode, so it needs a session: send initialize and then the "
        "Mcp-Session-Id header its reply carries, or call openenv/session/create and pass "
        "its session_id in params",
        status=400,
    )


class McpServer(RpcEndpoint):
    """The MCP methods of one scope (both environments at the root, one under a prefix)."""

    def __init__(self, episodes: Episodes, attachments: Attachments) -> None:
        self.episodes = episodes
        self.attachments = attachments
        tools = tools_of(episodes.env_names)
        self.tools = {tool.name: tool for tool in tools}
        self._tool_list = [tool.mcp_tool() for tool in tools]
        self.tasks = {card.id: card for env in episodes.envs for card in env.tasks}
        super().__init__(
            {
                "initialize": self._initialize,
                "ping": self._ping,
                "tools/list": self._list_tools,
                "tools/call": self._call_tool,
                "prompts/list": self._list_prompts,
                "prompts/get": self._get_prompt,
                "openenv/session/create": self._create_session,
                "openenv/session/close": self._close_session,
            }
        )

    # ------------------------------------------------------------------ messages

    async def screen(self, caller: Caller, method: str) -> Reply | None:
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

    # ------------------------------------------------------------------ sessions

    async def _find(self, session_id: str) -> EpisodeEnvironment | None:
        """The session's episode; None if there is no such session (an HTTP or WebSocket
        episode's id names none: server/lifecycle/owners.py)."""
        try:
            return await self.episodes.find(session_id, owner=MCP_OWNER)
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
        env, observation = await self.episodes.reset(
            new_session_data(caller.defaults, {}), Actor(MCP_OWNER, caller.client)
        )
        result["instructions"] = session_instructions(env, observation)
        return Opened(result, env.episode_id)

    async def _create_session(self, params: dict[str, Any], caller: Caller) -> dict[str, Any]:
        if caller.over_websocket and caller.session_id is not None:
            return {"session_id": caller.session_id}
        env, observation = await self.episodes.reset(
            new_session_data(caller.defaults, params), Actor(MCP_OWNER, caller.client)
        )
        return step_content(env, observation, first=True)

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
        await self.episodes.close(session_id, SESSION)
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
            await self.episodes.close(session_id, SESSION)

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
        arguments, step_index = split_call(object_param(params, "arguments"))
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
            env, observation = await self.episodes.step(
                env.episode_id, tool.action(arguments), checked_step_index(step_index)
            )
        except EpisodeError as exc:
            if exc.status >= 500:  # the store: a JSON-RPC error, with what became of the call
                raise
            return tool_error(str(exc), exc.status, exc.details())
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
        arguments = object_param(params, "arguments")
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
        env, observation = await self.episodes.restart(env.episode_id, request, SESSION)
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

    def tool_action(self, data: Any, step_index: int | None) -> tuple[Any, int | None]:
        """A WebSocket step's action data and step index; OpenEnv's `call_tool` action
        (`MCPToolClient.step(CallToolAction(...))`) becomes the tool's action, and its
        `step_index` argument, if any, the step's."""
        if not isinstance(data, dict) or data.get("type") != "call_tool":
            return data, step_index
        name, arguments = data.get("tool_name"), data.get("arguments", {})
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            raise InvalidRequestError(f"unknown tool {shown(name)}; tools: {', '.join(self.tools)}")
        if not isinstance(arguments, dict):
            raise InvalidRequestError("call_tool arguments must be an object")
        arguments, named = split_call(arguments)
        named = checked_step_index(named)
        if named is not None and step_index not in (None, named):
            raise InvalidRequestError(
                f"the message's step_index ({step_index}) and the call's ({named}) differ"
            )
        return tool.action(arguments), step_index if named is None else named


def _seed(value: Any) -> int:
    """A prompt argument's seed (MCP prompt arguments are strings): digits, or a number, from
    0 to MAX_SEED."""
    value = seed_from_text(value)
    if type(value) is int and 0 <= value <= MAX_SEED:
        return value
    raise RpcError(
        INVALID_PARAMS,
        f"seed must be a whole number from 0 to {MAX_SEED}, in digits, got {shown(value)}",
    )


__all__ = ["PROTOCOL_VERSION", "SUPPORTED_VERSIONS", "McpServer"]
