"""server/mcp/server.py: the agent's actions as MCP tools, episodes as MCP sessions, prompts per task.

In process, over `/mcp` at the root and both prefixes; the transport's own checks
(Origin, protocol version, Accept, 202, GET, DELETE) are in test_http.py, the real
clients in test_clients.py.
"""

from __future__ import annotations

import jsonschema
import pytest
from fastapi.testclient import TestClient
from mcp_support import Session, initialize_params, rpc

from servicebench_support_queue.action_tools import TOOLS
from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings

RESERVED_TOOL_NAMES = {"reset", "step", "state", "close"}
SCOPES = {"": ("servicebench", "support_queue"), "/servicebench": ("servicebench",)}
SCOPES["/support_queue"] = ("support_queue",)
JANE = {"email": "jane.doe@example.com"}
TRIAGE = {"priority": "P2", "queue": "security", "disposition": "respond"}


@pytest.fixture()
def client() -> TestClient:
    return TestClient(create_app(Settings()))


@pytest.mark.parametrize("prefix", list(SCOPES))
def test_the_tools_are_the_scopes_actions_never_the_reserved_controls(
    client: TestClient, prefix: str
) -> None:
    listed = client.post(f"{prefix}/mcp", json=rpc("tools/list")).json()["result"]["tools"]
    expected = [tool.mcp_tool() for env in SCOPES[prefix] for tool in TOOLS[env]]
    assert listed == expected and not RESERVED_TOOL_NAMES & {t["name"] for t in listed}
    for tool in listed:
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        assert tool["description"] and tool["inputSchema"]["additionalProperties"] is False


@pytest.mark.parametrize(
    ("prefix", "first_task"),
    [("", "order_status_lookup"), ("/support_queue", "easy_inbox_cleanup")],
)
def test_initialize_starts_a_session_whose_id_is_its_episodes(
    client: TestClient, prefix: str, first_task: str
) -> None:
    session = Session(client, prefix)
    hello = session.initialized
    assert hello["protocolVersion"] == "2025-06-18"
    assert set(hello["capabilities"]) == {"tools", "prompts"}
    assert f"Task {first_task}" in hello["instructions"]
    state = session.state().json()
    assert state["episode_id"] == session.id and state["task"]["id"] == first_task
    assert state["step_count"] == 0 and len(session.id) >= 22  # 128 random bits


@pytest.mark.parametrize(
    ("asked", "answered"),
    [("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-03-26"), ("2099-01-01", "2025-06-18")],
)
def test_initialize_negotiates_the_protocol_version(
    client: TestClient, asked: str, answered: str
) -> None:
    params = {**initialize_params(), "protocolVersion": asked}
    result = client.post("/mcp", json=rpc("initialize", params)).json()["result"]
    assert result["protocolVersion"] == answered
    refused = client.post("/mcp", json=rpc("initialize", {"capabilities": {}})).json()
    assert refused["error"]["code"] == -32602 and "protocolVersion" in refused["error"]["message"]


def test_the_endpoint_url_picks_the_task_and_seed(client: TestClient) -> None:
    session = Session(client, "/servicebench", "?task_id=billing_discrepancy&seed=7")
    state = session.state().json()
    assert (state["task"]["id"], state["seed"]) == ("billing_discrepancy", 7)
    assert "seed 7" in session.initialized["instructions"]
    for query, named in (("?task_id=nope", "nope"), ("?colour=red", "colour")):
        live = len(client.app.state.store)
        answer = client.post(f"/mcp{query}", json=rpc("initialize", initialize_params()))
        assert answer.status_code == 200 and "mcp-session-id" not in answer.headers
        error = answer.json()["error"]
        assert error["code"] == -32602 and named in error["message"]
        assert len(client.app.state.store) == live, "a refused initialize starts nothing"


def test_a_whole_episode_over_tools_call_and_then_a_tool_error(client: TestClient) -> None:
    session = Session(client, "/servicebench")
    first = session.call("lookup_user", **JANE, user_id=None)  # a strict model's null
    assert first["isError"] is False
    content = first["structuredContent"]
    assert content == first["data"] and content["session_id"] == session.id
    assert content["reward"] == pytest.approx(0.45) and content["done"] is False
    assert "available_endpoints" not in content["observation"], "the tools are the catalogue"
    assert first["content"][0]["type"] == "text" and '"reward": 0.45' in first["content"][0]["text"]
    last = session.call("lookup_order", order_id="ORD-1005")["structuredContent"]
    assert last["done"] is True and last["score"] == pytest.approx(1.0)
    assert last["observation"]["task_completed"] is True
    before = session.state().content
    late = session.call("lookup_order", order_id="ORD-1005")
    assert late["isError"] is True and late["structuredContent"]["status"] == 409
    assert "done" in late["structuredContent"]["error"]
    assert session.state().content == before


def test_refused_calls_are_tool_errors_and_change_nothing(client: TestClient) -> None:
    servicebench, support = Session(client), Session(client, query="?task_id=easy_inbox_cleanup")
    for session, name, arguments, status in (
        (servicebench, "triage", TRIAGE, 409),  # another environment's tool
        (support, "lookup_user", JANE, 409),
        (support, "triage", {**TRIAGE, "priority": "P9"}, 422),
        (support, "triage", {**TRIAGE, "colour": "red"}, 422),
    ):
        before = session.state().content
        result = session.call(name, **arguments)
        assert result["isError"] is True and result["structuredContent"]["status"] == status
        assert session.state().content == before
    played = support.call("triage", **TRIAGE, summary=None, response=None, confidence=None)
    assert played["isError"] is False and played["structuredContent"]["reward"] is not None


