"""MCP played by the real clients against a live server: whole episodes of both environments.

* the official MCP Python SDK (`mcp`), at both majors (1.x here, 2.x in $MCP2_VENV: see
  tests/mcp_sdk_support.py), over Streamable HTTP: the task picked by the endpoint URL's query or
  by a prompt, every step a tool call;
* OpenEnv's `MCPToolClient` (openenv/session/create, `/ws?session_id=` attach, HTTP
  tools/call, WebSocket reset/step/state), at both prefixes and the root.

Each episode is played in process alongside, with the same policy, and every step's
reward and the final score must be the same.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from mcp_sdk_support import MAJORS, SdkPlayer
from openenv.core.env_server.mcp_types import CallToolAction
from openenv.core.mcp_client import MCPToolClient
from tool_calls import tool_call

from servicebench_support_queue.models import SupportQueueAction
from servicebench_support_queue.server.lifecycle.episode import EpisodeEnvironment
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.heuristic import triage

SUPPORT_QUEUE_TASKS = frozenset(card.id for card in SupportQueueEnvironment.tasks)


class Twin:
    """The same episode in process: the reference policy's moves, and the rewards they earn."""

    def __init__(self, task_id: str, seed: int | None) -> None:
        self.support = task_id in SUPPORT_QUEUE_TASKS
        cls = SupportQueueEnvironment if self.support else ServiceBenchEnvironment
        self.env: EpisodeEnvironment = cls()
        self.env.reset(task_id=task_id, seed=seed)

    def move(self, history: list[dict[str, Any]]) -> tuple[str, dict[str, Any], float]:
        """The next tool call from the observations the client saw, and its in-process reward."""
        action = triage(history[-1]) if self.support else next_action(history)
        assert action is not None, "the reference policy found no next move"
        name, arguments = tool_call(action)
        assert isinstance(action, SupportQueueAction) == self.support
        return name, arguments, self.env.step(action).reward  # type: ignore[arg-type]


def first_observation(instructions: str) -> dict[str, Any]:
    """The first observation that a session's instructions (or a prompt) end with."""
    return json.loads(instructions.split("The episode's first observation:\n", 1)[1])


def sdk_episode(major: str, url: str, task_id: str, seed: int, by_prompt: bool) -> tuple[Twin, Any]:
    """An episode played by the official SDK at that major (tests/mcp_sdk_player.py)."""
    twin = Twin(task_id, seed)
    query = "" if by_prompt else f"?task_id={task_id}&seed={seed}"
    with SdkPlayer(major, url + query) as sdk:
        hello = sdk.initialized
        assert hello["protocolVersion"] == "2025-06-18" and "tools" in hello["capabilities"]
        text = hello.get("instructions", "")
        if by_prompt:
            prompts = {p["name"] for p in sdk.request("list_prompts")["prompts"]}
            assert task_id in prompts
            got = sdk.request("get_prompt", task_id, {"seed": str(seed)})
            text = got["messages"][0]["content"]["text"]
        tools = {tool["name"] for tool in sdk.request("list_tools")["tools"]}
        history, done, content = [first_observation(text)], False, {}
        while not done:
            name, arguments, expected = twin.move(history)
            assert name in tools
            result = sdk.request("call_tool", name, arguments)
            assert result["isError"] is False
            content = result["structuredContent"]
            assert content["reward"] == pytest.approx(expected)
            assert json.loads(result["content"][0]["text"]) == content
            history.append(content["observation"])
            done = content["done"]
        late = sdk.request("call_tool", name, arguments)
        assert late["isError"] is True, "a finished episode's call is a tool error"
        sdk.close()
    return twin, content


@pytest.mark.parametrize("major", MAJORS, ids=[f"sdk{major}" for major in MAJORS])
@pytest.mark.parametrize(
    ("prefix", "task_id", "seed", "by_prompt"),
    [
        ("/servicebench", "billing_discrepancy", 7, False),
        ("", "return_and_refund", 0, True),
        ("/support_queue", "medium_sla_defense", 100_001, False),
        ("", "hard_exec_escalations", 100_004, True),
    ],
)
def test_the_mcp_sdk_plays_whole_episodes(
    live_server: str, prefix: str, task_id: str, seed: int, by_prompt: bool, major: str
) -> None:
    url = f"{live_server}{prefix}/mcp"
    twin, last = sdk_episode(major, url, task_id, seed, by_prompt)
    assert last["done"] is True and last["score"] == pytest.approx(twin.env.score)
    if not twin.support:
        assert last["score"] == pytest.approx(1.0)
    gone = httpx.get(f"{live_server}/state", params={"episode_id": last["session_id"]})
    assert gone.status_code == 404, "the SDK's DELETE on exit ended the session"


async def openenv_episode(base_url: str, task_id: str, seed: int) -> tuple[Twin, Any, str]:
    twin = Twin(task_id, seed)
    async with MCPToolClient(base_url=base_url) as env:
        reset = await env.reset(task_id=task_id, seed=seed)  # over the attached WebSocket
        session_id = env._production_session_id
        assert reset.observation.info["episode_id"] == session_id, "restarted under the same id"
        tools = {tool.name for tool in await env.list_tools()}
        history: list[dict[str, Any]] = [reset.observation.model_dump()]
        data: dict[str, Any] = {"done": False}
        while not data["done"]:
            name, arguments, expected = twin.move(history)
            assert name in tools
            data = await env.call_tool(name, **arguments)  # HTTP tools/call with session_id
            assert data["reward"] == pytest.approx(expected) and data["session_id"] == session_id
            history.append(data["observation"])
        state = await env.state()
        assert state.episode_id == session_id and state.step_count == len(history) - 1
    return twin, data, session_id


@pytest.mark.parametrize(
    ("prefix", "task_id", "seed"),
    [
        ("/servicebench", "return_and_refund", 17),
        ("/support_queue", "easy_inbox_cleanup", 100_002),
        ("", "billing_discrepancy", 0),
        ("", "medium_sla_defense", 3),
    ],
)
def test_openenv_mcp_tool_client_plays_whole_episodes(
    live_server: str, prefix: str, task_id: str, seed: int
) -> None:
    twin, last, session_id = asyncio.run(openenv_episode(live_server + prefix, task_id, seed))
    assert last["done"] is True and last["score"] == pytest.approx(twin.env.score)
    gone = httpx.get(f"{live_server}/state", params={"episode_id": session_id})
    assert gone.status_code == 404, "openenv/session/close after the WebSocket detached"


def test_openenv_mcp_tool_client_steps_with_call_tool_actions(live_server: str) -> None:
    """`step(CallToolAction(...))` over the WebSocket: the tool's action, with its reward."""

    async def play() -> list[Any]:
        async with MCPToolClient(base_url=f"{live_server}/servicebench") as env:
            await env.reset(task_id="order_status_lookup")
            first = await env.step(
                CallToolAction(tool_name="lookup_user", arguments={"email": "jane.doe@example.com"})
            )
            second = await env.step(
                CallToolAction(tool_name="lookup_order", arguments={"order_id": "ORD-1005"})
            )
            return [first, second]

    first, second = asyncio.run(play())
    assert first.reward == pytest.approx(0.45) and not first.done
    assert second.done and second.observation.cumulative_reward == pytest.approx(1.0)
