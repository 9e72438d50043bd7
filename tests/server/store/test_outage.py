"""Honest outage answers: a step the store may have recorded says so, and a resend with its
`step_index` is safe on every transport (HTTP, WebSocket, MCP).

Redis is paused (SIGSTOP, as `docker pause` does) as a step's append is sent, past the
batch timeout: the step answers 503 with `outcome: unknown` and the step_index it was sent
as. Once Redis resumes it runs the step it had received, so the step is in the log; the
resend with that step_index is answered from the log, and the episode holds the step
once. A request that sent no change (the store unreachable, or a pause met at the read
before the step) answers `outcome: not_applied`. On SQLite a COMMIT that fails (a disk
error) may have committed: its outcome is unknown too.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp_support import Session, rpc
from redis_process import RedisProcess, requires_redis, running_redis
from robustness_support import LOOKUP
from server_process import free_port

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.store import redis as redis_store
from servicebench_support_queue.server.store.redis import RedisBackend
from servicebench_support_queue.server.store.sqlite import SqliteBackend

ORDERS = {"service": "order", "endpoint": "/orders/by-user", "params": {"user_id": "USR-001"}}
TIMEOUT_S = 0.4


@pytest.fixture(scope="module")
def paused_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisProcess]:
    """A Redis of this module's own, since the tests stop and continue its process."""
    with running_redis(tmp_path_factory.mktemp("outage-redis")) as server:
        yield server


