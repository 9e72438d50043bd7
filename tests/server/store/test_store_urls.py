"""EPISODE_STORE values that cannot work are refused when the server starts, with their
message, never at the first request (503 forever) nor as a worker restart loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from server_process import CHILD_TIMEOUT, REPO, free_port

from servicebench_support_queue.server.app import ENVIRONMENTS
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.store import open_store

STARTUP_FAILURE = 3  # uvicorn's status for "every worker would fail the same way"


def refused(url: str) -> str:
    with pytest.raises(ValueError) as raised:
        open_store(Settings(episode_store=url), ENVIRONMENTS)
    return str(raised.value)


@pytest.mark.parametrize(
    "url",
    [
        "mongodb://localhost/0",
        "MEMORY",
        "sqlite://relative/episodes.db",
        "sqlite:",
        "sqlite:////tmp/x.db?synchronous=sometimes",
    ],
)
def test_an_unusable_url_is_refused_by_name(url: str) -> None:
    assert "EPISODE_STORE" in refused(url)


def test_a_sqlite_file_in_a_missing_directory_or_a_directory_is_refused(tmp_path: Path) -> None:
    assert "directory" in refused(f"sqlite://{tmp_path / 'missing' / 'episodes.db'}")
    assert "directory" in refused(f"sqlite://{tmp_path}")
    open_store(Settings(episode_store=f"sqlite://{tmp_path / 'episodes.db'}"), ENVIRONMENTS)


@pytest.mark.parametrize("path", ["abc", "0x1", "1/2", "-1"])
def test_a_redis_database_that_is_not_a_number_is_refused(path: str) -> None:
    message = refused(f"redis://:secret@127.0.0.1:6379/{path}")
    assert "database number" in message and "secret" not in message


@pytest.mark.parametrize(
    "url", ["redis://127.0.0.1:6379", "redis://127.0.0.1:6379/", "redis://h/15"]
)
def test_a_redis_url_with_a_database_number_or_none_opens(url: str) -> None:
    open_store(Settings(episode_store=url), ENVIRONMENTS)  # connects lazily: no Redis needed


@pytest.mark.parametrize("workers", [1, 2])
def test_a_server_with_a_malformed_store_stops_with_its_message(
    tmp_path: Path, workers: int
) -> None:
    log_path = tmp_path / "server.log"
    command = [sys.executable, "-m", "uvicorn", "servicebench_support_queue.server.app:app"]
    command += ["--host", "127.0.0.1", "--port", str(free_port()), "--workers", str(workers)]
    with log_path.open("wb") as log:
        process = subprocess.run(
            command,
            cwd=REPO,
            env={**os.environ, "EPISODE_STORE": "mongodb://localhost/0"},
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=CHILD_TIMEOUT,
        )
    output = log_path.read_text()
    if workers == 1:  # uvicorn's supervisor stops, but exits 0 itself
        assert process.returncode == STARTUP_FAILURE, output
    assert "EPISODE_STORE must be" in output and "Traceback" not in output
    assert "died" not in output, output  # no worker was started again (it ended: no timeout)
