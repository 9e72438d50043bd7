"""Property-based fuzzing: every route of every OpenAPI schema (the root and each prefix),
and the WebSocket protocol, with generated valid and invalid input.

Properties: never a 5xx; every 4xx is JSON with a `detail` that says what was wrong;
a WebSocket answers every message with a typed reply and stays open. Examples are
bounded and derandomized, so the run is short and the same every time.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicebench_support_queue.server.app import ENVIRONMENTS, create_app
from servicebench_support_queue.server.settings import Settings

EXAMPLES_PER_OPERATION = 30
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

APP = create_app(Settings())
SCHEMAS = {"root": schemathesis.openapi.from_asgi("/openapi.json", APP)} | {
    env.env_name: schemathesis.openapi.from_asgi(f"/{env.env_name}/openapi.json", APP)
    for env in ENVIRONMENTS
}


def assert_explained(status: int, content_type: str, body: bytes) -> None:
    """The fuzzing property of one HTTP response: an MCP refusal explains itself as JSON-RPC
    does, in its error's message, every other 4xx in `detail`."""
    assert status < 500, f"server error {status}: {body[:500]!r}"
    if 400 <= status < 500:
        assert content_type.startswith("application/json"), (status, content_type, body[:200])
        answer = json.loads(body)
        rpc_error = answer.get("error", {}) if answer.get("jsonrpc") == "2.0" else None
        detail = answer.get("detail") if rpc_error is None else rpc_error.get("message")
        assert isinstance(detail, str) and detail.strip(), (status, body[:200])


def test_every_prefix_has_a_schema_with_the_episode_routes() -> None:
    for name, schema in SCHEMAS.items():
        paths = set(schema.raw_schema["paths"])
        assert {"/reset", "/step", "/state", "/health", "/schema", "/metadata", "/mcp"} <= paths, (
            name
        )


@schemathesis.pytest.parametrize(**SCHEMAS)
@FUZZ_SETTINGS
def test_no_route_answers_5xx_and_every_4xx_is_explained(case: schemathesis.Case) -> None:
    response = case.call()
    content_type = response.headers.get("content-type") or [
        ""
    ]  # schemathesis: name -> list of values
    assert_explained(response.status_code, content_type[0], response.content)


# --------------------------------------------------------------------------- WebSocket

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
MESSAGES = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["reset", "step", "state", "dance", ""]), "data": JSON_VALUES}
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("step"),
            "data": st.fixed_dictionaries(
                {
                    "service": st.sampled_from(["user", "order", "inventory", "nope"]),
                    "endpoint": st.sampled_from(
                        ["/users/lookup", "/orders/lookup", "/inventory/update-stock", "/x"]
                    ),
                    "method": st.sampled_from(["GET", "POST", "PUT", "DELETE"]),
                    "params": st.dictionaries(
                        st.sampled_from(["email", "order_id", "sku", "adjustment", "amount"]),
                        JSON_VALUES,
                        max_size=3,
                    ),
                }
            ),
        }
    ),
    JSON_VALUES,
).map(json.dumps) | st.text(max_size=40)


@pytest.mark.parametrize("prefix", ["", *(f"/{env.env_name}" for env in ENVIRONMENTS)])
@FUZZ_SETTINGS
@given(messages=st.lists(MESSAGES, min_size=1, max_size=6))
def test_websocket_answers_every_message_with_a_typed_reply(
    prefix: str, messages: list[str]
) -> None:
    with TestClient(APP).websocket_connect(f"{prefix}/ws") as socket:
        socket.send_text(json.dumps({"type": "reset", "data": {}}))
        assert socket.receive_json()["type"] == "observation"
        for message in messages:
            if '"close"' in message:
                continue  # a close message ends the session by design
            socket.send_text(message)
            reply: dict[str, Any] = socket.receive_json()
            assert reply["type"] in ("observation", "state", "error"), reply
            if reply["type"] == "error":
                assert isinstance(reply["data"]["message"], str) and reply["data"]["code"]
        socket.send_text(json.dumps({"type": "state"}))  # still open and serving
        assert socket.receive_json()["type"] == "state"
