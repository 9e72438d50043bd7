"""server/lifecycle/warmup.py: an environment's one-time preparation runs in a thread; a request that
plays it waits for it without holding the event loop, and a failed warm-up is retried."""

from __future__ import annotations

import asyncio
import threading
from typing import ClassVar

import pytest

from servicebench_support_queue.server.lifecycle import warmup
from servicebench_support_queue.server.lifecycle.episodes import Episodes
from servicebench_support_queue.server.lifecycle.owners import HTTP_OWNER, Actor
from servicebench_support_queue.server.store.memory import MemoryStore
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment

CLIENT = Actor(HTTP_OWNER, "127.0.0.1")


class SlowQueue(SupportQueueEnvironment):
    """Support Queue whose warm-up holds until the test lets it go (or fails, if told to)."""

    release: ClassVar[threading.Event]
    failures: ClassVar[int]
    warmed: ClassVar[int]

    @classmethod
    def warm(cls) -> None:
        assert cls.release.wait(timeout=60), "the test never let the warm-up finish"
        if cls.failures:
            cls.failures -= 1
            raise RuntimeError("the rules could not be read")
        cls.warmed += 1


def slow_queue(failures: int = 0) -> type[SlowQueue]:
    """A fresh class each time: the registry warms a class once per process."""
    fields = {"release": threading.Event(), "failures": failures, "warmed": 0}
    return type("SlowQueue", (SlowQueue,), fields)


def episodes_of(env: type[SlowQueue]) -> Episodes:
    return Episodes((env,), MemoryStore(100, 60.0))


def test_a_reset_waits_for_the_warm_up_while_the_loop_serves_others() -> None:
    env = slow_queue()

    async def scenario() -> list[str]:
        events: list[str] = []
        episodes = episodes_of(env)
        reset = asyncio.create_task(episodes.reset({"task_id": "easy_inbox_cleanup"}, CLIENT))
        for _ in range(20):  # the loop keeps turning while the reset waits
            await asyncio.sleep(0.01)
        events.append("reset done" if reset.done() else "reset waiting")
        env.release.set()
        _, observation = await reset
        events.append(f"reset {observation.task_id}")
        return events

    assert asyncio.run(scenario()) == ["reset waiting", "reset easy_inbox_cleanup"]
    assert env.warmed == 1


def test_the_warm_up_runs_once_for_every_scope_and_request() -> None:
    env = slow_queue()
    env.release.set()

    async def scenario() -> float | None:
        first, second = episodes_of(env), episodes_of(env)
        await asyncio.gather(*(scope.reset({}, CLIENT) for scope in (first, second, first)))
        started, observation = await second.reset({}, CLIENT)
        queue = observation.allowed_queues[0]
        action = {"priority": "P3", "queue": queue, "disposition": "respond"}
        _, stepped = await second.step(started.episode_id, action)
        return stepped.reward

    assert asyncio.run(scenario()) is not None
    assert env.warmed == 1


def test_a_failed_warm_up_fails_its_waiters_and_is_tried_again() -> None:
    env = slow_queue(failures=1)
    env.release.set()

    async def reset() -> str:
        _, observation = await episodes_of(env).reset({}, CLIENT)
        return observation.task_id

    with pytest.raises(RuntimeError, match="could not be read"):
        asyncio.run(reset())
    assert asyncio.run(reset()) == "easy_inbox_cleanup"
    assert env.warmed == 1


def test_starting_twice_starts_one_thread() -> None:
    env = slow_queue()
    warmup.start([env])
    warmup.start([env, env])
    warming = [t for t in threading.enumerate() if t.name == "warm-support_queue" and t.is_alive()]
    assert len(warming) == 1
    env.release.set()
    asyncio.run(warmup.ready([env]))
    assert env.warmed == 1
