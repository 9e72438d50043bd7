"""A real redis-server for tests: on a free loopback port, AOF with `appendfsync always`.

The tests that need Redis skip with a clear reason when `redis-server` is not installed
(.ci/run installs it, so CI always runs them).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from server_process import free_port

REDIS_SERVER = shutil.which("redis-server")
requires_redis = pytest.mark.skipif(
    REDIS_SERVER is None,
    reason="redis-server is not installed (apt-get install redis-server; .ci/run does)",
)


class RedisProcess:
    """One redis-server with its data in `directory`; `restart` keeps the port and the data."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        assert REDIS_SERVER is not None
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
                "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                "--logfile", str(self.directory / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        while True:
            try:
                if redis.Redis(port=self.port, socket_timeout=1).ping():
                    return
            except redis.RedisError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start: {self.log()}") from None
                time.sleep(0.02)

    def stop(self, kill: bool = False) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        if kill:
            self.process.kill()
        else:
            self.process.terminate()
        self.process.wait(timeout=20)

    def restart(self, kill: bool = False) -> None:
        self.stop(kill)
        self.start()

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=5)

    def log(self) -> str:
        path = self.directory / "redis.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""


@contextlib.contextmanager
def running_redis(directory: Path) -> Iterator[RedisProcess]:
    """A Redis of its own in `directory`, for the `with` block (a test that stops, pauses or
    kills it, or a session's shared one)."""
    server = RedisProcess(directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()
