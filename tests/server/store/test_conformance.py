"""Every documented behaviour of the episode store, on memory, SQLite and Redis alike.

Each test drives the real app (in process, through its HTTP and WebSocket routes) on a
fresh store of each backend. "Another process" is a second app on the same store: its
own cache, its own connection, nothing shared but the store, as two uvicorn workers.
The memory store holds the episodes of one process, so the tests that need two skip it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient
from robustness_support import LOOKUP, TRIAGE

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.store import log

ORDERS = {"service": "order", "endpoint": "/orders/by-user", "params": {"user_id": "USR-001"}}
STOCK = {"service": "inventory", "endpoint": "/inventory/check-stock", "params": {"sku": "SKU-445"}}


class Node:
    """One app on the store (a process of the fleet), used like a client."""

    def __init__(self, url: str, **settings: Any) -> None:
        self.client = TestClient(create_app(Settings(episode_store=url, **settings)))
        self.client.__enter__()

    def close(self) -> None:
        self.client.__exit__(None, None, None)

    def reset(self, status: int = 200, **body: Any) -> dict[str, Any]:
        response = self.client.post("/reset", json=body)
        assert response.status_code == status, response.text
        return response.json()

    def step(self, action: dict[str, Any], status: int = 200, prefix: str = "", **envelope: Any):
        response = self.client.post(f"{prefix}/step", json={"action": action, **envelope})
        assert response.status_code == status, response.text
        return response

    def state(self, episode_id: str | None = None, status: int = 200, prefix: str = "") -> Any:
        params = {"episode_id": episode_id} if episode_id else {}
        response = self.client.get(f"{prefix}/state", params=params)
        assert response.status_code == status, response.text
        return response.json()


@pytest.fixture
def nodes(backend_url: str) -> Iterator[Any]:
    """Opens nodes on this test's store; closes them all at the end."""
    opened: list[Node] = []

    def open_node(**settings: Any) -> Node:
        opened.append(Node(backend_url, **settings))
        return opened[-1]

    open_node.url = backend_url  # type: ignore[attr-defined]
    yield open_node
    for node in opened:
        node.close()


def second(nodes: Any, **settings: Any) -> Node:
    """Another process on the same store (not for the memory store: it is one process's)."""
    if nodes.url == "memory":
        pytest.skip("the memory store holds one process's episodes")
    return nodes(**settings)


def calls(state: dict[str, Any]) -> list[tuple[int, str]]:
    return [(call["step"], call["endpoint"]) for call in state["call_history"]]


# ----------------------------------------------------------------- the basics


def test_reset_step_state_and_the_scope_of_each_prefix(nodes: Any) -> None:
    node = nodes()
    episode = node.reset(task_id="billing_discrepancy")["episode_id"]
    result = node.step(LOOKUP, episode_id=episode).json()
    assert result["observation"]["info"]["step"] == 1 and result["episode_id"] == episode
    assert calls(node.state(episode)) == [(1, "/users/lookup")]
    node.state(episode, 404, prefix="/support_queue")  # another env's prefix: not found
    node.step(TRIAGE, 404, prefix="/support_queue", episode_id=episode)
    assert node.state(episode, prefix="/servicebench")["step_count"] == 1
    missing = node.step(LOOKUP, 404, episode_id="never-reset").json()["detail"]
    assert "never-reset" in missing and "/reset" in missing


def test_a_rejected_step_changes_nothing(nodes: Any) -> None:
    node = nodes()
    episode = node.reset(env="support_queue", task_id="easy_inbox_cleanup")["episode_id"]
    node.step(TRIAGE, episode_id=episode)
    before = node.client.get("/state", params={"episode_id": episode}).content
    node.step({**TRIAGE, "priority": "P9"}, 422, episode_id=episode)
    node.step(TRIAGE, 422, episode_id=episode, step_index=0)
    node.step(TRIAGE, 422, episode_id=episode, step_index=True)
    assert node.client.get("/state", params={"episode_id": episode}).content == before


def test_a_finished_episode_refuses_steps_with_409(nodes: Any) -> None:
    node = nodes()
    episode = node.reset(task_id="easy_inbox_cleanup", episode_id="short")["episode_id"]
    total = node.state(episode)["total_tickets"]
    for _ in range(total):
        node.step(TRIAGE, episode_id=episode)
    assert "done" in node.step(TRIAGE, 409, episode_id=episode).json()["detail"]
    assert node.state(episode)["step_count"] == total


