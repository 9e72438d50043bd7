"""An action over its environment's byte limit (issue 21) is refused on every transport with
a 413 naming the limit, and changes nothing: over HTTP, the WebSocket and MCP, at the root
and under the prefixes, whether the room is taken by parameters, texts or metadata."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp_support import Session

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment

SB_LIMIT = ServiceBenchEnvironment.max_action_bytes
SQ_LIMIT = SupportQueueEnvironment.max_action_bytes
LOOKUP = {
    "service": "user",
    "endpoint": "/users/lookup",
    "params": {"email": "jane.doe@example.com"},
}
TRIAGE = {"priority": "P2", "queue": "security", "disposition": "respond", "summary": "s"}


def oversized(env: str) -> list[dict[str, Any]]:
    """Actions a little over the env's limit, the room taken three ways (all else valid)."""
    if env == "servicebench":
        return [
            {**LOOKUP, "params": {"email": "a" * SB_LIMIT}},
            {**LOOKUP, "params": {f"k{n}": [] for n in range(SB_LIMIT // 7)}},
            {**LOOKUP, "metadata": {"note": "é" * (SB_LIMIT // 2)}},
        ]
    return [
        {**TRIAGE, "summary": "\U0001f600" * 2000, "response": "\U0001f600" * 2200},
        {**TRIAGE, "metadata": {f"k{n}": [] for n in range(SQ_LIMIT // 7)}},
        {**TRIAGE, "response": "x" * 4000, "metadata": {"pad": "y" * SQ_LIMIT}},
    ]


def within_the_limit(env: str) -> dict[str, Any]:
    """A large action under the env's limit (Support Queue: both texts at their 4,000-character
    limit): accepted."""
    if env == "servicebench":
        return {**LOOKUP, "metadata": {"note": "n" * (SB_LIMIT - 200)}}
    return {**TRIAGE, "summary": "x" * 4000, "response": "y" * 4000}


TASKS = {"servicebench": "return_and_refund", "support_queue": "medium_sla_defense"}
PREFIXES = {"servicebench": ("", "/servicebench"), "support_queue": ("", "/support_queue")}


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app(Settings()))


def _reset(client: TestClient, prefix: str, env: str) -> str:
    return client.post(f"{prefix}/reset", json={"task_id": TASKS[env]}).json()["episode_id"]


@pytest.mark.parametrize("env", ["servicebench", "support_queue"])
def test_http_refuses_an_oversized_action_with_413_and_changes_nothing(
    client: TestClient, env: str
) -> None:
    for prefix in PREFIXES[env]:
        episode = _reset(client, prefix, env)
        before = client.get("/state", params={"episode_id": episode}).content
        for action in oversized(env):
            body = {"episode_id": episode, "action": action, "step_index": 1}
            answer = client.post(f"{prefix}/step", json=body)
            assert answer.status_code == 413, answer.text
            assert "bytes" in answer.json()["detail"] and "at most" in answer.json()["detail"]
        assert client.get("/state", params={"episode_id": episode}).content == before
        answer = client.post(
            f"{prefix}/step", json={"episode_id": episode, "action": within_the_limit(env)}
        )
        assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("env", ["servicebench", "support_queue"])
def test_the_websocket_refuses_an_oversized_action_and_the_session_goes_on(
    client: TestClient, env: str
) -> None:
    with client.websocket_connect(f"/{env}/ws") as socket:
        socket.send_text(json.dumps({"type": "reset", "data": {"task_id": TASKS[env]}}))
        socket.receive_json()
        socket.send_text(json.dumps({"type": "state"}))
        before = socket.receive_json()
        for action in oversized(env):
            socket.send_text(json.dumps({"type": "step", "data": action}))
            error = socket.receive_json()
            assert error["type"] == "error" and error["data"]["status"] == 413
            assert error["data"]["code"] == "VALIDATION_ERROR"
        socket.send_text(json.dumps({"type": "state"}))
        assert socket.receive_json() == before
        socket.send_text(json.dumps({"type": "step", "data": within_the_limit(env)}))
        assert socket.receive_json()["type"] == "observation"


@pytest.mark.parametrize("env", ["servicebench", "support_queue"])
def test_mcp_refuses_an_oversized_action_as_a_tool_error(client: TestClient, env: str) -> None:
    session = Session(client, f"/{env}", f"?task_id={TASKS[env]}")
    before = session.state().content
    if env == "servicebench":
        calls = [("lookup_user", {"email": "a" * SB_LIMIT})]
    else:
        texts = {"summary": "\U0001f600" * 2000, "response": "\U0001f600" * 2200}
        calls = [("triage", {**TRIAGE, **texts})]
    for tool, arguments in calls:
        answer = session.call(tool, **arguments)
        assert answer["isError"] is True
        assert answer["structuredContent"]["status"] == 413, answer
    assert session.state().content == before
