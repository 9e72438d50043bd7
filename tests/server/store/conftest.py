"""Fixtures of the store tests: one Redis for the session, a store URL per backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redis_process import REDIS_SERVER, RedisProcess, running_redis

BACKENDS = ("memory", "sqlite", "redis")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisProcess]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does)")
    with running_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server


def store_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty store of `backend`."""
    if backend == "memory":
        return "memory"
    if backend == "sqlite":
        return f"sqlite://{tmp_path / 'episodes.db'}"
    server: RedisProcess = request.getfixturevalue("redis_server")
    server.client().flushall()
    return server.url


@pytest.fixture(params=BACKENDS)
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return store_url(request.param, request, tmp_path)


@pytest.fixture(params=BACKENDS[1:])
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return store_url(request.param, request, tmp_path)
