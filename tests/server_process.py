"""Start the real app under uvicorn on a free loopback port, for tests that need a live server."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent

CHILD_TIMEOUT = 600.0
"""How long a test waits for a child Python process (a CLI, a server's run, a venv's install)
before calling it hung. Generous on purpose: the child imports OpenEnv (gradio, pandas), about
12 s of CPU where no bytecode is cached, and several times that on a loaded machine; a timeout
here only turns a real hang into a failure, it measures nothing."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/health", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    raise TimeoutError(f"server at {url} not healthy after {timeout}s")


class ServerProcess:
    """One uvicorn serving `app` on a loopback port that stays the same across restarts."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
        app: str = "servicebench_support_queue.server.app:app",
    ) -> None:
        self.env = {**os.environ, **(env or {})}
        self.args = [*args]
        self.app = app
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> ServerProcess:
        """Start it; `wait` until it answers (start several first, then wait: they boot in parallel)."""
        command = [sys.executable, "-m", "uvicorn", self.app, "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--log-level", "warning", *self.args]
        self.process = subprocess.Popen(command, cwd=REPO, env=self.env)
        return self

    def wait(self) -> ServerProcess:
        assert self.process is not None
        wait_healthy(self.url, self.process)
        return self

    def stop(self, kill: bool = False) -> None:
        if self.process is not None:
            if kill:
                self.process.kill()
                self.process.wait()
            stop(self.process)

    def workers(self) -> list[int]:
        """The pids of uvicorn's live worker processes (with --workers N): a killed worker the
        supervisor has not reaped yet is a zombie, not a worker."""
        assert self.process is not None
        pid = self.process.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return [int(child) for child in children if _is_live_worker(int(child))]


def _is_live_worker(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone meanwhile
        return False
    return state != "Z" and b"resource_tracker" not in cmdline


@contextlib.contextmanager
def running_server(
    env: Mapping[str, str] | None = None, app: str = "servicebench_support_queue.server.app:app"
) -> Iterator[str]:
    """Yield the base URL of a uvicorn serving `app`; stop it (SIGTERM) afterwards."""
    server = ServerProcess(env, app=app).start()
    try:
        yield server.wait().url
    finally:
        server.stop()


def stop(process: subprocess.Popen, timeout: float = 15.0) -> None:
    """SIGTERM (a graceful shutdown), then SIGKILL if it has not exited after `timeout`."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
