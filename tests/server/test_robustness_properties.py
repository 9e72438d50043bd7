"""Property: whatever JSON-ish value an action holds, an accepted step leaves `/state` readable.

Hypothesis generates recursive JSON with arbitrary Unicode (lone surrogates included),
unbounded integers, NaN and Infinity, at any depth, and puts it where actions carry
free-form data: a ServiceBench call's parameters (of a real endpoint, so the services
see it), a Support Queue triage's texts and confidence, either action's metadata, or the
whole body. Each is stepped over HTTP and over the WebSocket, sent both as JSON escapes
(what `json.dumps` writes) and as raw UTF-8 (surrogates as CESU-8 bytes). Properties:

* never a 5xx (HTTP) nor a 5xx error reply (WebSocket);
* a value that is not strict JSON within the limits (a lone surrogate, a non-finite
  number, an integer outside int64, nesting past the maximum) is refused;
* a refused step leaves `/state` byte-identical; an accepted one leaves it readable and
  strictly encodable (tests/robustness_support.strict_json).
"""

from __future__ import annotations

import json
import math
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import event, given
from hypothesis import strategies as st
from robustness_support import ANY_TEXT, PROPERTY, TRIAGE, strict_json

from servicebench_support_queue.mock_services import ENDPOINT_CATALOGUE
from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.strict_json import INT_MAX, INT_MIN, MAX_DEPTH

TASK = {"servicebench": "return_and_refund", "support_queue": "medium_sla_defense"}

TEXT = ANY_TEXT
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(10**30), 10**30)
    | st.floats()
    | TEXT
    | st.sampled_from(
        [INT_MAX, INT_MAX + 1, INT_MIN, INT_MIN - 1, 1e308, -0.0, "\ud800", "\x00\ufeff"]
    )
)
JSON_ISH = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)


@st.composite
def deep(draw: st.DrawFn) -> Any:
    """A JSON-ish value, sometimes wrapped to cross the nesting limit."""
    value = draw(JSON_ISH)
    for level in range(draw(st.sampled_from([0, 0, 0, 5, MAX_DEPTH - 4, MAX_DEPTH, 60]))):
        value = [value] if level % 2 else {"k": value}
    return value


@st.composite
def servicebench_action(draw: st.DrawFn) -> dict[str, Any]:
    row = draw(st.sampled_from(ENDPOINT_CATALOGUE))
    names = st.sampled_from([*row["params"], "extra"]) | TEXT
    return {
        "service": row["service"],
        "endpoint": row["endpoint"],
        "method": row["method"],
        "params": draw(st.dictionaries(names, deep(), max_size=3)),
        **draw(st.sampled_from([{}, {"metadata": {"m": draw(deep())}}])),
    }


@st.composite
def support_queue_action(draw: st.DrawFn) -> dict[str, Any]:
    field = draw(st.sampled_from(["summary", "response", "confidence", "metadata"]))
    return {**TRIAGE, field: draw(deep())}


ACTIONS = {"servicebench": servicebench_action(), "support_queue": support_queue_action()}


def unacceptable(value: Any, depth: int = 1) -> bool:
    """True if `value` (at `depth` in the body) is not strict JSON within the server's limits."""
    if isinstance(value, dict):
        return depth > MAX_DEPTH or any(
            unacceptable(k, depth) or unacceptable(v, depth + 1) for k, v in value.items()
        )
    if isinstance(value, list):
        return depth > MAX_DEPTH or any(unacceptable(item, depth + 1) for item in value)
    if isinstance(value, str):
        return any(0xD800 <= ord(char) <= 0xDFFF for char in value)
    if isinstance(value, float):
        return not math.isfinite(value)
    return (
        isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX
    )


def encode(body: Any, raw_utf8: bool) -> bytes:
    if raw_utf8:
        return json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return json.dumps(body).encode()


APP = create_app(Settings())
HTTP = TestClient(APP, raise_server_exceptions=False)


def http_state(prefix: str, episode: str) -> bytes:
    response = HTTP.get(f"{prefix}/state", params={"episode_id": episode})
    assert response.status_code == 200, response.text[:300]
    strict_json(response.content)
    return response.content


@PROPERTY
@given(
    st.sampled_from([("", "servicebench"), ("/support_queue", "support_queue")]),
    st.data(),
    st.booleans(),
)
def test_http_steps_of_any_json_leave_state_readable(
    surface: tuple[str, str], data: st.DataObject, raw_utf8: bool
) -> None:
    prefix, env = surface
    action = data.draw(ACTIONS[env] | deep())  # an action, or anything at all as the body
    episode = HTTP.post(f"{prefix}/reset", json={"task_id": TASK[env]}).json()["episode_id"]
    before = http_state(prefix, episode)
    response = HTTP.post(
        f"{prefix}/step",
        content=encode(action, raw_utf8),
        headers={"X-Episode-Id": episode, "Content-Type": "application/json"},
    )
    after = http_state(prefix, episode)
    event(f"HTTP {response.status_code}")
    assert response.status_code < 500, response.text[:300]
    strict_json(response.content)
    if unacceptable(action):
        assert 400 <= response.status_code < 500, response.text[:300]
    if response.status_code != 200:
        assert after == before and response.json()["detail"]


@PROPERTY
@given(
    st.sampled_from([("/servicebench", "servicebench"), ("", "support_queue")]),
    st.data(),
    st.booleans(),
)
def test_websocket_steps_of_any_json_leave_state_readable(
    surface: tuple[str, str], data: st.DataObject, raw_utf8: bool
) -> None:
    prefix, env = surface
    action = data.draw(ACTIONS[env] | deep())
    message = encode({"type": "step", "data": action}, raw_utf8)
    with HTTP.websocket_connect(f"{prefix}/ws") as socket:

        def ask(payload: Any) -> dict[str, Any]:
            if isinstance(payload, bytes):
                socket.send_bytes(payload)
            else:
                socket.send_text(json.dumps(payload))
            return strict_json(socket.receive_text().encode())

        assert ask({"type": "reset", "data": {"task_id": TASK[env]}})["type"] == "observation"
        before = ask({"type": "state"})
        reply = ask(message)
        after = ask({"type": "state"})  # the session is still open, and its state readable
        event(
            f"reply {reply['type']} {reply['data'].get('status', '') if reply['type'] == 'error' else ''}"
        )
        assert reply["type"] in ("observation", "error")
        if unacceptable({"type": "step", "data": action}):
            assert reply["type"] == "error", reply
        if reply["type"] == "error":
            assert reply["data"]["message"] and reply["data"].get("status", 400) < 500, reply
            assert after == before
