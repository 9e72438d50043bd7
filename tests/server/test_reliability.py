"""Reliability under load and bad input, against real servers on loopback (issue 7).

Concurrent episodes stay isolated, the live-episode cap and the idle TTL behave as
documented, oversized bodies get 413, stalled clients block nobody, WebSocket
sessions are capped, and SIGTERM lets in-flight requests finish.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from server_process import running_server
from solo_episodes import SoloEpisode, solo_episodes
from uvicorn_process import started_server
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

LIMITS = {
    "MAX_LIVE_EPISODES": "3",
    "EPISODE_TTL_SECONDS": "3",
    "MAX_BODY_BYTES": "2048",
    "MAX_WS_SESSIONS": "2",
}
TTL_SECONDS = float(LIMITS["EPISODE_TTL_SECONDS"])
CONNECTIONS = 8


@pytest.fixture(scope="module")
def limited_server() -> Iterator[str]:
    """A server with tiny limits: 3 live episodes, 3 s TTL, 2 KiB bodies, 2 WebSocket sessions."""
    with running_server(env=LIMITS) as url:
        yield url


# --------------------------------------------------------------- concurrent episodes


async def play_interleaved(
    url: str, episodes: list[SoloEpisode]
) -> list[tuple[str, list[float], dict]]:
    """Reset every episode, wait until all are live, then step them all at once."""
    all_live = asyncio.Barrier(len(episodes))
    in_flight = asyncio.Semaphore(CONNECTIONS)  # httpx's pool is slow with many waiters
    limits = httpx.Limits(max_connections=CONNECTIONS, max_keepalive_connections=CONNECTIONS)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def call(method: str, path: str, **kwargs: Any) -> Any:
            async with in_flight:
                response = await client.request(method, path, **kwargs)
            assert response.status_code == 200, response.text
            return response.json()

        async def play(episode: SoloEpisode) -> tuple[str, list[float], dict]:
            body = {key: value for key, value in episode.reset.items() if value is not None}
            episode_id = (await call("POST", "/reset", json=body))["episode_id"]
            await all_live.wait()
            rewards = []
            for action in episode.actions:
                result = await call(
                    "POST", "/step", json={"action": action, "episode_id": episode_id}
                )
                rewards.append(result["reward"])
            return (
                episode_id,
                rewards,
                await call("GET", "/state", params={"episode_id": episode_id}),
            )

        return await asyncio.gather(*(play(episode) for episode in episodes))


def test_1000_interleaved_episodes_each_score_exactly_as_alone(live_server: str) -> None:
    episodes = solo_episodes(1000)
    assert len({episode.score for episode in episodes}) > 10, (
        "the mix must not be one repeated episode"
    )
    results = asyncio.run(play_interleaved(live_server, episodes))
    assert len({episode_id for episode_id, _, _ in results}) == len(episodes)
    for episode, (episode_id, rewards, state) in zip(episodes, results, strict=True):
        assert rewards == list(episode.rewards), episode.reset
        assert state.pop("episode_id") == episode_id
        assert state == episode.state, episode.reset  # the whole history, milestones and score
        assert state["done"] is True and state["step_count"] == len(episode.actions)


# --------------------------------------------------------------- cap, TTL, body limit


def reset(client: httpx.Client, body: dict | None = None) -> str:
    response = client.post("/reset", json=body or {"task_id": "order_status_lookup"})
    assert response.status_code == 200, response.text
    return response.json()["episode_id"]


def state_status(client: httpx.Client, episode_id: str) -> int:
    return client.get("/state", params={"episode_id": episode_id}).status_code


def test_at_the_cap_finished_episodes_go_first_then_the_longest_idle(limited_server: str) -> None:
    with httpx.Client(base_url=limited_server, timeout=10) as client:
        idle, finished, older = reset(client), reset(client), reset(client)
        for action in (
            {
                "service": "user",
                "endpoint": "/users/lookup",
                "params": {"email": "jane.doe@example.com"},
            },
            {"service": "order", "endpoint": "/orders/lookup", "params": {"order_id": "ORD-1005"}},
        ):
            result = client.post("/step", json={"action": action, "episode_id": finished}).json()
        assert result["done"] is True
        assert state_status(client, idle) == 200  # used: `older` is now the longest idle
        fourth = reset(client)
        missing = client.get("/state", params={"episode_id": finished})
        assert missing.status_code == 404 and "dropped to make room" in missing.json()["detail"]
        fifth = reset(client)
        assert state_status(client, older) == 404
        assert [state_status(client, e) for e in (idle, fourth, fifth)] == [200, 200, 200]


def test_an_idle_episode_expires_after_the_ttl(limited_server: str) -> None:
    with httpx.Client(base_url=limited_server, timeout=10) as client:
        kept, expiring = reset(client), reset(client)
        time.sleep(TTL_SECONDS / 2)
        assert state_status(client, kept) == 200  # use resets the idle clock
        time.sleep(TTL_SECONDS / 2 + 0.6)
        response = client.post(
            "/step",
            json={"action": {"service": "user", "endpoint": "/users/list"}, "episode_id": expiring},
        )
        assert response.status_code == 404 and "expired" in response.json()["detail"]
        assert state_status(client, kept) == 200


def test_a_body_over_the_limit_answers_413(limited_server: str) -> None:
    limit = int(LIMITS["MAX_BODY_BYTES"])
    padding = {"service": "user", "endpoint": "/users/lookup", "params": {"email": "x" * limit}}
    chunks = [b'{"action": ', json.dumps(padding).encode(), b"}"]
    with httpx.Client(base_url=limited_server, timeout=10) as client:
        for path in ("/step", "/servicebench/step", "/reset", "/mcp"):
            declared = client.post(path, json={"action": padding})
            streamed = client.post(path, content=iter(chunks))  # chunked: no Content-Length
            for response in (declared, streamed):
                assert response.status_code == 413, (path, response.text)
                answer = response.json()  # MCP's is a JSON-RPC error object
                detail = answer["error"]["message"] if path == "/mcp" else answer["detail"]
                assert "MAX_BODY_BYTES" in detail
        assert (
            client.post("/reset", json={"task_id": "x" * (limit // 2)}).status_code == 404
        )  # read, refused
    with ws_connect(limited_server.replace("http", "ws") + "/servicebench/ws") as socket:
        socket.send(json.dumps({"type": "reset", "data": {"task_id": "x" * limit}}))
        assert json.loads(socket.recv())["type"] == "error"
        socket.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(socket.recv())["type"] == "observation"


def test_websocket_sessions_past_the_cap_are_refused_with_retry_later(limited_server: str) -> None:
    base = limited_server.replace("http", "ws")
    url = base + "/servicebench/ws"
    with (
        ws_connect(url) as first,
        ws_connect(base + "/ws") as second,
    ):  # one budget for all prefixes
        for session in (first, second):
            session.send(json.dumps({"type": "reset", "data": {}}))
            assert json.loads(session.recv())["type"] == "observation"
        with ws_connect(base + "/support_queue/ws") as third:
            refusal = json.loads(third.recv())
            assert refusal["type"] == "error" and refusal["data"]["code"] == "CAPACITY_REACHED"
            with pytest.raises(ConnectionClosed) as closed:
                third.recv()
            assert (
                closed.value.rcvd is not None and closed.value.rcvd.code == 1013
            )  # try again later
        first.close()
        time.sleep(0.2)
        with ws_connect(url) as replacement:  # the freed slot is reused
            replacement.send(json.dumps({"type": "reset", "data": {}}))
            assert json.loads(replacement.recv())["type"] == "observation"


# --------------------------------------------------------------- stalled clients, shutdown


def stalled_socket(url: str, payload: bytes) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(payload)
    return sock


def test_stalled_and_non_reading_clients_do_not_block_others(live_server: str) -> None:
    half_body = stalled_socket(
        live_server,
        b"POST /step HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
        b'\r\nContent-Length: 500\r\n\r\n{"action": {"serv',
    )
    half_headers = stalled_socket(live_server, b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Le")
    try:
        ws_url = live_server.replace("http", "ws") + "/servicebench/ws"
        with (
            ws_connect(ws_url, close_timeout=0.5) as flooding,
            httpx.Client(base_url=live_server, timeout=5) as client,
        ):
            for _ in range(3000):  # ~12 MB of replies that it never reads
                flooding.send('{"type": "reset", "data": {}}')
            started = time.monotonic()
            for _ in range(20):
                episode_id = reset(client)
                assert state_status(client, episode_id) == 200
            assert time.monotonic() - started < 10
    finally:
        for sock in (half_body, half_headers):
            sock.close()


def test_sigterm_lets_an_in_flight_request_finish(tmp_path: Any) -> None:
    body = json.dumps({"task_id": "billing_discrepancy"}).encode()
    with started_server({}, tmp_path / "server.log") as (process, url):
        in_flight = stalled_socket(
            url,
            b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body[:10],
        )
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert process.poll() is None, "the server must wait for the request in flight"
        in_flight.sendall(body[10:])
        response = b""
        while b"\r\n\r\n" not in response or not response.rstrip().endswith(b"}"):
            chunk = in_flight.recv(65536)
            if not chunk:
                break
            response += chunk
        in_flight.close()
        assert response.startswith(b"HTTP/1.1 200"), response[:200]
        assert (
            json.loads(response.split(b"\r\n\r\n", 1)[1])["observation"]["task_id"]
            == "billing_discrepancy"
        )
        # uvicorn re-raises the signal once shut down, so that a supervisor sees why it stopped
        assert process.wait(timeout=15) in (0, -signal.SIGTERM)
    log = (tmp_path / "server.log").read_text()
    order = [
        log.index(line)
        for line in (
            "Shutting down",
            '"POST /reset HTTP/1.1" 200',
            "Application shutdown complete",
            "Finished server process",
        )
    ]
    assert order == sorted(order), log


def test_the_fast_episode_routes_answer_exactly_as_the_fastapi_routes() -> None:
    """POST /reset and /step are served by EpisodeRoutes; FastAPI's routes must say the same."""
    from fastapi.testclient import TestClient

    from servicebench_support_queue.server.app import create_app
    from servicebench_support_queue.server.settings import Settings
    from servicebench_support_queue.server.transport.fast_path import EpisodeRoutes

    without = create_app(Settings())
    without.user_middleware = [m for m in without.user_middleware if m.cls is not EpisodeRoutes]
    assert len(without.user_middleware) == len(create_app(Settings()).user_middleware) - 1
    fast, routed = TestClient(create_app(Settings())), TestClient(without)
    step = {
        "action": {
            "service": "user",
            "endpoint": "/users/lookup",
            "params": {"user_id": "USR-003"},
        },
        "episode_id": "parity",
    }
    answers = []
    for client in (fast, routed):
        reset = client.post(
            "/reset", json={"task_id": "billing_discrepancy", "episode_id": "parity"}
        )
        stepped = client.post("/step", json=step)
        by_header = client.post(
            "/step?episode_id=other", json=step["action"], headers={"X-Episode-Id": "parity"}
        )
        errors = (
            client.post("/reset", json={"task_id": "nope"}),
            client.post("/step", content=b"{bad", headers={"Content-Type": "application/json"}),
            client.post("/step", json={"action": {"service": 1}, "episode_id": "parity"}),
        )
        answers.append(
            [
                (r.status_code, r.headers["content-type"], r.content)
                for r in (reset, stepped, by_header, *errors)
            ]
        )
    assert answers[0] == answers[1]
    assert [status for status, _, _ in answers[0]] == [200, 200, 200, 404, 400, 422]
