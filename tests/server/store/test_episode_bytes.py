"""Memory in bytes (issue 21): an episode filled by an abusive client (every step at its
environment's byte limit, each a write its world keeps) holds no more than its documented
bound, on every store: the process's retained heap, measured with tracemalloc (the memory
store's episodes, or a durable store's cache of them), and what SQLite's pages or Redis's
memory hold of its log."""

from __future__ import annotations

import asyncio
import sys
import tracemalloc
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # bench/ is not installed
from bench import episode_memory  # noqa: E402
from servicebench_support_queue.server.app import ENVIRONMENTS
from servicebench_support_queue.server.lifecycle.episode import EpisodeEnvironment

EPISODES = 30


@pytest.fixture(scope="module", autouse=True)
def traced():
    tracemalloc.start()
    yield
    tracemalloc.stop()


def backend_bound(env_cls: type[EpisodeEnvironment]) -> int:
    """What a backend may hold of one episode's log: the log, with the storage's overhead
    (SQLite stores an entry over a page's share across overflow pages)."""
    return 3 * env_cls.byte_budget() + 8 * 1024


@pytest.mark.parametrize("env_cls", ENVIRONMENTS, ids=lambda env: env.env_name)
def test_an_abusive_episode_holds_no_more_than_its_bound(
    backend_url: str, env_cls: type[EpisodeEnvironment]
) -> None:
    measured = asyncio.run(episode_memory.measure(backend_url, env_cls, EPISODES))
    assert 0.5 * env_cls.byte_budget() < measured["process_bytes"], "the abuse filled it"
    assert measured["process_bytes"] <= env_cls.memory_bound(), measured
    if backend_url != "memory":
        assert measured["backend_bytes"] <= backend_bound(env_cls), measured


def test_an_episode_of_keyed_writes_only_holds_no_more_than_its_bound(backend_url: str) -> None:
    """Every step a refund the order keeps, under a new idempotency key its table keeps."""
    sb = ENVIRONMENTS[0]
    measured = asyncio.run(episode_memory.measure(backend_url, sb, EPISODES, writes_only=True))
    assert sb.byte_budget() < measured["process_bytes"] <= sb.memory_bound(), measured
    if backend_url != "memory":
        assert measured["backend_bytes"] <= backend_bound(sb), measured


def test_the_abusive_client_plays_actions_at_the_limit() -> None:
    for env_cls in ENVIRONMENTS:
        env = env_cls()
        env.reset(task_id=max(env_cls.tasks, key=lambda card: card.max_steps).id)
        for number, action in enumerate(episode_memory.abusive_steps(env_cls, salt=1)):
            observation = env.step(env_cls.action_cls.model_validate(action))
            if env_cls.env_name == "servicebench" and number % 2 == 0:
                assert observation.success, "a refund the world keeps"
        limit = env_cls.max_action_bytes
        assert all(limit - 100 < len(entry) <= limit for entry in env.entries)
        assert env.done


def test_memory_bounds_fit_the_readme_at_the_default_cap() -> None:
    """The figure of docs/sessions-and-limits.md: the default cap times the worst episode, in GB."""
    from servicebench_support_queue.server.settings import Settings

    worst = max(env_cls.memory_bound() for env_cls in ENVIRONMENTS)
    assert worst * Settings().max_live_episodes <= 1.7 * 1000**3
