"""The robustness battery over OpenEnv's WebSocket protocol (issue 12).

One session per surface (the root and both prefixes), in process and through a
real uvicorn, receives every hostile message of tests/robustness_support.py: each
hostile step as a step message's data, and hostile whole messages (framing,
encoding, size, shape), as text frames and, where they are not UTF-8, as binary
frames. Each one must get a reply: OpenEnv's error reply (`{"type": "error",
"data": {"message", "code"}}`) for a bad one, after which the episode's state is
byte-identical; an observation for a valid one. The session must never close.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Protocol

import pytest
from fastapi.testclient import TestClient
from openenv.core.env_server.types import WSErrorCode
from robustness_support import (
    JSON_TYPE,
    SURFACES,
    VALID_ACTION,
    refused_as_bare_action,
    step_cases,
    strict_json,
    whole_body_cases,
)
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings

ERROR_CODES = {code.value for code in WSErrorCode}
Payload = str | bytes


@dataclass(frozen=True)
class Message:
    name: str
    payload: Payload
    refused: bool = True


def frames(name: str, raw: bytes, refused: bool = True) -> list[Message]:
    """`raw` as a text frame if it is UTF-8, and always as a binary frame."""
    try:
        text = [Message(f"{name} (text)", raw.decode("utf-8"), refused)]
    except UnicodeDecodeError:
        text = []
    return [*text, Message(f"{name} (binary)", raw, refused)]


def ws_messages(env: str, with_raw_surrogates: bool) -> list[Message]:
    messages = [
        message
        for case in step_cases(env)
        if case.content_type == JSON_TYPE and case.body
        for message in frames(
            case.name, b'{"type": "step", "data": ' + case.body + b"}", refused_as_bare_action(case)
        )
    ]
    valid = json.dumps({"type": "step", "data": VALID_ACTION[env]}).encode()
    messages += [
        message
        for case in whole_body_cases(valid)
        if case.content_type == JSON_TYPE
        for message in frames(f"message: {case.name}", case.body, case.refused)
    ]
    messages += [
        Message(name, json.dumps(data))
        for name, data in (
            ("type an array", {"type": ["step"], "data": VALID_ACTION[env]}),
            ("unknown type", {"type": "dance"}),
            ("no type", {"data": {}}),
            ("data an array", {"type": "step", "data": [VALID_ACTION[env]]}),
            ("data a string", {"type": "step", "data": "go"}),
            ("reset with a seed past 2^63", {"type": "reset", "data": {"seed": 2**64}}),
            ("reset with an unknown task", {"type": "reset", "data": {"task_id": "nope"}}),
        )
    ]
    messages += [
        Message("type with a surrogate", '{"type": "st\\udc00ate"}'),
        Message("state data with a surrogate", '{"type": "state", "data": "\\ud800"}'),
    ]
    if with_raw_surrogates:  # only in process: a real socket carries UTF-8, which cannot hold them
        messages += [
            Message(
                "raw lone surrogate in a text", '{"type": "step", "data": {"summary": "\ud800"}}'
            ),
            Message("raw lone surrogate as a key", '{"type": "state", "\udfff": 1}'),
        ]
    return messages


class Session(Protocol):
    def send(self, payload: Payload) -> None: ...

    def recv(self) -> str: ...


class InProcess:
    """Starlette's test WebSocket, as a `Session`."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket

    def send(self, payload: Payload) -> None:
        if isinstance(payload, bytes):
            self.socket.send_bytes(payload)
        else:
            self.socket.send_text(payload)

    def recv(self) -> str:
        return self.socket.receive_text()


def ask(session: Session, payload: Payload) -> dict[str, Any]:
    session.send(payload)
    reply = strict_json(session.recv().encode())
    assert isinstance(reply, dict) and reply.get("type") in ("observation", "state", "error"), reply
    return reply


def play(session: Session, env: str, messages: list[Message]) -> list[str]:
    """Send every message through one session; what went wrong, if anything."""
    reset = json.dumps({"type": "reset", "data": {"task_id": TASK[env]}})
    state = json.dumps({"type": "state"})
    assert ask(session, reset)["type"] == "observation"
    before = ask(session, state)
    problems = []
    for message in messages:
        reply = ask(session, message.payload)
        after = ask(session, state)
        if reply["type"] == "error":
            data = reply["data"]
            if not (str(data.get("message", "")).strip() and data.get("code") in ERROR_CODES):
                problems.append(f"{message.name}: not OpenEnv's error reply: {reply}")
            if data.get("status", 400) >= 500:
                problems.append(f"{message.name}: {data}")
            if after != before:
                problems.append(f"{message.name}: refused, yet the episode changed")
        if (reply["type"] == "error") != message.refused:
            problems.append(
                f"{message.name}: {'accepted' if message.refused else 'refused'}: {str(reply)[:200]}"
            )
        if reply["type"] != "error":  # a valid step: the next message gets a fresh episode
            assert ask(session, reset)["type"] == "observation"
            after = ask(session, state)
        before = after
    return problems


TASK = {"servicebench": "return_and_refund", "support_queue": "medium_sla_defense"}


@pytest.mark.parametrize(("prefix", "env"), SURFACES)
def test_in_process_sessions_survive_every_hostile_message(
    prefix: str, env: str, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.ERROR),
        TestClient(create_app(Settings())).websocket_connect(f"{prefix}/ws") as ws,
    ):
        problems = play(InProcess(ws), env, ws_messages(env, with_raw_surrogates=True))
        assert ask(InProcess(ws), json.dumps({"type": "state"}))["type"] == "state"  # still open
    assert not problems, "\n".join(problems[:40])
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text[-3000:]


@pytest.mark.parametrize(("prefix", "env"), SURFACES)
def test_sessions_over_uvicorn_survive_every_hostile_message(
    battery_server: str, prefix: str, env: str
) -> None:
    url = battery_server.replace("http://", "ws://") + f"{prefix}/ws"
    with connect(url, max_size=None) as ws:
        problems = play(ws, env, ws_messages(env, with_raw_surrogates=False))
        assert (
            ask(ws, json.dumps({"type": "state"}))["type"] == "state"
        )  # still open: never a close
    assert not problems, "\n".join(problems[:40])


def test_a_text_frame_that_is_not_utf8_is_closed_1007_as_the_protocol_requires(
    live_server: str,
) -> None:
    """RFC 6455 fails a connection whose text frame is not UTF-8: uvicorn closes it with 1007
    before the app sees the message (binary frames carry any bytes: those get an error reply)."""
    url = live_server.replace("http://", "ws://") + "/servicebench/ws"
    with connect(url) as ws:
        assert ask(ws, json.dumps({"type": "reset", "data": {}}))["type"] == "observation"
        ws.send(b'{"type": "state", "x": "\xff"}', text=True)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007  # never 1006
    with connect(url) as ws:
        assert ask(ws, b'{"type": "state", "x": "\xff"}')["data"]["code"] == "INVALID_JSON"
