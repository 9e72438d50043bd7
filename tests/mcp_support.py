"""JSON-RPC over `/mcp` for the MCP tests: requests, and a session's calls, in process."""

from __future__ import annotations

import itertools
from typing import Any

from fastapi.testclient import TestClient
from httpx import Response

VERSION = "2025-06-18"
_ids = itertools.count(1)


def rpc(method: str, params: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A JSON-RPC request (a notification if `id=None` is passed)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": next(_ids)}
    if params is not None:
        message["params"] = params
    message.update(extra)
    if message["id"] is None:
        del message["id"]
    return message


def initialize_params() -> dict[str, Any]:
    return {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "tests", "version": "1"},
    }


class Session:
    """One MCP session over HTTP, as a spec-following client keeps it (Mcp-Session-Id)."""

    def __init__(self, client: TestClient, prefix: str = "", query: str = "") -> None:
        self.client, self.url = client, f"{prefix}/mcp{query}"
        response = self.post(rpc("initialize", initialize_params()), session=False)
        assert response.status_code == 200, response.text
        self.id = response.headers["mcp-session-id"]
        self.initialized = response.json()["result"]

    def post(self, message: Any, session: bool = True, **headers: str) -> Response:
        sent = {"MCP-Protocol-Version": VERSION} if session else {}
        if session:
            sent["Mcp-Session-Id"] = self.id
        return self.client.post(self.url, json=message, headers={**sent, **headers})

    def result(self, method: str, params: dict[str, Any] | None = None) -> Any:
        answer = self.post(rpc(method, params)).json()
        assert "result" in answer, answer
        return answer["result"]

    def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        return self.result("tools/call", {"name": name, "arguments": arguments})

    def state(self) -> Response:
        return self.client.get("/state", params={"episode_id": self.id})
