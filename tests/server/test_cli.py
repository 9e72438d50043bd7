"""The installed console script `servicebench-support-queue-server`, run as a user runs it:
`--help` prints usage and serves nothing; a bad flag or variable is one line and exit 2 before
anything starts; the flags serve, and win over their environment variables."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from server_process import CHILD_TIMEOUT, free_port, stop, wait_healthy

SCRIPT = Path(sys.executable).parent / "servicebench-support-queue-server"
PROG = "servicebench-support-queue-server"
FLAGS = ("--host", "--port", "--workers", "--store")
STARTUP_S = 600  # generous: several servers boot at once under a loaded CI
SETTINGS = ("HOST", "PORT", "WEB_CONCURRENCY", "EPISODE_STORE", "MAX_BODY_BYTES")


def environment(**variables: str) -> dict[str, str]:
    """This environment without the server's own settings, plus `variables`."""
    environ = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    return {**environ, **variables}


def run(args: list[str], **variables: str) -> subprocess.CompletedProcess[str]:
    """The script to its end: it must end by itself, since each of these serves nothing."""
    return subprocess.run(
        [str(SCRIPT), *args],
        env=environment(**variables),
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
    )


def test_help_prints_usage_and_serves_nothing() -> None:
    port = free_port()
    done = run(["--help"], PORT=str(port))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {PROG}")
    for flag in FLAGS:
        assert flag in done.stdout
    for variable in ("$HOST", "$PORT", "$WEB_CONCURRENCY", "$EPISODE_STORE"):
        assert variable in done.stdout, "each flag names the variable it overrides"
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)


@pytest.mark.parametrize(
    ("args", "variables", "named"),
    [
        (["--port", "eighty"], {}, "--port"),
        (["--port", "65536"], {}, "--port"),
        (["--port"], {}, "--port"),
        (["--workers", "0"], {}, "--workers"),
        (["--workers", "2.5"], {}, "--workers"),
        (["--host", " "], {}, "--host"),
        (["--store", "mongodb://localhost/0"], {}, "--store"),
        (["--store", "sqlite://relative.db"], {}, "--store"),
        (["--store", "redis://:hunter2@127.0.0.1:6379/abc"], {}, "database number"),
        (["--listen", "8000"], {}, "--listen"),
        ([], {"PORT": "http"}, "PORT='http'"),
        ([], {"WEB_CONCURRENCY": "-1"}, "WEB_CONCURRENCY='-1'"),
        ([], {"EPISODE_STORE": "postgres://db/1"}, "EPISODE_STORE"),
        ([], {"MAX_BODY_BYTES": "lots"}, "MAX_BODY_BYTES"),
    ],
)
def test_a_bad_value_is_one_line_and_exit_2(
    args: list[str], variables: dict[str, str], named: str
) -> None:
    done = run(args, **variables)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{PROG}: error: "), done.stderr
    assert named in lines[0]
    assert "hunter2" not in done.stderr, "a store's password is never printed"


def serve(args: list[str], **variables: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(SCRIPT), *args],
        env=environment(**variables),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def live_workers(pid: int, expected: int, timeout: float = 60.0) -> int:
    """The supervisor's children once there are `expected` (or whatever there are at the end)."""
    deadline = time.monotonic() + timeout
    while True:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        workers = [c for c in children if b"resource_tracker" not in _cmdline(c)]
        if len(workers) >= expected or time.monotonic() > deadline:
            return len(workers)
        time.sleep(0.1)


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def stored_episodes(database: Path) -> set[str]:
    with sqlite3.connect(database) as connection:
        return {row[0] for row in connection.execute("SELECT id FROM episodes")}


def play_one_step(url: str) -> str:
    """One reset and one step; a fresh worker's first reset waits for its warm-up, which takes
    long on a loaded machine (a 30 s limit timed out in CI), hence the startup's patience."""
    started = httpx.post(f"{url}/reset", json={"task_id": "order_status_lookup"}, timeout=STARTUP_S)
    episode_id = started.json()["episode_id"]
    action = {"service": "user", "endpoint": "/users/lookup", "params": {"email": "x@y.z"}}
    step = httpx.post(
        f"{url}/step", json={"action": action, "episode_id": episode_id}, timeout=STARTUP_S
    )
    assert step.status_code == 200, step.text
    return episode_id


def test_the_flags_serve_and_win_over_their_variables(tmp_path: Path) -> None:
    port, elsewhere = free_port(), free_port()
    database = tmp_path / "episodes.db"
    process = serve(
        ["--host", "127.0.0.1", "--port", str(port), "--workers", "2"]
        + ["--store", f"sqlite://{database}"],
        HOST="localhost",
        PORT=str(elsewhere),
        WEB_CONCURRENCY="1",
        EPISODE_STORE="memory",
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, timeout=STARTUP_S)
        assert live_workers(process.pid, 2) == 2
        episode_id = play_one_step(url)
        assert episode_id in stored_episodes(database), "--store won over EPISODE_STORE"
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{elsewhere}/health", timeout=2)
    finally:
        stop(process)


def test_without_flags_the_variables_are_honoured(tmp_path: Path) -> None:
    port = free_port()
    database = tmp_path / "episodes.db"
    process = serve([], HOST="127.0.0.1", PORT=str(port), EPISODE_STORE=f"sqlite://{database}")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, timeout=STARTUP_S)
        assert live_workers(process.pid, 1, timeout=0) == 0, "one worker: no supervisor"
        assert play_one_step(url) in stored_episodes(database)
    finally:
        stop(process)
