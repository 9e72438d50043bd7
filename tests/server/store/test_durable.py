"""How a durable store's steps of one episode take turns within a process (beside the
conformance suite, which checks the outcome over HTTP on every store).

The backend here is SQLite with a gate on the appends of chosen episodes, so a test can
hold a step at the point where it waits for its write to be recorded.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from robustness_support import LOOKUP

from servicebench_support_queue.server.lifecycle.owners import HTTP_OWNER
from servicebench_support_queue.server.lifecycle.sessions import StepConflictError
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.store.backend import Reply
from servicebench_support_queue.server.store.durable import DurableStore
from servicebench_support_queue.server.store.sqlite import SqliteBackend

ACTION = ServiceBenchEnvironment.action_cls.model_validate(LOOKUP)


class GatedBackend(SqliteBackend):
    """Appends to the episodes in `held` wait for `gate`; `waiting` counts those that do."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"sqlite://{path}", 100, 3600.0)
        self.gate = asyncio.Event()
        self.held: set[str] = set()
        self.waiting = 0

    async def append(self, episode_id: str, *args: Any) -> Reply:
        if episode_id in self.held:
            self.waiting += 1
            await self.gate.wait()
        return await super().append(episode_id, *args)


async def opened(path: Path, *episode_ids: str) -> tuple[DurableStore, GatedBackend, list[Any]]:
    backend = GatedBackend(path)
    store = DurableStore(backend, [ServiceBenchEnvironment], 100, 3600.0)
    envs = []
    for episode_id in episode_ids:
        env = ServiceBenchEnvironment()
        env.reset(task_id="billing_discrepancy", episode_id=episode_id)
        await store.add(env, HTTP_OWNER, "127.0.0.1")
        envs.append(env)
    return store, backend, envs


async def settle() -> None:
    """Let every runnable task run until it waits (SQLite's thread answers in between)."""
    for _ in range(50):
        await asyncio.sleep(0.002)


def test_steps_of_one_episode_wait_for_the_one_being_recorded(tmp_path: Path) -> None:
    async def run() -> None:
        store, backend, (env,) = await opened(tmp_path / "e.db", "one")
        backend.held.add("one")
        steps = [asyncio.create_task(store.step(env, ACTION, None)) for _ in range(5)]
        await settle()
        assert backend.waiting == 1  # the others wait their turn before computing anything
        backend.gate.set()
        answers = await asyncio.gather(*steps)
        assert sorted(obs.info["step"] for _, obs in answers) == [1, 2, 3, 4, 5]
        assert backend.waiting == 5
        assert store._turns == {}  # no lock outlives the steps in flight
        await store.close()

    asyncio.run(run())


def test_a_step_of_another_episode_does_not_wait_for_that_turn(tmp_path: Path) -> None:
    async def run() -> None:
        store, backend, (held, free) = await opened(tmp_path / "e.db", "held", "free")
        backend.held.add("held")
        blocked = asyncio.create_task(store.step(held, ACTION, None))
        await settle()
        _, observation = await asyncio.wait_for(store.step(free, ACTION, None), 10)
        assert observation.info["step"] == 1 and not blocked.done()
        backend.gate.set()
        await blocked
        assert store._turns == {}
        await store.close()

    asyncio.run(run())


def test_a_refused_or_cancelled_step_gives_up_its_turn(tmp_path: Path) -> None:
    async def run() -> None:
        store, backend, (env,) = await opened(tmp_path / "e.db", "one")
        with pytest.raises(StepConflictError):
            await store.step(env, ACTION, 7)  # ahead of the episode: refused
        assert store._turns == {}
        backend.held.add("one")
        first = asyncio.create_task(store.step(env, ACTION, None))
        waiting = asyncio.create_task(store.step(env, ACTION, None))
        last = asyncio.create_task(store.step(env, ACTION, None))
        await settle()
        waiting.cancel()  # a client that went away while its step waited its turn
        await settle()
        backend.gate.set()
        answers = await asyncio.gather(first, last)
        assert [obs.info["step"] for _, obs in answers] == [1, 2]
        assert waiting.cancelled() and store._turns == {}
        await store.close()

    asyncio.run(run())
