"""MCP sessions on every episode store: a session is a store episode, so on SQLite and
Redis any process serves it (started on one app, played, restarted and closed on
another), and an attached WebSocket plays it wherever it connects."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp_support import Session, initialize_params, rpc
from server_process import free_port

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.mcp.rpc import INTERNAL_ERROR
from servicebench_support_queue.server.settings import Settings

JANE = {"email": "jane.doe@example.com"}
LOOKUP = {"service": "user", "endpoint": "/users/lookup", "params": JANE}


@pytest.fixture
def apps(backend_url: str) -> Iterator[Any]:
    """Apps on this test's store, each a process of its own (its own cache and connection)."""
    opened: list[TestClient] = []

    def open_app() -> TestClient:
        if opened and backend_url == "memory":
            pytest.skip("the memory store holds one process's episodes")
        opened.append(TestClient(create_app(Settings(episode_store=backend_url))))
        return opened[-1].__enter__()

    yield open_app
    for client in opened:
        client.__exit__(None, None, None)


def endpoints(client: TestClient, session_id: str) -> list[str]:
    state = client.get("/state", params={"episode_id": session_id}).json()
    return [call["endpoint"] for call in state["call_history"]]


def test_a_session_is_played_restarted_and_ended_on_every_store(apps: Any) -> None:
    client = apps()
    session = Session(client, "/servicebench", "?task_id=return_and_refund&seed=5")
    called = session.call("lookup_user", **JANE)
    assert called["isError"] is False
    assert endpoints(client, session.id) == ["/users/lookup"]
    prompt = session.result("prompts/get", {"name": "billing_discrepancy"})
    assert "billing_discrepancy" in prompt["messages"][0]["content"]["text"]
    state = client.get("/state", params={"episode_id": session.id}).json()
    assert (state["task"]["id"], state["step_count"]) == ("billing_discrepancy", 0)
    assert client.delete("/servicebench/mcp", headers={"Mcp-Session-Id": session.id}).json() == {
        "session_id": session.id,
        "closed": True,
    }
    gone = session.post(rpc("tools/call", {"name": "lookup_user", "arguments": JANE}))
    assert gone.status_code == 404 and gone.json()["error"]["code"] == -32001


def test_any_process_serves_any_session(apps: Any) -> None:
    first, second = apps(), apps()
    session = Session(first, "/servicebench", "?task_id=return_and_refund&seed=5")
    session.call("lookup_user", **JANE)
    session.client = second  # the next requests land on the other process
    session.call("lookup_order", order_id="ORD-1007")
    assert endpoints(first, session.id) == ["/users/lookup", "/orders/lookup"]
    session.result("prompts/get", {"name": "billing_discrepancy"})  # restarted on `second`
    state = first.get("/state", params={"episode_id": session.id}).json()
    assert (state["task"]["id"], state["step_count"]) == ("billing_discrepancy", 0)
    with first.websocket_connect(f"/servicebench/ws?session_id={session.id}") as socket:
        socket.send_json({"type": "step", "data": LOOKUP})
        assert socket.receive_json()["data"]["observation"]["info"]["step"] == 1
    assert endpoints(second, session.id) == ["/users/lookup"]
    assert second.delete("/mcp", headers={"Mcp-Session-Id": session.id}).status_code == 200
    session.client = first
    assert session.post(rpc("tools/list")).status_code == 404


@pytest.mark.parametrize(
    ("method", "params", "session"),
    [
        ("initialize", initialize_params(), None),
        ("openenv/session/create", {}, None),
        ("openenv/session/close", {"session_id": "some-session"}, None),
        ("tools/call", {"name": "lookup_user", "arguments": JANE}, "some-session"),
        ("tools/list", None, "some-session"),
    ],
)
def test_an_unreachable_store_is_a_json_rpc_error_with_503(
    method: str, params: dict[str, Any] | None, session: str | None
) -> None:
    nothing_there = f"redis://127.0.0.1:{free_port()}/0"
    with TestClient(create_app(Settings(episode_store=nothing_there))) as client:
        headers = {"Accept": "application/json", **({"Mcp-Session-Id": session} if session else {})}
        response = client.post("/mcp", json=rpc(method, params), headers=headers)
        assert response.status_code == 503, response.text
        error = response.json()["error"]
        assert error["code"] == INTERNAL_ERROR and "episode store" in error["message"]
        deleted = client.delete("/mcp", headers={"Mcp-Session-Id": "some-session"})
        assert deleted.status_code == 503 and deleted.json()["error"]["code"] == INTERNAL_ERROR
