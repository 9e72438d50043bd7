"""Faults, with real processes: episodes on a durable store survive them all.

- `kill -9` one of two uvicorn workers while 300 HTTP episodes run;
- the whole server killed and started again mid-episode, on SQLite and on Redis
  (HTTP episodes, and a WebSocket episode that resumes by id);
- Redis killed and started again (AOF, `appendfsync always`) while episodes run;
- two steps sent at once to one episode through two server processes;
- the reference topology: HAProxy in front of two servers and one Redis, round robin
  per request, no sticky sessions.

Clients are `client.py`'s, as a trainer would use them: every step carries its
`step_index` and is retried on connection errors and 503s. Every episode must end
exactly as it did alone (tests/solo_episodes.py): the same rewards, the same history,
so no step was lost and none applied twice.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from haproxy_process import HAPROXY, SERVED_BY, HAProxyProcess, requires_haproxy
from redis_process import RedisProcess, requires_redis, running_redis
from robustness_support import LOOKUP
from server_process import ServerProcess
from solo_episodes import SoloEpisode, solo_episodes

from servicebench_support_queue.client import AsyncEnvHttpClient, ServiceBenchEnv
from servicebench_support_queue.models import ServiceBenchAction

TIMEOUT = 60.0
"""Seconds a request through the fleet may take: under the whole suite on two shared cores a
reply can wait several seconds for a core (httpx's default of 5 timed out); this only guards
against a hang."""

pytestmark = requires_redis
RETRIES = 20  # with client.py's backoff, ~35 s: longer than a server takes to start
ORDERS = {"service": "order", "endpoint": "/orders/by-user", "params": {"user_id": "USR-001"}}


def servers(count: int, store: str, args: tuple[str, ...] = ()) -> list[ServerProcess]:
    """`count` servers on `store`, started side by side."""
    started = [ServerProcess({"EPISODE_STORE": store}, args).start() for _ in range(count)]
    return [server.wait() for server in started]


@pytest.fixture(scope="module")
def redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisProcess]:
    with running_redis(tmp_path_factory.mktemp("fault-redis")) as server:
        yield server


def stopped_after(processes: list[Any]) -> Callable[[], None]:
    def stop_all() -> None:
        for process in processes:
            process.stop()

    return stop_all


Played = tuple[list[float], dict[str, Any]]


async def play(
    url: str, episode: SoloEpisode, stop_at: int | None = None, steps_done: Any = None
) -> tuple[AsyncEnvHttpClient, Played]:
    """Play `episode` with client.py's retrying client (up to step `stop_at`, if given)."""
    client = AsyncEnvHttpClient(url, retries=RETRIES)
    await client.reset(**{k: v for k, v in episode.reset.items() if v is not None})
    return client, await play_on(client, episode, stop_at, steps_done)


async def play_on(
    client: AsyncEnvHttpClient,
    episode: SoloEpisode,
    stop_at: int | None = None,
    steps_done: Any = None,
) -> Played:
    rewards = []
    for action in episode.actions[client.steps : stop_at]:
        rewards.append((await client.step(action)).reward)
        if steps_done is not None:
            steps_done()
    state = (await client.state()).model_dump(mode="json")
    return rewards, state


class FaultAt:
    """Counts acknowledged steps (a `play` callback) and sets off `fault` once, at the `at`-th."""

    def __init__(self, at: int, fault: Callable[[], Any]) -> None:
        self.at, self.fault, self.done = at, fault, 0

    def __call__(self) -> None:
        self.done += 1
        if self.done == self.at:
            self.fault()


async def play_all(
    urls: list[str], episodes: list[SoloEpisode], on_step: Callable[[], None]
) -> list[Played]:
    """Every episode at once, the n-th on `urls[n % len(urls)]`; the clients closed after."""
    games = await asyncio.gather(
        *(play(urls[n % len(urls)], e, None, on_step) for n, e in enumerate(episodes))
    )
    for client, _ in games:
        await client.aclose()
    return [result for _, result in games]


def check(episodes: list[SoloEpisode], played: list[Played], rewards_before: Any = None) -> None:
    """Each episode ended exactly as alone: rewards, history, milestones, score."""
    for number, (episode, (rewards, state)) in enumerate(zip(episodes, played, strict=True)):
        if rewards_before is not None:
            rewards = rewards_before[number] + rewards
        assert rewards == list(episode.rewards), episode.reset
        state.pop("episode_id")
        assert state == episode.state, episode.reset
        assert state["step_count"] == len(episode.actions)


# ------------------------------------------------------------ kill -9 a worker


def test_kill_9_of_one_of_two_workers_loses_and_repeats_no_step(redis: RedisProcess) -> None:
    redis.client().flushall()
    (server,) = servers(1, redis.url, ("--workers", "2"))
    try:
        workers = server.workers()
        assert len(workers) == 2, workers
        episodes = solo_episodes(300, seed=11)
        total = sum(len(e.actions) for e in episodes)
        steps = FaultAt(total // 3, lambda: os.kill(workers[0], signal.SIGKILL))
        check(episodes, asyncio.run(play_all([server.url], episodes, steps)))
        assert steps.done == total
        deadline = time.monotonic() + 30  # it did die, and uvicorn started another
        while (workers[0] in server.workers() or len(server.workers()) != 2) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.1)
        assert workers[0] not in server.workers() and len(server.workers()) == 2
    finally:
        server.stop()


# --------------------------------------------- stop and start the whole server


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_every_episode_continues_after_the_server_is_killed_and_started_again(
    backend: str, redis: RedisProcess, tmp_path: Path
) -> None:
    store = f"sqlite://{tmp_path / 'episodes.db'}" if backend == "sqlite" else redis.url
    redis.client().flushall()
    (server,) = servers(1, store)
    episodes = solo_episodes(40, seed=5)
    halfway = [len(e.actions) // 2 for e in episodes]
    ws = ServiceBenchEnv(server.url, reconnect_attempts=RETRIES).sync()
    try:
        ws.connect()
        ws.reset(task_id="billing_discrepancy")
        first = ws.step(ServiceBenchAction(**LOOKUP))

        async def run() -> tuple[list[Any], list[Played]]:
            games = await asyncio.gather(
                *(play(server.url, e, stop) for e, stop in zip(episodes, halfway, strict=True))
            )
            server.stop(kill=True)
            server.start()  # the same port: the clients retry until it answers
            results = await asyncio.gather(
                *(play_on(client, e) for (client, _), e in zip(games, episodes, strict=True))
            )
            for client, _ in games:
                await client.aclose()
            return games, results

        games, played = asyncio.run(run())
        check(episodes, played, [rewards for _, (rewards, _) in games])
        second = ws.step(ServiceBenchAction(**ORDERS))  # reconnects and resumes by itself
        assert second.observation.info["step"] == 2
        assert [c.endpoint for c in ws.state().call_history] == [
            "/users/lookup",
            "/orders/by-user",
        ]
        assert first.observation.info["episode_id"] == second.observation.info["episode_id"]
    finally:
        ws.close()
        server.stop()


# ------------------------------------------------- the reference topology


@pytest.fixture(scope="module")
def fleet(redis: RedisProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Two servers on one Redis, and HAProxy in front of them."""
    pair = servers(2, redis.url)
    balancer = None
    try:
        if HAPROXY is not None:
            balancer = HAProxyProcess(tmp_path_factory.mktemp("haproxy"), [s.url for s in pair])
            balancer.start(backends_up=len(pair))
        yield pair, balancer
    finally:
        if balancer is not None:
            balancer.stop()
        for server in pair:
            server.stop()


@requires_haproxy
def test_through_haproxy_each_step_goes_to_the_next_server(fleet: Any) -> None:
    _, balancer = fleet
    episodes = solo_episodes(20, seed=3)
    served_by: list[str] = []

    async def run() -> list[Played]:
        async with httpx.AsyncClient(base_url=balancer.url, timeout=TIMEOUT) as http:
            results = []
            for episode in episodes:  # one at a time: each request goes to the next server
                reset = await http.post(
                    "/reset", json={k: v for k, v in episode.reset.items() if v is not None}
                )
                episode_id = reset.json()["episode_id"]
                rewards = []
                for index, action in enumerate(episode.actions, start=1):
                    body = {"action": action, "episode_id": episode_id, "step_index": index}
                    answer = await http.post("/step", json=body)
                    assert answer.status_code == 200, answer.text
                    served_by.append(answer.headers[SERVED_BY])
                    rewards.append(answer.json()["reward"])
                state = await http.get("/state", params={"episode_id": episode_id})
                results.append((rewards, state.json()))
            return results

    check(episodes, asyncio.run(run()))
    switches = sum(a != b for a, b in zip(served_by, served_by[1:], strict=False))
    assert set(served_by) == {"s0", "s1"} and switches > len(served_by) * 0.8


def test_two_steps_at_once_through_two_processes_apply_one_after_the_other(fleet: Any) -> None:
    (a, b), _ = fleet
    barrier = threading.Barrier(2)
    answers: list[Any] = []

    def send(server: ServerProcess, body: dict[str, Any], into: list[Any]) -> None:
        barrier.wait()
        into.append(httpx.post(f"{server.url}/step", json=body, timeout=TIMEOUT))

    for indexed in (False, True):
        for _ in range(15):
            episode_id = httpx.post(
                f"{a.url}/reset", json={"task_id": "billing_discrepancy"}, timeout=TIMEOUT
            ).json()["episode_id"]
            # both have it cached
            httpx.get(f"{b.url}/state", params={"episode_id": episode_id}, timeout=TIMEOUT)
            extra = {"step_index": 1} if indexed else {}
            first, second = [], []
            threads = [
                threading.Thread(
                    target=send,
                    args=(a, {"action": LOOKUP, "episode_id": episode_id, **extra}, first),
                ),
                threading.Thread(
                    target=send,
                    args=(b, {"action": ORDERS, "episode_id": episode_id, **extra}, second),
                ),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            statuses = sorted(r.status_code for r in first + second)
            history = httpx.get(
                f"{a.url}/state", params={"episode_id": episode_id}, timeout=TIMEOUT
            ).json()["call_history"]
            accepted = [r for r in first + second if r.status_code == 200]
            steps = sorted(r.json()["observation"]["info"]["step"] for r in accepted)
            if indexed:  # one wins step 1; the other action is refused, not applied
                assert statuses == [200, 409], statuses
                assert len(history) == 1 and steps == [1]
            else:  # both apply, one after the other, each once
                assert statuses == [200, 200] and steps == [1, 2]
                assert sorted(c["endpoint"] for c in history) == [
                    "/orders/by-user",
                    "/users/lookup",
                ]
            answers.append(statuses)
    assert len(answers) == 30


# ------------------------------------------------------------ restart Redis


def test_nothing_acknowledged_is_lost_when_redis_is_killed_and_started_again(
    fleet: Any, redis: RedisProcess
) -> None:
    (a, b), _ = fleet
    episodes = solo_episodes(80, seed=9)
    total = sum(len(e.actions) for e in episodes)
    # the restart blocks this event loop: requests in flight meet a dead Redis
    steps = FaultAt(total // 2, lambda: redis.restart(kill=True))
    check(episodes, asyncio.run(play_all([a.url, b.url], episodes, steps)))