def test_a_servicebench_call_that_fails_is_still_a_step(client: TestClient) -> None:
    """An API error (unknown order) is the environment's answer, as over HTTP: a step."""
    session = Session(client, "/servicebench")
    result = session.call("lookup_order", order_id="ORD-0000")
    observation = result["structuredContent"]["observation"]
    assert result["isError"] is False and observation["success"] is False
    assert observation["api_response"]["status_code"] == 404
    assert session.state().json()["step_count"] == 1


def test_calls_without_a_session_say_how_to_get_one(client: TestClient) -> None:
    for method, params in (
        ("tools/call", {"name": "lookup_user", "arguments": JANE}),
        ("prompts/get", {"name": "billing_discrepancy"}),
    ):
        answer = client.post("/mcp", json=rpc(method, params))
        assert answer.status_code == 400
        message = answer.json()["error"]["message"]
        assert "initialize" in message and "Mcp-Session-Id" in message and "session_id" in message
    for params, code in (
        ({"name": "nope", "arguments": {}}, -32602),
        ({"name": ["lookup_user"]}, -32602),
        ({"name": "lookup_user", "arguments": [1]}, -32602),
        ({"name": "lookup_user", "arguments": JANE, "session_id": "nope"}, -32602),
        ({"name": "lookup_user", "arguments": JANE, "session_id": 7}, -32602),
    ):
        assert client.post("/mcp", json=rpc("tools/call", params)).json()["error"]["code"] == code
    session = Session(client)
    other = Session(client)
    both = session.post(
        rpc("tools/call", {"name": "lookup_user", "arguments": JANE, "session_id": other.id})
    )
    assert both.json()["error"]["code"] == -32602, "two different sessions named"


def test_a_prompt_per_task_restarts_the_session_under_the_same_id(client: TestClient) -> None:
    session = Session(client)
    prompts = session.result("prompts/list")["prompts"]
    tasks = client.get("/tasks").json()["tasks"]
    assert [p["name"] for p in prompts] == [task["id"] for task in tasks]
    assert all(
        p["arguments"]
        == [{"name": "seed", "description": p["arguments"][0]["description"], "required": False}]
        for p in prompts
    )
    session.call("lookup_user", **JANE)
    got = session.result(
        "prompts/get", {"name": "hard_exec_escalations", "arguments": {"seed": "100004"}}
    )
    [message] = got["messages"]
    assert message["role"] == "user" and "hard_exec_escalations" in message["content"]["text"]
    state = session.state().json()
    assert state["episode_id"] == session.id and state["step_count"] == 0
    assert (state["task"]["id"], state["seed"]) == ("hard_exec_escalations", 100004)
    assert session.call("triage", **TRIAGE)["isError"] is False
    for params in (
        {"name": "nope"},
        {"name": "billing_discrepancy", "arguments": {"seed": "seven"}},
        {"name": "billing_discrepancy", "arguments": {"colour": "red"}},
    ):
        before = session.state().content
        assert session.post(rpc("prompts/get", params)).json()["error"]["code"] == -32602
        assert session.state().content == before
    support_only = client.post("/support_queue/mcp", json=rpc("prompts/list")).json()["result"]
    assert {p["name"] for p in support_only["prompts"]} == {
        t["id"] for t in tasks if t["env"] == "support_queue"
    }


def test_openenv_session_methods(client: TestClient) -> None:
    created = client.post(
        "/mcp", json=rpc("openenv/session/create", {"task_id": "return_and_refund", "seed": 3})
    ).json()["result"]
    session_id = created["session_id"]
    state = client.get("/state", params={"episode_id": session_id}).json()
    assert (state["task"]["id"], state["seed"]) == ("return_and_refund", 3)
    assert created["observation"]["task_id"] == "return_and_refund"
    called = client.post(
        "/mcp",
        json=rpc(
            "tools/call", {"name": "lookup_user", "arguments": JANE, "session_id": session_id}
        ),
    ).json()
    assert called["result"]["isError"] is False
    listed = client.post("/mcp", json=rpc("tools/list", {"session_id": session_id})).json()
    assert listed["result"]["tools"]
    bad = client.post("/mcp", json=rpc("openenv/session/create", {"episode_id": "mine"})).json()
    assert bad["error"]["code"] == -32602 and "episode_id" in bad["error"]["message"]
    closed = client.post("/mcp", json=rpc("openenv/session/close", {"session_id": session_id}))
    assert closed.json()["result"] == {"session_id": session_id, "closed": True}
    assert client.get("/state", params={"episode_id": session_id}).status_code == 404
    again = client.post("/mcp", json=rpc("openenv/session/close", {"session_id": session_id}))
    assert again.json()["error"]["code"] == -32602
    missing = client.post("/mcp", json=rpc("openenv/session/close", {})).json()
    assert missing["error"]["code"] == -32602


def test_a_session_belongs_to_its_scope_and_a_reset_never_takes_it_over(client: TestClient) -> None:
    session = Session(client, "/servicebench")
    stranger = client.post(
        "/support_queue/mcp",
        json=rpc("tools/call", {"name": "triage", "arguments": TRIAGE, "session_id": session.id}),
    ).json()
    assert stranger["error"]["code"] == -32602
    taken = client.post("/reset", json={"task_id": "easy_inbox_cleanup", "episode_id": session.id})
    assert taken.status_code == 409, "issue 12: a live id is never reset over HTTP"
    assert session.state().json()["task"]["id"] == "order_status_lookup"


@pytest.mark.parametrize("method", ["ping", "tools/list", "prompts/list"])
def test_methods_that_need_no_session(client: TestClient, method: str) -> None:
    answer = client.post("/mcp", json=rpc(method))
    assert answer.status_code == 200 and "result" in answer.json()
    assert client.post("/mcp", json=rpc("resources/list")).json()["error"]["code"] == -32601