@pytest.fixture
def client(paused_redis: RedisProcess, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setattr(redis_store, "BATCH_TIMEOUT_S", TIMEOUT_S)
    paused_redis.client().flushall()
    with TestClient(create_app(Settings(episode_store=paused_redis.url))) as client:
        yield client


class Paused:
    """Within the `with` block, Redis stops as the next append is sent to it; on leaving, it
    is continued, and its log `steps` long (the step it had received, run)."""

    def __init__(self, redis: RedisProcess, episode_id: str, steps: int) -> None:
        self.redis, self.key, self.steps = redis, f"sbsq:ep:{episode_id}", steps
        self.patch = pytest.MonkeyPatch()

    def __enter__(self) -> None:
        append, process = RedisBackend.append, self.redis.process
        assert process is not None

        async def append_then_pause(backend: RedisBackend, *args: Any) -> Any:
            os.kill(process.pid, signal.SIGSTOP)
            self.patch.undo()
            return await append(backend, *args)

        self.patch.setattr(RedisBackend, "append", append_then_pause)

    def __exit__(self, *exc: object) -> None:
        self.patch.undo()
        assert self.redis.process is not None
        os.kill(self.redis.process.pid, signal.SIGCONT)
        deadline = time.monotonic() + 20
        while self.redis.client().llen(self.key) != 1 + self.steps:  # the step it had received
            assert time.monotonic() < deadline, "Redis never ran the step it was sent"
            time.sleep(0.02)


def unknown_outcome(details: dict[str, Any], step_index: int) -> None:
    assert details["outcome"] == "unknown" and details["step_index"] == step_index, details


def steps_of(client: TestClient, episode_id: str) -> list[str]:
    state = client.get("/state", params={"episode_id": episode_id}).json()
    return [call["endpoint"] for call in state["call_history"]]


pytestmark = requires_redis


def test_http_a_step_that_may_be_recorded_says_so_and_its_resend_applies_once(
    client: TestClient, paused_redis: RedisProcess
) -> None:
    episode = client.post("/reset", json={"task_id": "billing_discrepancy"}).json()["episode_id"]
    client.post("/step", json={"action": LOOKUP, "episode_id": episode}).raise_for_status()
    with Paused(paused_redis, episode, steps=2):
        lost = client.post("/step", json={"action": ORDERS, "episode_id": episode})
        assert lost.status_code == 503
        unknown_outcome(lost.json(), 2)
        assert "may have been recorded" in lost.json()["detail"]
        assert '"step_index": 2' in lost.json()["detail"]
    again = client.post("/step", json={"action": ORDERS, "episode_id": episode, "step_index": 2})
    assert again.status_code == 200 and again.json()["observation"]["info"]["step"] == 2
    assert steps_of(client, episode) == ["/users/lookup", "/orders/by-user"]


def test_websocket_a_step_that_may_be_recorded_says_so_and_its_resend_applies_once(
    client: TestClient, paused_redis: RedisProcess
) -> None:
    with client.websocket_connect("/servicebench/ws") as socket:
        socket.send_text(json.dumps({"type": "reset", "data": {"task_id": "billing_discrepancy"}}))
        episode = json.loads(socket.receive_text())["data"]["observation"]["info"]["episode_id"]
        with Paused(paused_redis, episode, steps=1):
            socket.send_text(json.dumps({"type": "step", "data": LOOKUP}))
            lost = json.loads(socket.receive_text())
            assert lost["type"] == "error" and lost["data"]["status"] == 503
            unknown_outcome(lost["data"], 1)
        socket.send_text(json.dumps({"type": "step", "data": LOOKUP, "step_index": 1}))
        again = json.loads(socket.receive_text())
        assert again["type"] == "observation" and again["data"]["observation"]["info"]["step"] == 1
        socket.close(code=1001)
    assert steps_of(client, episode) == ["/users/lookup"]


def test_mcp_a_tool_call_that_may_be_recorded_says_so_and_its_resend_applies_once(
    client: TestClient, paused_redis: RedisProcess
) -> None:
    session = Session(client, "/servicebench", "?task_id=billing_discrepancy")
    lookup = {"name": "lookup_user", "arguments": LOOKUP["params"]}
    with Paused(paused_redis, session.id, steps=1):
        lost = session.post(rpc("tools/call", lookup))
        assert lost.status_code == 503
        error = lost.json()["error"]
        assert error["code"] == -32603
        unknown_outcome(error["data"], 1)
    again = session.call("lookup_user", **LOOKUP["params"], step_index=1)
    assert (
        again["isError"] is False and again["structuredContent"]["observation"]["info"]["step"] == 1
    )
    assert steps_of(client, session.id) == ["/users/lookup"]
    taken = session.call("lookup_order", order_id="ORD-1007", step_index=1)  # another call
    assert taken["isError"] is True and taken["structuredContent"]["status"] == 409
    assert steps_of(client, session.id) == ["/users/lookup"]


def test_a_request_that_sent_no_change_applied_nothing(
    client: TestClient, paused_redis: RedisProcess
) -> None:
    nothing_there = f"redis://127.0.0.1:{free_port()}/0"
    with TestClient(create_app(Settings(episode_store=nothing_there))) as unreachable:
        refused = unreachable.post("/reset", json={})
        assert refused.status_code == 503 and refused.json()["outcome"] == "not_applied"
        assert "Nothing was recorded" in refused.json()["detail"]
    session = Session(client, "/servicebench", "?task_id=billing_discrepancy")
    assert paused_redis.process is not None
    os.kill(paused_redis.process.pid, signal.SIGSTOP)  # the call's session lookup meets it
    try:
        lost = session.post(
            rpc("tools/call", {"name": "lookup_user", "arguments": LOOKUP["params"]})
        )
    finally:
        os.kill(paused_redis.process.pid, signal.SIGCONT)
    assert lost.status_code == 503 and lost.json()["error"]["data"] == {"outcome": "not_applied"}
    assert steps_of(client, session.id) == []


class FailingCommit:
    """An SQLite connection whose COMMIT commits, then reports a disk error (as an fsync
    that fails after the WAL's commit frame was written may)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self.fail = False

    def execute(self, sql: str, *args: Any) -> Any:
        result = self.connection.execute(sql, *args)
        if sql == "COMMIT" and self.fail:
            raise sqlite3.OperationalError("disk I/O error")
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)


def test_sqlite_a_commit_that_fails_may_have_recorded_the_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrapped: list[FailingCommit] = []
    connect = SqliteBackend._connect

    def failing_connect(self: SqliteBackend) -> Any:
        wrapped.append(FailingCommit(connect(self)))
        return wrapped[-1]

    monkeypatch.setattr(SqliteBackend, "_connect", failing_connect)
    with TestClient(create_app(Settings(episode_store=f"sqlite://{tmp_path}/e.db"))) as client:
        episode = client.post("/reset", json={"task_id": "billing_discrepancy"}).json()
        episode_id = episode["episode_id"]
        wrapped[-1].fail = True
        lost = client.post("/step", json={"action": LOOKUP, "episode_id": episode_id})
        wrapped[-1].fail = False
        assert lost.status_code == 503
        unknown_outcome(lost.json(), 1)
        again = client.post(
            "/step", json={"action": LOOKUP, "episode_id": episode_id, "step_index": 1}
        )
        assert again.status_code == 200 and again.json()["observation"]["info"]["step"] == 1
        assert steps_of(client, episode_id) == ["/users/lookup"]