# --------------------------------------------------------------- ids, cap, TTL


def test_a_held_id_is_never_reused_and_is_free_again_once_dropped(nodes: Any) -> None:
    node = nodes(max_live_episodes=2)
    node.reset(task_id="billing_discrepancy", episode_id="mine")
    node.step(LOOKUP, episode_id="mine")
    before = node.client.get("/state", params={"episode_id": "mine"}).content
    assert "still held" in node.reset(409, env="support_queue", episode_id="mine")["detail"]
    assert node.client.get("/state", params={"episode_id": "mine"}).content == before
    node.reset(task_id="billing_discrepancy")
    node.reset(task_id="billing_discrepancy")  # the cap (2) drops "mine", the longest idle
    node.state("mine", 404)
    assert node.reset(env="support_queue", episode_id="mine")["observation"]["info"]["step"] == 0


def test_at_the_cap_finished_episodes_go_first_then_the_longest_idle(nodes: Any) -> None:
    node = nodes(max_live_episodes=3)
    a, b, c = (node.reset(task_id="easy_inbox_cleanup")["episode_id"] for _ in range(3))
    for _ in range(node.state(b)["total_tickets"]):
        node.step(TRIAGE, episode_id=b)  # b finishes: it goes first, although a is idler
    node.state(a)
    d = node.reset(task_id="easy_inbox_cleanup")["episode_id"]
    node.state(b, 404)
    node.state(a)  # a is now the most recently used: c is the longest idle
    node.reset(task_id="easy_inbox_cleanup")
    node.state(c, 404)
    assert all(node.state(e)["episode_id"] == e for e in (a, d))


def test_an_idle_episode_expires_after_the_ttl_and_use_keeps_it_alive(nodes: Any) -> None:
    node = nodes(episode_ttl_seconds=1.5)
    kept = node.reset(task_id="billing_discrepancy")["episode_id"]
    idle = node.reset(task_id="billing_discrepancy")["episode_id"]
    time.sleep(0.9)
    node.step(LOOKUP, episode_id=kept)
    time.sleep(0.9)  # idle: 1.8 s > 1.5 s; kept: 0.9 s
    assert "expired after 1.5s idle" in node.state(idle, 404)["detail"]
    assert node.state(kept)["step_count"] == 1
    node.reset(task_id="billing_discrepancy", episode_id=idle)  # its id is free again


# ----------------------------------------------------------- latest episode


def test_the_latest_episode_fallback_per_env_and_overall(nodes: Any) -> None:
    node = nodes()
    bench = node.reset(task_id="billing_discrepancy")["episode_id"]
    queue = node.reset(env="support_queue")["episode_id"]
    assert node.state()["episode_id"] == queue
    assert node.state(prefix="/servicebench")["episode_id"] == bench
    node.step(LOOKUP, prefix="/servicebench")
    assert node.state(bench)["step_count"] == 1
    strict = nodes(require_episode_id=True)
    assert "episode_id is required" in strict.state(status=400)["detail"]


def test_the_latest_episode_is_the_stores_latest_across_processes(nodes: Any) -> None:
    first = nodes()
    other = second(nodes)
    episode = first.reset(task_id="billing_discrepancy")["episode_id"]
    other.step(LOOKUP)
    assert first.state()["episode_id"] == episode and first.state()["step_count"] == 1


def test_no_episode_yet_answers_404_without_an_id(nodes: Any) -> None:
    assert "call /reset" in nodes().state(status=404)["detail"]


# ---------------------------------------------------------------- step_index


def test_a_retried_step_index_is_answered_again_and_applied_once(nodes: Any) -> None:
    node = nodes()
    episode = node.reset(task_id="billing_discrepancy")["episode_id"]
    first = node.step(LOOKUP, episode_id=episode, step_index=1)
    node.step(ORDERS, episode_id=episode, step_index=2)
    again = node.step(LOOKUP, episode_id=episode, step_index=1)
    assert again.content == first.content
    reordered = {"params": LOOKUP["params"], **{k: v for k, v in LOOKUP.items() if k != "params"}}
    assert node.step(reordered, episode_id=episode, step_index=1).content == first.content
    other = node.step(STOCK, 409, episode_id=episode, step_index=1).json()["detail"]
    assert "different action" in other
    ahead = node.step(STOCK, 409, episode_id=episode, step_index=4).json()["detail"]
    assert "step_index 3" in ahead
    assert calls(node.state(episode)) == [(1, "/users/lookup"), (2, "/orders/by-user")]


