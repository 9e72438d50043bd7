"""server/transport/ws.py's MCP side: `/ws?session_id=` attaches to an MCP session, `{"type": "mcp"}`
messages reach the MCP server, and OpenEnv's rules for closing an attached session."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp_support import Session, rpc
from server_process import free_port
from starlette.websockets import WebSocketDisconnect

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings

JANE = {"email": "jane.doe@example.com"}


@pytest.fixture()
def client() -> TestClient:
    return TestClient(create_app(Settings()))


def exchange(socket: Any, message: dict[str, Any]) -> dict[str, Any]:
    socket.send_json(message)
    return socket.receive_json()


def test_attaching_to_an_unknown_or_taken_session_is_a_session_error(client: TestClient) -> None:
    with client.websocket_connect("/ws?session_id=nope") as socket:
        reply = socket.receive_json()
        assert reply["type"] == "error" and reply["data"]["code"] == "SESSION_ERROR"
        with pytest.raises(WebSocketDisconnect):
            socket.receive_json()
    session = Session(client)
    with client.websocket_connect(f"/ws?session_id={session.id}") as first:
        with client.websocket_connect(f"/ws?session_id={session.id}") as second:
            reply = second.receive_json()
            assert (
                reply["data"]["code"] == "SESSION_ERROR" and "attached" in reply["data"]["message"]
            )
        assert exchange(first, {"type": "state"})["data"]["episode_id"] == session.id
    elsewhere = Session(client, "/servicebench")
    with client.websocket_connect(f"/support_queue/ws?session_id={elsewhere.id}") as socket:
        assert socket.receive_json()["data"]["code"] == "SESSION_ERROR"


def test_an_attached_websocket_plays_the_sessions_episode(client: TestClient) -> None:
    session = Session(client, "/servicebench", "?task_id=return_and_refund&seed=5")
    with client.websocket_connect(f"/servicebench/ws?session_id={session.id}") as socket:
        stepped = exchange(
            socket,
            {
                "type": "step",
                "data": {"service": "user", "endpoint": "/users/lookup", "params": JANE},
            },
        )
        assert stepped["type"] == "observation" and session.state().json()["step_count"] == 1
        session.call("lookup_order", order_id="ORD-1007")  # over HTTP: the same episode
        assert exchange(socket, {"type": "state"})["data"]["step_count"] == 2
        replay = exchange(socket, {"type": "reset", "data": {}})
        assert replay["data"]["observation"]["info"]["episode_id"] == session.id
        state = session.state().json()
        assert (state["task"]["id"], state["seed"], state["step_count"]) == (
            "return_and_refund",
            5,
            0,
        )
        exchange(socket, {"type": "reset", "data": {"seed": 9}})
        assert session.state().json()["seed"] == 9
        other = exchange(socket, {"type": "reset", "data": {"task_id": "order_status_lookup"}})
        assert other["data"]["observation"]["task_id"] == "order_status_lookup"
        assert session.state().json()["seed"] is None
        refused = exchange(socket, {"type": "reset", "data": {"episode_id": "mine"}})
        assert refused["data"]["code"] == "VALIDATION_ERROR"
        assert session.state().json()["task"]["id"] == "order_status_lookup"
        called = exchange(
            socket,
            {"type": "mcp", "data": rpc("tools/call", {"name": "lookup_user", "arguments": JANE})},
        )
        assert called["type"] == "mcp" and called["data"]["result"]["isError"] is False
        assert called["data"]["result"]["structuredContent"]["session_id"] == session.id
        own = exchange(
            socket,
            {"type": "mcp", "data": rpc("openenv/session/close", {"session_id": session.id})},
        )
        assert own["data"]["error"]["code"] == -32600
    assert session.state().status_code == 200, "an attached session outlives its WebSocket"


def test_closing_an_attached_session_waits_for_its_websocket(client: TestClient) -> None:
    session = Session(client)
    with client.websocket_connect(f"/ws?session_id={session.id}") as socket:
        closing = session.result("openenv/session/close", {"session_id": session.id})
        assert closing == {"session_id": session.id, "closed": False, "closing": True}
        assert exchange(socket, {"type": "state"})["type"] == "state"
    assert session.state().status_code == 404


def test_mcp_messages_over_a_websocket_of_its_own(client: TestClient) -> None:
    other = Session(client, "/support_queue")
    with client.websocket_connect("/support_queue/ws") as socket:
        listed = exchange(socket, {"type": "mcp", "data": rpc("tools/list")})
        assert [tool["name"] for tool in listed["data"]["result"]["tools"]] == ["triage"]
        call = {
            "name": "triage",
            "arguments": {"priority": "P1", "queue": "security", "disposition": "escalate"},
        }
        alone = exchange(socket, {"type": "mcp", "data": rpc("tools/call", call)})
        assert alone["data"]["error"]["code"] == -32600, "no session: say how to get one"
        named = exchange(
            socket, {"type": "mcp", "data": rpc("tools/call", {**call, "session_id": other.id})}
        )
        assert named["data"]["result"]["isError"] is False
        noted = exchange(socket, {"type": "mcp", "data": rpc("notifications/initialized", id=None)})
        assert noted == {"type": "mcp", "data": {}}
        bad = exchange(socket, {"type": "mcp", "data": [1]})
        assert bad["data"]["error"]["code"] == -32600
        unknown = exchange(
            socket,
            {"type": "step", "data": {"type": "call_tool", "tool_name": "nope", "arguments": {}}},
        )
        assert unknown["data"]["code"] == "EXECUTION_ERROR"  # no episode on this socket yet
        exchange(socket, {"type": "reset", "data": {}})
        unknown = exchange(
            socket,
            {"type": "step", "data": {"type": "call_tool", "tool_name": "nope", "arguments": {}}},
        )
        assert (
            unknown["data"]["code"] == "VALIDATION_ERROR" and "nope" in unknown["data"]["message"]
        )
    assert other.state().json()["step_count"] == 1


def test_attaching_while_the_store_is_away_is_a_session_error_and_frees_its_slot() -> None:
    nothing_there = f"redis://127.0.0.1:{free_port()}/0"
    client = TestClient(create_app(Settings(episode_store=nothing_there, max_ws_sessions=2)))
    for _ in range(3):  # more attempts than slots: each must give its slot back
        with client.websocket_connect("/ws?session_id=some-session") as socket:
            reply = socket.receive_json()
            assert reply["data"]["code"] == "SESSION_ERROR", reply
            assert "episode store" in reply["data"]["message"]
            with pytest.raises(WebSocketDisconnect) as closed:
                socket.receive_json()
            assert closed.value.code == 1013  # try again later
    with client.websocket_connect("/ws") as socket:
        reply = exchange(socket, {"type": "state"})
        assert reply["data"]["code"] == "EXECUTION_ERROR", reply  # a session, not at capacity
