"""Property: every number a client sends is bounded where it enters, at every door.

Seeds and step indexes, as JSON numbers or as text (MCP prompt arguments and URL queries
are text), of any size (a 4,301-digit seed used to reach Python's int conversion limit and
the internal-error path), signed, padded, in other scripts' digits, fractional, or not a
number at all, go to each door that reads one:

* HTTP: `/reset`'s `seed`, `/step`'s `step_index`;
* WebSocket: a `reset` message's `seed`, a `step` message's `step_index`, an OpenEnv
  `call_tool` step's `step_index` argument;
* MCP (over HTTP, and as a WebSocket's `mcp` message): `prompts/get`'s `seed` argument,
  `openenv/session/create`'s `seed`, the endpoint URL's `?seed=`, `tools/call`'s
  `step_index` argument.

Properties: never a 5xx, a 5xx error reply, nor JSON-RPC's internal error (-32603); a
value that is not a whole number in range is refused with a 4xx (422 or 400) or JSON-RPC's
invalid params (-32602) or invalid request (-32600), and the message names the field.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import event, given, settings
from hypothesis import strategies as st
from mcp_support import Session, rpc
from robustness_support import LOOKUP, PROPERTY

from servicebench_support_queue.models import MAX_STEP_INDEX
from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.lifecycle.episodes import MAX_SEED
from servicebench_support_queue.server.settings import Settings

NUMBER_PROPERTY = settings(PROPERTY, max_examples=60)
HTTP = TestClient(create_app(Settings()), raise_server_exceptions=False)
REFUSED_CODES = (-32602, -32600)

DIGITS = st.text("0123456789", min_size=1, max_size=5000)
NUMBER_TEXT = (
    DIGITS
    | st.builds(lambda sign, digits: sign + digits, st.sampled_from(["-", "+", " ", "0x"]), DIGITS)
    | st.sampled_from(["٣", "１２", "1e3", "1.5", "", " 7 ", "9" * 4301, str(2**63), "²"])
)
NUMBERS = (
    st.integers()
    | st.integers(-(2**70), 2**70)
    | st.sampled_from([0, 1, -1, MAX_SEED, MAX_SEED + 1, MAX_STEP_INDEX, MAX_STEP_INDEX + 1])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.booleans()
    | NUMBER_TEXT
)


def in_range(value: Any, high: int, low: int = 0, text_ok: bool = False) -> bool:
    """Whether a door must accept `value` as a number from `low` to `high`."""
    if isinstance(value, str) and text_ok:
        text = value.strip()
        if not (text.isascii() and text.isdigit()) or len(text) > len(str(high)):
            return False
        value = int(text)
    return type(value) is int and low <= value <= high


def encoded(body: Any) -> bytes:
    """The JSON body as a client sends it (a number past int64 is still a JSON number)."""
    return json.dumps(body).encode()


def check_http(response: Any, field: str, must_accept: bool) -> None:
    event(f"HTTP {response.status_code}")
    assert response.status_code < 500, response.text[:300]
    if must_accept:
        assert response.status_code == 200, response.text[:300]
    elif response.status_code != 200:
        assert field in response.json()["detail"], response.text[:300]


def check_rpc(answer: dict[str, Any], field: str, must_accept: bool) -> None:
    error = answer.get("error")
    event(f"MCP {error['code'] if error else 'result'}")
    if error is None and isinstance(answer.get("result"), dict) and answer["result"].get("isError"):
        error = {"code": -32602, "message": answer["result"]["structuredContent"]["error"]}
    if must_accept:
        assert error is None, answer
    elif error is not None:
        assert error["code"] in REFUSED_CODES and field in error["message"], answer


@NUMBER_PROPERTY
@given(NUMBERS)
def test_http_seeds_and_step_indexes_are_bounded(value: Any) -> None:
    reset = HTTP.post(
        "/reset", content=encoded({"seed": value}), headers={"Content-Type": "application/json"}
    )
    check_http(reset, "seed", must_accept=in_range(value, MAX_SEED))
    episode = HTTP.post("/reset", json={"task_id": "billing_discrepancy"}).json()["episode_id"]
    step = HTTP.post(
        "/step",
        content=encoded({"action": LOOKUP, "episode_id": episode, "step_index": value}),
        headers={"Content-Type": "application/json"},
    )
    check_http(step, "step_index", must_accept=value in (1, 1.0) and value is not True)


@NUMBER_PROPERTY
@given(NUMBERS)
def test_mcp_seeds_and_step_indexes_are_bounded(value: Any) -> None:
    session = Session(HTTP, "/servicebench", "?task_id=billing_discrepancy")
    text_seed = value if isinstance(value, str) else json.dumps(value)
    got = session.post(rpc("prompts/get", {"name": "billing_discrepancy",
                                           "arguments": {"seed": text_seed}}))  # fmt: skip
    assert got.status_code < 500, got.text[:300]
    check_rpc(got.json(), "seed", must_accept=in_range(text_seed, MAX_SEED, text_ok=True))
    created = HTTP.post(
        "/mcp",
        content=encoded(rpc("openenv/session/create", {"seed": value})),
        headers={"Content-Type": "application/json"},
    )
    assert created.status_code < 500, created.text[:300]
    check_rpc(created.json(), "seed", must_accept=in_range(value, MAX_SEED))
    by_url = HTTP.post(
        "/mcp",
        params={"seed": text_seed},
        json=rpc("openenv/session/create", {}),
    )
    assert by_url.status_code < 500, by_url.text[:300]
    check_rpc(by_url.json(), "seed", must_accept=in_range(text_seed, MAX_SEED, text_ok=True))
    call = session.post(
        rpc("tools/call", {"name": "lookup_user", "arguments": {**LOOKUP["params"],
                                                                "step_index": value}})
    )  # fmt: skip
    assert call.status_code < 500, call.text[:300]
    check_rpc(call.json(), "step_index", must_accept=type(value) is int and value == 1)


@NUMBER_PROPERTY
@given(NUMBERS)
def test_websocket_seeds_and_step_indexes_are_bounded(value: Any) -> None:
    session = Session(HTTP, "/servicebench", "?task_id=billing_discrepancy")
    text_seed = value if isinstance(value, str) else json.dumps(value)
    with HTTP.websocket_connect("/servicebench/ws") as socket:

        def ask(message: dict[str, Any]) -> dict[str, Any]:
            socket.send_text(json.dumps(message))
            reply = json.loads(socket.receive_text())
            if reply["type"] == "error":
                assert reply["data"]["status"] < 500, reply
            return reply

        reset = ask({"type": "reset", "data": {"task_id": "billing_discrepancy", "seed": value}})
        if in_range(value, MAX_SEED):
            assert reset["type"] == "observation", reset
        elif reset["type"] == "error":
            assert "seed" in reset["data"]["message"], reset
        ask({"type": "reset", "data": {"task_id": "billing_discrepancy"}})
        step = ask({"type": "step", "data": LOOKUP, "step_index": value})
        if type(value) is int and value == 1:
            assert step["type"] == "observation", step
        else:
            assert step["type"] == "error" and "step_index" in step["data"]["message"], step
        got = ask({"type": "mcp", "data": rpc("prompts/get", {"name": "billing_discrepancy",
                   "session_id": session.id, "arguments": {"seed": text_seed}})})  # fmt: skip
        if got["type"] == "mcp":
            check_rpc(got["data"], "seed", in_range(text_seed, MAX_SEED, text_ok=True))
        else:
            assert "seed" in got["data"]["message"], got
    with HTTP.websocket_connect(f"/servicebench/ws?session_id={session.id}") as socket:
        call = {"type": "call_tool", "tool_name": "lookup_user",
                "arguments": {**LOOKUP["params"], "step_index": value}}  # fmt: skip
        socket.send_text(json.dumps({"type": "reset", "data": {}}))
        socket.receive_text()
        socket.send_text(json.dumps({"type": "step", "data": call}))
        reply = json.loads(socket.receive_text())
        if type(value) is int and value == 1:
            assert reply["type"] == "observation", reply
        else:
            assert reply["type"] == "error" and reply["data"]["status"] < 500, reply
            assert "step_index" in reply["data"]["message"], reply
