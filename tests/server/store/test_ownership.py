"""Who may act on an episode, on every store: anyone with its id plays it, only its owner
restarts, switches or ends it (server/lifecycle/owners.py), whichever door the attempt comes in by.

Each attack names a victim's id at a door that restarts or ends an episode (MCP's
`prompts/get`, DELETE and `openenv/session/close`, a WebSocket attached by `?session_id=`,
a WebSocket's `resume` then `reset`, `close` or a normal close), and the victim's `/state`
must come out byte-identical. On SQLite and Redis the attacker is another process (its
own cache and connection): ownership lives in the store, not in a process.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp_support import Session, initialize_params, rpc
from robustness_support import LOOKUP
from ws_support import close, normal_close, wait_released, ws_send

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings

OpenApp = Callable[[], TestClient]


@pytest.fixture
def apps(backend_url: str) -> Iterator[OpenApp]:
    """The victim's app first; the attacker's is another process where the store allows."""
    opened: list[TestClient] = []

    def open_app() -> TestClient:
        if opened and backend_url == "memory":
            return opened[0]  # the memory store is one process's
        opened.append(TestClient(create_app(Settings(episode_store=backend_url))).__enter__())
        return opened[-1]

    yield open_app
    for client in opened:
        client.__exit__(None, None, None)


def state(client: TestClient, episode_id: str) -> bytes:
    response = client.get("/state", params={"episode_id": episode_id})
    assert response.status_code == 200, response.text
    return response.content


def mcp(client: TestClient, method: str, params: Any = None, session: str | None = None) -> Any:
    headers = {"Mcp-Session-Id": session} if session else {}
    return client.post("/mcp", json=rpc(method, params), headers=headers)


def restart_and_end_attempts(attacker: TestClient, victim: str) -> Iterator[str]:
    """Every door that restarts, switches or ends an episode, tried on `victim`'s id; yields
    a description of each attempt that was not refused."""
    for method, params in (
        ("prompts/get", {"name": "billing_discrepancy"}),
        ("prompts/get", {"name": "easy_inbox_cleanup", "arguments": {"seed": "3"}}),  # switch
        ("tools/call", {"name": "lookup_user", "arguments": LOOKUP["params"]}),
        ("tools/list", {}),
    ):
        by_header = mcp(attacker, method, params, session=victim)
        if by_header.status_code != 404 or by_header.json()["error"]["code"] != -32001:
            yield f"{method} with Mcp-Session-Id: {by_header.status_code} {by_header.text[:200]}"
        by_param = mcp(attacker, method, {**params, "session_id": victim}).json()
        if by_param.get("error", {}).get("code") != -32602 and method != "tools/list":
            yield f"{method} with params.session_id: {by_param}"
    deleted = attacker.delete("/mcp", headers={"Mcp-Session-Id": victim})
    if deleted.status_code != 404:
        yield f"DELETE /mcp: {deleted.status_code} {deleted.text[:200]}"
    closed = mcp(attacker, "openenv/session/close", {"session_id": victim}).json()
    if closed.get("error", {}).get("code") != -32602:
        yield f"openenv/session/close: {closed}"
    with attacker.websocket_connect(f"/ws?session_id={victim}") as socket:
        refused = json.loads(socket.receive_text())
        if refused["type"] != "error" or refused["data"]["code"] != "SESSION_ERROR":
            yield f"/ws?session_id=: {refused}"
    with attacker.websocket_connect("/ws") as socket:  # an `mcp` message names the session
        get = rpc("prompts/get", {"name": "billing_discrepancy", "session_id": victim})
        answer = ws_send(socket, "mcp", get)
        if answer["data"].get("error", {}).get("code") != -32602:
            yield f"WebSocket mcp prompts/get: {answer}"
    for ending in ("close", "reset", "normal close"):
        with attacker.websocket_connect("/ws") as socket:
            resumed = ws_send(socket, "resume", {"episode_id": victim})
            if resumed["type"] != "observation":
                yield f"resume to play it: {resumed}"  # anyone with the id may play it
            if ending == "close":
                close(socket)
            elif ending == "reset":  # answered once the connection ended what it ends
                ws_send(socket, "reset", {"task_id": "billing_discrepancy"})
            else:
                normal_close(attacker, socket)
    taken = attacker.post("/reset", json={"episode_id": victim, "env": "support_queue"})
    if taken.status_code != 409:
        yield f"HTTP /reset naming it: {taken.status_code}"


def test_an_http_episode_is_restarted_or_ended_by_no_other_door(apps: OpenApp) -> None:
    owner = apps()
    victim = owner.post("/reset", json={"task_id": "billing_discrepancy"}).json()["episode_id"]
    assert owner.post("/step", json={"action": LOOKUP, "episode_id": victim}).status_code == 200
    before = state(owner, victim)
    assert list(restart_and_end_attempts(apps(), victim)) == []
    assert state(owner, victim) == before


def test_a_websocket_episode_is_restarted_or_ended_by_no_other_door(apps: OpenApp) -> None:
    owner = apps()
    with owner.websocket_connect("/ws") as socket:
        reset = ws_send(socket, "reset", {"task_id": "billing_discrepancy"})
        victim = reset["data"]["observation"]["info"]["episode_id"]
        ws_send(socket, "step", LOOKUP)
        before = state(owner, victim)
        attempts = list(restart_and_end_attempts(apps(), victim))
        assert ws_send(socket, "state")["data"]["step_count"] == 1  # still this connection's
        socket.close(code=1001)  # not a normal close: the episode stays
    assert attempts == []
    assert state(owner, victim) == before


def test_an_mcp_session_is_ended_by_no_door_that_only_plays_it(apps: OpenApp) -> None:
    owner = apps()
    session = Session(owner, "", "?task_id=billing_discrepancy")
    session.call("lookup_user", **LOOKUP["params"])
    before = state(owner, session.id)
    attacker = apps()
    for ending in ("close", "normal close"):
        with attacker.websocket_connect("/ws") as socket:
            assert ws_send(socket, "resume", {"episode_id": session.id})["type"] == "observation"
            if ending == "close":
                close(socket)
            else:
                normal_close(attacker, socket)
    assert attacker.post("/reset", json={"episode_id": session.id}).status_code == 409
    assert state(owner, session.id) == before
    assert session.call("lookup_order", order_id="ORD-1007")["isError"] is False


def test_a_session_id_names_only_a_session_and_its_holder_restarts_and_ends_it(
    apps: OpenApp,
) -> None:
    owner = apps()
    session = Session(owner, "", "?task_id=billing_discrepancy")
    other = apps()
    switched = mcp(other, "prompts/get", {"name": "easy_inbox_cleanup"}, session=session.id)
    assert switched.status_code == 200, switched.text  # whoever presents the session id is it
    assert json.loads(state(owner, session.id))["env"] == "support_queue"
    assert other.delete("/mcp", headers={"Mcp-Session-Id": session.id}).status_code == 200
    assert owner.get("/state", params={"episode_id": session.id}).status_code == 404


def test_a_live_connections_episode_stays_its_own_and_is_handed_over_when_it_leaves(
    apps: OpenApp,
) -> None:
    first, second = apps(), apps()
    with first.websocket_connect("/ws") as owner:
        reset = ws_send(owner, "reset", {"task_id": "billing_discrepancy"})
        episode = reset["data"]["observation"]["info"]["episode_id"]
        with second.websocket_connect("/ws") as player:  # learned the id: may play it
            assert ws_send(player, "resume", {"episode_id": episode})["type"] == "observation"
            assert ws_send(player, "step", LOOKUP)["data"]["observation"]["info"]["step"] == 1
            close(player)  # ends nothing of the owner's
        assert ws_send(owner, "state")["data"]["step_count"] == 1
        owner.close(code=1001)  # gone without ending it: the next resume takes it over
    wait_released(first, episode)
    with second.websocket_connect("/ws") as heir:
        resumed = ws_send(heir, "resume", {"episode_id": episode})
        assert resumed["data"]["observation"]["info"]["step"] == 1
        with first.websocket_connect("/ws") as late:  # the heir's now, while it lives
            ws_send(late, "resume", {"episode_id": episode})
            normal_close(first, late)
        assert ws_send(heir, "state")["data"]["step_count"] == 1
        close(heir)  # the heir ends it as its own
    assert first.get("/state", params={"episode_id": episode}).status_code == 404


def test_a_connection_that_resumed_before_the_owner_left_ends_it_once_it_has(
    apps: OpenApp,
) -> None:
    """A reconnect can resume before the server notices the old connection is gone: once
    it is, the new connection holds the episode, and its close ends it."""
    first, second = apps(), apps()
    with second.websocket_connect("/ws") as reconnect:
        with first.websocket_connect("/ws") as owner:
            reset = ws_send(owner, "reset", {"task_id": "billing_discrepancy"})
            episode = reset["data"]["observation"]["info"]["episode_id"]
            assert ws_send(reconnect, "resume", {"episode_id": episode})["type"] == "observation"
            owner.close(code=1006)  # the old connection is found gone only now
        wait_released(first, episode)
        assert first.get("/state", params={"episode_id": episode}).status_code == 200
        close(reconnect)
    assert first.get("/state", params={"episode_id": episode}).status_code == 404


def test_mcp_initialize_over_a_websocket_starts_no_session_of_another(apps: OpenApp) -> None:
    """A WebSocket's own `mcp` messages speak for no session unless it attached to one."""
    owner = apps()
    victim = owner.post("/reset", json={"task_id": "billing_discrepancy"}).json()["episode_id"]
    before = state(owner, victim)
    with apps().websocket_connect("/ws") as socket:
        ws_send(socket, "mcp", rpc("initialize", initialize_params()))
        close = ws_send(socket, "mcp", rpc("openenv/session/close", {"session_id": victim}))
        assert close["data"]["error"]["code"] == -32602
    assert state(owner, victim) == before
