"""The WebSocket door (issue 21), with a raw client against a live uvicorn running
server/protocols' classes: compressed messages by the thousand in one write, messages over
the app's limit and over the door's, a client that never reads its replies, and one that
says nothing."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from raw_websocket import OP_CLOSE, OP_TEXT, RawWebSocket
from server_process import ServerProcess

from servicebench_support_queue.server.protocols import UVICORN_ARGS
from servicebench_support_queue.server.protocols.limits import WS_DOOR_FACTOR
from servicebench_support_queue.server.protocols.websocket import frame_size

MAX_BODY = 65536
DOOR = WS_DOOR_FACTOR * MAX_BODY
SEND_TIMEOUT, IDLE = 2.0, 6.0
# IDLE is long enough that a starved server still reads each of a thousand queued messages well
# within it (at 3 s one fresh run on two loaded cores closed the session mid-queue as idle)
GRACE = 5.0
PATH = "/servicebench/ws"
LOOKUP = {
    "service": "user",
    "endpoint": "/users/lookup",
    "params": {"email": "jane.doe@example.com"},
}


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    env = {
        "MAX_BODY_BYTES": str(MAX_BODY),
        "SEND_TIMEOUT_SECONDS": str(SEND_TIMEOUT),
        "WS_IDLE_TIMEOUT_SECONDS": str(IDLE),
    }
    process = ServerProcess(env, args=UVICORN_ARGS).start().wait()
    try:
        yield process
    finally:
        process.stop()


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _reply(ws: RawWebSocket) -> dict:
    opcode, payload = ws.recv_frame()
    assert opcode == OP_TEXT, (opcode, payload[:200])
    return json.loads(payload)


def _close_code(ws: RawWebSocket) -> int:
    while True:
        opcode, payload = ws.recv_frame()
        if opcode == OP_CLOSE:
            return int.from_bytes(payload[:2], "big")


def _send(ws: RawWebSocket, message: dict) -> dict:
    ws.send_text(json.dumps(message))
    return _reply(ws)


def test_frame_size_reads_every_header_form() -> None:
    assert frame_size(b"\x81") is None and frame_size(b"\x81\x85") == 2 + 4 + 5
    assert frame_size(b"\x81\x05hello") == 7
    assert frame_size(b"\x81\xfe\x01") is None and frame_size(b"\x81\xfe\x01\x00") == 4 + 4 + 256
    assert frame_size(b"\x81\x7f" + (1 << 40).to_bytes(8, "big")) == 10 + (1 << 40)


def test_a_thousand_compressed_messages_in_one_write_are_inflated_one_at_a_time(
    server: ServerProcess,
) -> None:
    """Each inflates to ~100 KB, over the app's limit and under the door's: each gets the
    app's 413 reply in turn, the session goes on, and the server never holds them all."""
    ws = RawWebSocket(server.port, PATH, deflate=True)
    assert ws.deflated
    before = _rss_mb(server.process.pid)
    bomb = b'{"type": "state", "pad": "' + b" " * 100_000 + b'"}'
    count = 1000
    ws.sock.sendall(b"".join(ws.compressed_frame(bomb) for _ in range(count)))
    for _ in range(count):
        error = _reply(ws)["data"]
        assert error["status"] == 413 and error["code"] == "VALIDATION_ERROR"
    assert _rss_mb(server.process.pid) - before < 64, "100 MB inflated at once"
    assert _send(ws, {"type": "reset", "data": {}})["type"] == "observation"
    assert _send(ws, {"type": "step", "data": LOOKUP})["data"]["reward"] > 0
    ws.close()


@pytest.mark.parametrize("compressed", [False, True])
def test_a_message_over_the_door_closes_1009_and_the_episode_survives(
    server: ServerProcess, compressed: bool
) -> None:
    ws = RawWebSocket(server.port, PATH, deflate=compressed)
    episode_id = _send(ws, {"type": "reset", "data": {}})["data"]["observation"]["info"][
        "episode_id"
    ]
    huge = json.dumps({"type": "state", "pad": " " * (DOOR + 10)}).encode()
    ws.sock.sendall(ws.compressed_frame(huge) if compressed else ws.frame(huge))
    assert _close_code(ws) == 1009  # message too big: the protocol refuses it
    ws.close()
    again = RawWebSocket(server.port, PATH)
    resumed = _send(again, {"type": "resume", "data": {"episode_id": episode_id}})
    assert resumed["type"] == "observation"
    assert _send(again, {"type": "step", "data": LOOKUP})["data"]["reward"] > 0
    again.close()


def test_a_message_between_the_limits_gets_413_and_the_session_goes_on(
    server: ServerProcess,
) -> None:
    ws = RawWebSocket(server.port, PATH)
    _send(ws, {"type": "reset", "data": {}})
    error = _send(ws, {"type": "step", "data": {**LOOKUP, "pad": "x" * (MAX_BODY + 100)}})
    assert error["type"] == "error" and error["data"]["status"] == 413
    assert _send(ws, {"type": "step", "data": LOOKUP})["data"]["reward"] > 0
    ws.close()


def test_a_client_that_never_reads_is_dropped_and_one_that_reads_slowly_is_not(
    server: ServerProcess,
) -> None:
    readers = []
    for _ in range(2):
        ws = RawWebSocket(server.port, PATH)
        _send(ws, {"type": "reset", "data": {"task_id": "billing_discrepancy"}})
        ws.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        ws.sock.sendall(ws.frame(b'{"type": "state"}') * 20_000)  # ~100 MB of replies
        readers.append(ws)
    never, slow = readers
    deadline = time.monotonic() + 3 * SEND_TIMEOUT + GRACE
    while time.monotonic() < deadline:
        slow.sock.recv(4096)
        time.sleep(0.05)
    slow.sock.settimeout(5)
    assert slow.sock.recv(4096), "a client that reads, however slowly, keeps its connection"
    never.sock.settimeout(5)
    with pytest.raises(ConnectionError):  # reset by the server
        while never.sock.recv(65536):
            pass
    assert httpx.get(f"{server.url}/health", timeout=10).status_code == 200
    slow.close()


def test_an_idle_websocket_is_closed_1001_and_its_episode_kept(server: ServerProcess) -> None:
    ws = RawWebSocket(server.port, PATH)
    observation = _send(ws, {"type": "reset", "data": {}})["data"]["observation"]
    started = time.monotonic()
    ws.sock.settimeout(IDLE + GRACE)
    assert _close_code(ws) == 1001
    assert IDLE - 0.5 <= time.monotonic() - started < IDLE + GRACE
    ws.close()
    again = RawWebSocket(server.port, PATH)
    resume = {"type": "resume", "data": {"episode_id": observation["info"]["episode_id"]}}
    assert _send(again, resume)["type"] == "observation"
    again.close()
