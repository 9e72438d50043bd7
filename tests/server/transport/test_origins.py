"""One Origin rule for every door a browser page could drive (issue 21): `/mcp` over HTTP
and the WebSocket `/ws` (OpenEnv's messages, `mcp` messages, `?session_id=` attachment),
at the root and under each prefix, in-process and on a live uvicorn server."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from server_process import running_server
from starlette.testclient import WebSocketDenialResponse
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.transport import mcp_http, origins

FOREIGN = ("https://evil.example", "http://localhost.evil.example", "null", "file://")
LOOPBACK = ("http://localhost:6274", "http://127.0.0.1:8000", "http://[::1]:3000")
PREFIXES = ("", "/servicebench", "/support_queue")
MCP_INIT = {
    "type": "mcp",
    "data": {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}},
    },
}


def test_mcp_over_http_and_the_websocket_use_the_one_rule() -> None:
    assert mcp_http.origin_allowed is origins.origin_allowed


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("origin", FOREIGN)
def test_a_foreign_origin_cannot_open_a_websocket(prefix: str, origin: str) -> None:
    app = create_app(Settings())
    client = TestClient(app)
    live = len(app.state.store)
    for path in (f"{prefix}/ws", f"{prefix}/ws?session_id=anything"):
        with (
            pytest.raises(WebSocketDenialResponse) as refused,
            client.websocket_connect(path, headers={"Origin": origin}),
        ):
            pass
        assert refused.value.status_code == 403
        assert "Origin" in refused.value.json()["detail"]
    http = client.post(f"{prefix}/mcp", json=MCP_INIT["data"], headers={"Origin": origin})
    assert http.status_code == 403
    assert len(app.state.store) == live, "a refused handshake starts nothing"


@pytest.mark.parametrize("origin", [*LOOPBACK, None])
def test_loopback_and_non_browser_clients_play_over_the_websocket(origin: str | None) -> None:
    client = TestClient(create_app(Settings()))
    headers = {"Origin": origin} if origin else {}
    with client.websocket_connect("/servicebench/ws", headers=headers) as socket:
        socket.send_text(json.dumps(MCP_INIT))
        assert socket.receive_json()["data"]["result"]["serverInfo"]
        socket.send_text(json.dumps({"type": "reset", "data": {}}))
        assert socket.receive_json()["type"] == "observation"


def test_cors_origins_admit_a_listed_origin_to_the_websocket_only() -> None:
    client = TestClient(create_app(Settings(cors_origins=("https://app.example",))))
    with client.websocket_connect("/ws", headers={"Origin": "https://app.example"}) as socket:
        socket.send_text(json.dumps({"type": "reset", "data": {}}))
        assert socket.receive_json()["type"] == "observation"
    with (
        pytest.raises(WebSocketDenialResponse),
        client.websocket_connect("/ws", headers={"Origin": "https://other.example"}),
    ):
        pass
    anyone = TestClient(create_app(Settings(cors_origins=("*",))))
    with anyone.websocket_connect("/ws", headers={"Origin": "https://x.example"}) as socket:
        socket.send_text(json.dumps({"type": "reset", "data": {}}))
        assert socket.receive_json()["type"] == "observation"


def test_a_live_server_refuses_the_handshake_with_403_and_json() -> None:
    with running_server() as url:
        ws_url = url.replace("http://", "ws://")
        for path in ("/ws", "/support_queue/ws?session_id=x"):
            with (
                pytest.raises(InvalidStatus) as refused,
                connect(ws_url + path, origin="https://evil.example", open_timeout=10),
            ):
                pass
            response = refused.value.response
            assert response.status_code == 403
            assert "Origin" in json.loads(response.body)["detail"]
        with connect(ws_url + "/ws", origin="http://localhost:3000", open_timeout=10) as socket:
            socket.send(json.dumps(MCP_INIT))
            assert json.loads(socket.recv(timeout=10))["type"] == "mcp"