def test_the_retry_of_the_last_step_is_answered_even_once_the_episode_is_done(
    nodes: Any,
) -> None:
    node = nodes()
    episode = node.reset(task_id="easy_inbox_cleanup")["episode_id"]
    total = node.state(episode)["total_tickets"]
    answers = [node.step(TRIAGE, episode_id=episode, step_index=i) for i in range(1, total + 1)]
    assert answers[-1].json()["done"] is True
    assert node.step(TRIAGE, episode_id=episode, step_index=total).content == answers[-1].content
    node.step(TRIAGE, 409, episode_id=episode, step_index=total + 1)


# ------------------------------------------------------- several processes


def test_any_process_serves_any_step(nodes: Any) -> None:
    a, b = nodes(), second(nodes)
    episode = a.reset(task_id="billing_discrepancy")["episode_id"]
    for node, action in zip((b, a, b, a), (LOOKUP, ORDERS, STOCK, LOOKUP), strict=True):
        node.step(action, episode_id=episode)
    expected = [(1, "/users/lookup"), (2, "/orders/by-user"), (3, "/inventory/check-stock")]
    assert calls(a.state(episode))[:3] == expected and a.state(episode) == b.state(episode)
    assert len(calls(b.state(episode))) == 4


def test_a_stale_process_catches_up_before_it_applies_a_step(nodes: Any) -> None:
    a, b = nodes(), second(nodes)
    episode = a.reset(task_id="billing_discrepancy")["episode_id"]
    b.state(episode)  # b caches the episode at step 0
    a.step(LOOKUP, episode_id=episode)
    a.step(ORDERS, episode_id=episode)
    result = b.step(STOCK, episode_id=episode).json()  # b's cache is 2 steps behind
    assert result["observation"]["info"]["step"] == 3
    # with step_index, a step already taken elsewhere is answered, not applied again
    assert (
        b.step(ORDERS, episode_id=episode, step_index=2).content
        == a.step(ORDERS, episode_id=episode, step_index=2).content
    )
    assert calls(b.state(episode)) == calls(a.state(episode))
    assert len(calls(a.state(episode))) == 3


def test_a_held_id_is_refused_across_processes(nodes: Any) -> None:
    a, b = nodes(), second(nodes)
    a.reset(task_id="billing_discrepancy", episode_id="shared")
    b.reset(409, env="support_queue", episode_id="shared")
    assert a.state("shared")["env"] == "servicebench"


def test_an_id_reused_after_expiry_is_a_new_episode_everywhere(nodes: Any) -> None:
    # a TTL well above what the three calls after the sleep take on a loaded machine: the new
    # episode must not expire between its reset and its step
    a, b = nodes(episode_ttl_seconds=3.0), second(nodes, episode_ttl_seconds=3.0)
    a.reset(task_id="billing_discrepancy", episode_id="again")
    b.step(LOOKUP, episode_id="again")  # b caches the first episode at step 1
    time.sleep(3.5)
    a.reset(env="support_queue", episode_id="again")  # expired: the id is free, now another env
    b.step(LOOKUP, 404, episode_id="again")  # b's cached episode is gone, not stepped
    result = b.step(TRIAGE, prefix="/support_queue", episode_id="again").json()
    assert result["observation"]["info"]["step"] == 1
    assert a.state("again")["step_count"] == 1


def test_episodes_outlive_the_processes_that_served_them(nodes: Any) -> None:
    first = second(nodes)
    episode = first.reset(task_id="billing_discrepancy")["episode_id"]
    first.step(LOOKUP, episode_id=episode)
    first.close()
    restarted = nodes()
    assert restarted.step(ORDERS, episode_id=episode).json()["observation"]["info"]["step"] == 2
    assert calls(restarted.state(episode)) == [(1, "/users/lookup"), (2, "/orders/by-user")]


