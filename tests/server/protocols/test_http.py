"""The HTTP door against slow and greedy clients (issue 21), with raw sockets against a live
uvicorn running server/protocols' classes: heads that trickle or never come, bodies that
trickle or stop short, heads too large, requests piled up unanswered, and more slow
connections than the process has file descriptors, while /health keeps answering."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from server_process import REPO, ServerProcess, free_port, stop, wait_healthy

from servicebench_support_queue.server.protocols import UVICORN_ARGS
from servicebench_support_queue.server.protocols.limits import MAX_HEAD_BYTES, MAX_PIPELINED

HEADER_TIMEOUT, BODY_TIMEOUT = 2.0, 2.0
LIMITS = {
    "HEADER_TIMEOUT_SECONDS": str(HEADER_TIMEOUT),
    "BODY_TIMEOUT_SECONDS": str(BODY_TIMEOUT),
}
GRACE = 4.0
"""How much later than its deadline a connection may be closed (the sweep runs each second;
a loaded machine is slow)."""


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    process = ServerProcess(LIMITS, args=UVICORN_ARGS).start().wait()
    try:
        yield process
    finally:
        process.stop()


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=HEADER_TIMEOUT + GRACE + 5)


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _read_response(sock: socket.socket) -> bytes:
    """One whole response (its head and its Content-Length of body), leaving the connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def _status_and_json(response: bytes) -> tuple[int, dict]:
    head, _, body = response.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)


def _healthy(url: str) -> bool:
    return httpx.get(f"{url}/health", timeout=10).json() == {"status": "healthy"}


def test_a_head_that_trickles_is_answered_408_and_closed(server: ServerProcess) -> None:
    sock = _connect(server.port)
    sock.sendall(b"GET /health HTTP/1.1\r\n")
    started = time.monotonic()
    sock.settimeout(0.5)
    answer = b""
    while time.monotonic() - started < HEADER_TIMEOUT + GRACE:
        try:
            sock.sendall(b"X: y\r\n")  # a header every half second, never the blank line
            answer += sock.recv(65536)
            if answer and b"\r\n\r\n" in answer:
                break
        except TimeoutError:
            continue
        except OSError:
            break
    status, body = _status_and_json(answer)
    assert status == 408 and "HEADER_TIMEOUT_SECONDS" in body["detail"]
    assert _healthy(server.url)


def test_a_connection_that_never_sends_a_request_is_closed(server: ServerProcess) -> None:
    idle, answered = _connect(server.port), _connect(server.port)
    answered.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _read_response(answered).startswith(b"HTTP/1.1 200")
    started = time.monotonic()
    assert _read_all(idle) == b""  # closed without a word: it never began a request
    assert _read_all(answered) == b""  # the idle keep-alive connection too
    assert time.monotonic() - started < HEADER_TIMEOUT + GRACE


@pytest.mark.parametrize("sent", [b"", b'{"task_id": "billing_discrepancy"', b'{"task_id": 3}'])
def test_a_body_that_stops_short_or_trickles_is_answered_408(
    server: ServerProcess, sent: bytes
) -> None:
    before = httpx.get(f"{server.url}/state", timeout=10)
    sock = _connect(server.port)
    head = (
        b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 200\r\n\r\n"
    )
    sock.sendall(head + sent)
    status, body = _status_and_json(_read_all(sock))
    assert status == 408 and "BODY_TIMEOUT_SECONDS" in body["detail"]
    after = httpx.get(f"{server.url}/state", timeout=10)
    assert (after.status_code, after.content) == (before.status_code, before.content)


def test_an_mcp_body_that_trickles_gets_a_json_rpc_error(server: ServerProcess) -> None:
    sock = _connect(server.port)
    sock.sendall(
        b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100\r\n\r\n{"jsonrpc": "2.0", '
    )
    # a byte every quarter of the timeout, the last at half of it: bytes keep coming, the body
    # never completes. Nothing is sent near the deadline: a byte that reaches the server after it
    # answered and closed makes its kernel reset the connection, which can drop the 408 unread
    for _ in range(2):
        time.sleep(BODY_TIMEOUT / 4)
        sock.sendall(b" ")
    status, body = _status_and_json(_read_all(sock))
    assert status == 408 and body["error"]["code"] == -32600


def test_a_head_over_the_limit_is_refused_with_431(server: ServerProcess) -> None:
    sock = _connect(server.port)
    padding = b"X-Pad: " + b"a" * 1000 + b"\r\n"
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n" + padding * (MAX_HEAD_BYTES // 1000 + 1))
    one_value = _connect(server.port)  # one header that never ends
    one_value.sendall(b"GET /health HTTP/1.1\r\nX-Pad: " + b"a" * (MAX_HEAD_BYTES + 1000))
    status, body = _status_and_json(_read_all(one_value))
    assert status == 431
    status, body = _status_and_json(_read_all(sock))
    assert status == 431 and str(MAX_HEAD_BYTES) in body["detail"]


def test_requests_piled_up_unanswered_are_refused_with_429(server: ServerProcess) -> None:
    sock = _connect(server.port)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n" * (MAX_PIPELINED + 10))
    answers = _read_all(sock)
    assert b"HTTP/1.1 429" in answers and answers.count(b"HTTP/1.1 ") <= MAX_PIPELINED + 1
    few = _connect(server.port)
    few.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n" * 3 + b"GET /health HTTP/1.1\r\n")
    few.sendall(b"Host: x\r\nConnection: close\r\n\r\n")
    assert _read_all(few).count(b"HTTP/1.1 200") == 4  # a few ahead are fine


def test_a_malformed_request_gets_a_json_400(server: ServerProcess) -> None:
    sock = _connect(server.port)
    sock.sendall(b"GET /health HTTP/1.1\r\nBad Header\r\n\r\n")
    status, body = _status_and_json(_read_all(sock))
    assert status == 400 and body["detail"]


FD_LIMIT = 128


@contextlib.contextmanager
def _server_with_few_descriptors() -> Iterator[tuple[str, int]]:
    """A server whose process may open FD_LIMIT files (sockets included) at most."""
    port = free_port()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    command = [sys.executable, "-m", "uvicorn", "servicebench_support_queue.server.app:app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    process = subprocess.Popen(
        [*command, *UVICORN_ARGS, "--backlog", "2048"],
        cwd=REPO,
        env={**os.environ, "HEADER_TIMEOUT_SECONDS": "60", "BODY_TIMEOUT_SECONDS": "60"},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, hard)),
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", process)
        yield f"http://127.0.0.1:{port}", port
    finally:
        stop(process)


def test_slow_clients_beyond_the_descriptor_limit_never_take_health_down() -> None:
    """300 connections trickling heads and 200 trickling bodies, against 128 descriptors and
    deadlines of a minute: the longest waiters make room for newcomers, /health answers."""
    slow: list[socket.socket] = []
    with _server_with_few_descriptors() as (url, port):
        for number in range(500):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            if number % 5 < 2:  # a body that never comes
                sock.sendall(b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{")
            else:  # a head that never ends
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
            slow.append(sock)
            if number % 100 == 99:
                assert _healthy(url)
        for _ in range(20):
            assert _healthy(url)
        open_now = 0
        for sock in slow:
            sock.setblocking(False)
            try:
                open_now += sock.recv(1) != b""
            except BlockingIOError:
                open_now += 1
            except OSError:
                pass
        assert open_now < FD_LIMIT, "the process never held more than its descriptors allow"
    for sock in slow:
        sock.close()
