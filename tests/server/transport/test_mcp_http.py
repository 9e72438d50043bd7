"""server/transport/mcp_http.py: MCP's Streamable HTTP transport as the 2025-06-18 spec has it.

Notifications and responses get 202 and no body; the Origin is validated (DNS
rebinding); an unsupported MCP-Protocol-Version is 400; the reply is JSON or SSE as
Accept asks; GET is 405; DELETE ends a session, which then answers 404. Every refusal
is a JSON-RPC error object, and a refused request runs nothing.
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from mcp_support import Session, initialize_params, rpc

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.transport.mcp_http import origin_allowed, preferred_media

LOOKUP = {"name": "lookup_user", "arguments": {"email": "jane.doe@example.com"}}


@pytest.fixture()
def client() -> TestClient:
    return TestClient(create_app(Settings()))


def steps(session: Session) -> int:
    return session.state().json()["step_count"]


def error_of(response) -> dict:  # type: ignore[no-untyped-def]
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["error"]["message"], body
    return body["error"]


def test_ping(client: TestClient) -> None:
    assert client.post("/mcp", json=rpc("ping")).json()["result"] == {}
    session = Session(client, "/support_queue")
    assert session.post(rpc("ping")).json()["result"] == {}


@pytest.mark.parametrize(
    "message",
    [
        rpc("notifications/initialized", id=None),
        rpc("notifications/cancelled", {"requestId": 1, "reason": "x"}, id=None),
        {"jsonrpc": "2.0", "id": 5, "result": {}},  # a response to a request of the server's
        {"jsonrpc": "2.0", "id": 5, "error": {"code": -1, "message": "no"}},
    ],
)
def test_notifications_and_responses_get_202_and_no_body(client: TestClient, message) -> None:  # type: ignore[no-untyped-def]
    session = Session(client)
    for answer in (client.post("/mcp", json=message), session.post(message)):
        assert answer.status_code == 202 and answer.content == b""
    refused = session.post(message, **{"Accept": "text/html"})
    assert refused.status_code == 202, "a notification needs no reply, so any Accept will do"


def test_a_request_without_an_id_is_refused(client: TestClient) -> None:
    session = Session(client)
    answer = session.post(rpc("tools/call", LOOKUP, id=None))
    assert answer.status_code == 400 and error_of(answer)["code"] == -32600
    assert steps(session) == 0, "never run as a notification"
    null_id = session.post(rpc("ping", id=None) | {"id": None})
    assert error_of(null_id)["code"] == -32600


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:6274", True),
        ("http://127.0.0.1:8000", True),
        ("http://127.9.9.9", True),
        ("http://[::1]:3000", True),
        ("https://localhost", True),
        ("https://evil.example", False),
        ("http://localhost.evil.example", False),
        ("http://127.0.0.1.nip.io", False),
        ("null", False),
        ("file://", False),
        ("http://[::1", False),
    ],
)
def test_origin_validation(client: TestClient, origin: str, allowed: bool) -> None:
    assert origin_allowed(origin, ()) is allowed
    live = len(client.app.state.store)
    answer = client.post(
        "/mcp", json=rpc("initialize", initialize_params()), headers={"Origin": origin}
    )
    if allowed:
        assert answer.status_code == 200 and "mcp-session-id" in answer.headers
        return
    assert answer.status_code == 403 and "Origin" in error_of(answer)["message"]
    assert len(client.app.state.store) == live, "a refused request starts nothing"
    for method in (client.get, client.delete):
        assert method("/servicebench/mcp", headers={"Origin": origin}).status_code == 403


def test_cors_origins_extend_the_allowed_origins() -> None:
    client = TestClient(create_app(Settings(cors_origins=("https://app.example",))))
    session = Session(client)
    allowed = session.post(rpc("tools/call", LOOKUP), Origin="https://app.example")
    assert allowed.status_code == 200 and steps(session) == 1
    refused = session.post(rpc("tools/call", LOOKUP), Origin="https://evil.example")
    assert refused.status_code == 403 and steps(session) == 1
    preflight = client.options(
        "/mcp",
        headers={
            "Origin": "https://app.example",
            "Access-Control-Request-Method": "DELETE",
            "Access-Control-Request-Headers": "mcp-session-id,mcp-protocol-version,content-type",
        },
    )
    assert preflight.status_code == 200, "a browser MCP client may send the MCP headers"
    started = client.post(
        "/mcp",
        json=rpc("initialize", initialize_params()),
        headers={"Origin": "https://app.example"},
    )
    assert "mcp-session-id" in started.headers["access-control-expose-headers"].lower()
    anyone = TestClient(create_app(Settings(cors_origins=("*",))))
    assert anyone.post("/mcp", json=rpc("ping"), headers={"Origin": "https://x.example"}).is_success
    assert origin_allowed(None, ()), "no Origin: not a browser"


def test_protocol_version_header(client: TestClient) -> None:
    session = Session(client)
    for version in ("2025-06-18", "2025-03-26"):
        assert session.post(rpc("ping"), **{"MCP-Protocol-Version": version}).status_code == 200
    for version in ("1999-01-01", "", "2025-06-18x"):
        answer = session.post(rpc("tools/call", LOOKUP), **{"MCP-Protocol-Version": version})
        assert answer.status_code == 400 and "MCP-Protocol-Version" in error_of(answer)["message"]
    assert steps(session) == 0, "refused before it ran"
    assert client.post("/mcp", json=rpc("ping")).status_code == 200, "absent: 2025-03-26 assumed"


def test_the_reply_is_json_or_sse_as_accept_asks(client: TestClient) -> None:
    session = Session(client)
    cases = {
        "application/json, text/event-stream": "application/json",  # what the SDKs send
        "application/json": "application/json",
        "*/*": "application/json",
        "text/event-stream": "text/event-stream",
        "text/event-stream, application/json;q=0.5": "text/event-stream",
        "application/json;q=0, text/*": "text/event-stream",
    }
    for accept, media in cases.items():
        assert preferred_media(accept) == media, accept
        answer = session.post(rpc("tools/call", LOOKUP), Accept=accept)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith(media)
        if media == "text/event-stream":
            event, data, blank = answer.text.split("\n")[:3]
            assert (event, blank) == ("event: message", "") and data.startswith("data: ")
            assert json.loads(data.removeprefix("data: "))["result"]["isError"] is False
        else:
            assert answer.json()["result"]["isError"] is False
    done = steps(session)
    for accept in ("text/html", "application/json;q=0, text/event-stream;q=0", "image/*"):
        assert preferred_media(accept) is None
        answer = session.post(rpc("tools/call", LOOKUP), Accept=accept)
        assert answer.status_code == 406 and "Accept" in error_of(answer)["message"]
    assert steps(session) == done, "a request whose reply is not acceptable does not run"
    assert preferred_media(None) == preferred_media("") == "application/json"


def test_get_opens_no_stream(client: TestClient) -> None:
    for prefix in ("", "/servicebench", "/support_queue"):
        answer = client.get(f"{prefix}/mcp", headers={"Accept": "text/event-stream"})
        assert answer.status_code == 405 and answer.headers["allow"] == "POST, DELETE"
        assert error_of(answer)["message"].startswith("Method Not Allowed")


def test_delete_ends_the_session_and_it_then_answers_404(client: TestClient) -> None:
    session = Session(client, "/support_queue")
    missing = client.delete("/support_queue/mcp")
    assert missing.status_code == 400 and "Mcp-Session-Id" in error_of(missing)["message"]
    ended = client.delete("/support_queue/mcp", headers={"Mcp-Session-Id": session.id})
    assert ended.status_code == 200 and ended.json() == {"session_id": session.id, "closed": True}
    assert session.state().status_code == 404
    for message in (rpc("ping"), rpc("tools/list"), rpc("notifications/initialized", id=None)):
        gone = session.post(message)
        assert gone.status_code == 404 and error_of(gone)["code"] == -32001
    again = client.delete("/support_queue/mcp", headers={"Mcp-Session-Id": session.id})
    assert again.status_code == 404
    fresh = session.post(rpc("initialize", initialize_params()))  # the spec's way back
    assert fresh.status_code == 200 and fresh.headers["mcp-session-id"] != session.id


def test_a_session_is_only_found_in_its_own_scope(client: TestClient) -> None:
    session = Session(client, "/servicebench")
    elsewhere = client.post(
        "/support_queue/mcp", json=rpc("ping"), headers={"Mcp-Session-Id": session.id}
    )
    assert elsewhere.status_code == 404
    assert (
        client.delete("/support_queue/mcp", headers={"Mcp-Session-Id": session.id}).status_code
        == 404
    )
    assert session.state().status_code == 200