def test_a_log_written_by_another_version_is_refused(
    nodes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, reader = nodes(), second(nodes)
    monkeypatch.setattr(log, "replay_version", lambda: "0.9.0+0123456789abcdef")
    episode = writer.reset(task_id="billing_discrepancy")["episode_id"]
    monkeypatch.undo()
    detail = reader.step(LOOKUP, 409, episode_id=episode).json()["detail"]
    assert "0.9.0+0123456789abcdef" in detail and log.replay_version() in detail
    assert "cannot be replayed" in detail
    reader.state(episode, 409)


# ---------------------------------------------------------------- WebSocket


def ws_message(socket: Any, kind: str, data: Any = None, **extra: Any) -> dict[str, Any]:
    socket.send_text(json.dumps({"type": kind, "data": data or {}, **extra}))
    return json.loads(socket.receive_text())


def test_a_websocket_episode_resumes_by_id_after_a_disconnect(nodes: Any) -> None:
    a = nodes()
    resumer = a if nodes.url == "memory" else second(nodes)  # memory: the same process only
    with a.client.websocket_connect("/servicebench/ws") as socket:
        reset = ws_message(socket, "reset", {"task_id": "billing_discrepancy"})
        episode = reset["data"]["observation"]["info"]["episode_id"]
        stepped = ws_message(socket, "step", LOOKUP, step_index=1)
        socket.close(code=1001)  # going away, not a normal close: the episode is kept
    with resumer.client.websocket_connect("/servicebench/ws") as socket:
        resumed = ws_message(socket, "resume", {"episode_id": episode})
        assert resumed["type"] == "observation" and resumed["data"] == stepped["data"]
        assert ws_message(socket, "step", LOOKUP, step_index=1)["data"] == stepped["data"]
        second_step = ws_message(socket, "step", ORDERS, step_index=2)
        assert second_step["data"]["observation"]["info"]["step"] == 2
        assert ws_message(socket, "state")["data"]["step_count"] == 2
        refused = ws_message(socket, "resume", {"episode_id": "nope"})
        assert refused["type"] == "error" and refused["data"]["status"] == 404
        assert ws_message(socket, "state")["data"]["step_count"] == 2
        assert a.state(episode)["step_count"] == 2  # an HTTP client sees it too
        socket.close(code=1001)
    assert a.state(episode)["step_count"] == 2


def test_a_websocket_episode_is_dropped_when_its_connection_ends_it(nodes: Any) -> None:
    node = nodes()
    with node.client.websocket_connect("/ws") as socket:
        first = ws_message(socket, "reset", {"task_id": "billing_discrepancy"})
        second_reset = ws_message(socket, "reset", {"env": "support_queue"})
        ids = [r["data"]["observation"]["info"]["episode_id"] for r in (first, second_reset)]
        node.state(ids[0], 404)  # a new reset ends the connection's previous episode
        node.state(ids[1])
        socket.send_text(json.dumps({"type": "close"}))
    node.state(ids[1], 404)
    with node.client.websocket_connect("/ws") as socket:
        kept = ws_message(socket, "reset", {"task_id": "billing_discrepancy"})
        socket.close(code=1000)  # a normal close ends it too
    node.state(kept["data"]["observation"]["info"]["episode_id"], 404)
    with node.client.websocket_connect("/ws") as socket:
        failed = ws_message(socket, "reset", {"task_id": "nope"})
        assert failed["type"] == "error"
        assert "resume" in ws_message(socket, "step", LOOKUP)["data"]["message"]


def test_websocket_resets_are_not_the_latest_episode(nodes: Any) -> None:
    node = nodes()
    http = node.reset(task_id="billing_discrepancy")["episode_id"]
    with node.client.websocket_connect("/ws") as socket:
        ws_message(socket, "reset", {"task_id": "billing_discrepancy"})
        assert node.state()["episode_id"] == http


def test_concurrent_steps_in_one_process_take_turns_and_all_apply(nodes: Any) -> None:
    """Steps sent at once on one episode, without step_index, to one process: each applies
    once, one after the other (across processes the loser retries, then gets a 409)."""
    node = nodes()
    episode = node.reset(task_id="billing_discrepancy")["episode_id"]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: node.step(LOOKUP, episode_id=episode), range(8)))
    steps = sorted(answer.json()["observation"]["info"]["step"] for answer in answers)
    assert steps == list(range(1, 9))
    assert calls(node.state(episode)) == [(i, "/users/lookup") for i in range(1, 9)]
