"""Fair share at the live-episode cap, on every store: at the cap, the client holding the
most episodes makes room (its finished episodes first, then its longest idle), so one
client's resets cannot evict everyone else's episodes.

A client is the address a request comes from (server/lifecycle/owners.py), here set per TestClient;
the episodes of every transport count, and an episode handed over to another client (a
WebSocket resume) counts for that client from then on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from mcp_support import Session
from robustness_support import TRIAGE
from uvicorn_process import started_server
from ws_support import wait_released

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings

ALICE, BOB, MALLORY = "192.0.2.1", "192.0.2.2", "2001:db8:5:6::1"


class Client:
    """One client (one address) of the app."""

    def __init__(self, app: FastAPI, address: str) -> None:
        self.http = TestClient(app, client=(address, 40000)).__enter__()

    def reset(self, task_id: str = "billing_discrepancy") -> str:
        response = self.http.post("/reset", json={"task_id": task_id})
        assert response.status_code == 200, response.text
        return response.json()["episode_id"]

    def held(self, episode_id: str) -> bool:
        status = self.http.get("/state", params={"episode_id": episode_id}).status_code
        assert status in (200, 404)
        return status == 200


@pytest.fixture
def clients(backend_url: str) -> Iterator[Callable[..., Callable[[str], Client]]]:
    opened: list[Client] = []

    def on_app(cap: int) -> Callable[[str], Client]:
        app = create_app(Settings(episode_store=backend_url, max_live_episodes=cap))

        def client(address: str) -> Client:
            opened.append(Client(app, address))
            return opened[-1]

        return client

    yield on_app
    for client in opened:
        client.http.__exit__(None, None, None)


def test_one_clients_resets_never_evict_another_clients_episodes(clients: Any) -> None:
    client = clients(cap=4)
    alice, mallory = client(ALICE), client(MALLORY)
    kept = alice.reset()
    flood = [mallory.reset() for _ in range(12)]
    session = Session(mallory.http, "", "?task_id=billing_discrepancy")  # MCP counts too
    assert alice.held(kept)
    assert [mallory.held(e) for e in flood] == [False] * 10 + [True] * 2
    assert mallory.held(session.id)


def test_an_ipv6_client_is_its_slash_64(clients: Any) -> None:
    """A host usually holds a whole /64: its addresses are one client, not 2^64."""
    client = clients(cap=7)
    alice, mallory, neighbour = client(ALICE), client(MALLORY), client("2001:db8:5:6:ffff::2")
    mine = [alice.reset() for _ in range(3)]
    theirs = [mallory.reset(), mallory.reset(), neighbour.reset(), neighbour.reset()]
    neighbour.reset()  # the /64 holds 4, alice 3: the /64's longest idle goes, not alice's
    assert all(alice.held(e) for e in mine)
    assert [mallory.held(e) for e in theirs] == [False, True, True, True]


def test_the_client_holding_the_most_makes_room_finished_first(clients: Any) -> None:
    client = clients(cap=5)
    alice, bob = client(ALICE), client(BOB)
    a1, a2 = alice.reset(), alice.reset()
    b1, b2 = bob.reset(), bob.reset()
    b3 = bob.reset("easy_inbox_cleanup")
    total = bob.http.get("/state", params={"episode_id": b3}).json()["total_tickets"]
    for _ in range(total):
        bob.http.post("/step", json={"action": TRIAGE, "episode_id": b3}).raise_for_status()
    alice.held(a1)  # a1 is no longer the longest idle overall, a2 is
    a3 = alice.reset()  # at the cap: bob holds the most (3), and his finished episode goes
    assert [bob.held(e) for e in (b1, b2, b3)] == [True, True, False]
    a4 = alice.reset()  # now alice holds the most (3): her longest idle goes
    assert [alice.held(e) for e in (a1, a2, a3, a4)] == [True, False, True, True]
    assert bob.held(b1) and bob.held(b2)


def test_a_websocket_episode_counts_for_the_client_it_was_handed_over_to(clients: Any) -> None:
    client = clients(cap=3)
    alice, bob, carol = client(ALICE), client(BOB), client("192.0.2.3")
    with alice.http.websocket_connect("/ws") as socket:
        socket.send_text(json.dumps({"type": "reset", "data": {"task_id": "billing_discrepancy"}}))
        handed = json.loads(socket.receive_text())["data"]["observation"]["info"]["episode_id"]
        socket.close(code=1001)  # gone without ending it: the next resume takes it over
    wait_released(alice.http, handed)
    with bob.http.websocket_connect("/ws") as socket:
        socket.send_text(json.dumps({"type": "resume", "data": {"episode_id": handed}}))
        assert json.loads(socket.receive_text())["type"] == "observation"
        socket.close(code=1001)
    wait_released(bob.http, handed)  # else bob's connection may still be touching it below
    b1, b2 = bob.reset(), bob.reset()  # bob: the handed-over episode, b1, b2
    carol.reset()  # at the cap: bob holds the most, and his longest idle is the handed one
    assert not bob.held(handed)
    assert bob.held(b1) and bob.held(b2)


def test_behind_a_trusted_proxy_a_client_is_the_address_it_forwards(tmp_path: Path) -> None:
    """uvicorn takes the client from X-Forwarded-For when the peer is trusted
    (FORWARDED_ALLOW_IPS; compose.yaml trusts its HAProxy): each client counts as itself."""
    env = {"FORWARDED_ALLOW_IPS": "127.0.0.1", "MAX_LIVE_EPISODES": "3"}
    # a generous timeout: under the whole suite a reply can wait seconds for a core (5 s flaked)
    with started_server(env, tmp_path / "server.log") as (_, url), httpx.Client(timeout=60) as http:

        def reset(client: str) -> str:
            forwarded = {"X-Forwarded-For": client}
            response = http.post(f"{url}/reset", json={}, headers=forwarded)
            return response.raise_for_status().json()["episode_id"]

        kept = reset(ALICE)
        flood = [reset(MALLORY) for _ in range(6)]
        assert http.get(f"{url}/state", params={"episode_id": kept}).status_code == 200
        assert http.get(f"{url}/state", params={"episode_id": flood[0]}).status_code == 404
