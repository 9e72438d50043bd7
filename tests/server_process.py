"""Start the real app under uvicorn on a free loopback port, for tests that need a live server."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen, timeout: float = 90.0) -> None:
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


@contextlib.contextmanager
def running_server(
    env: Mapping[str, str] | None = None, app: str = "servicebench_support_queue.server.app:app"
) -> Iterator[str]:
    """Yield the base URL of a uvicorn serving `app`; stop it (SIGTERM) afterwards."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            app,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )
    try:
        wait_healthy(url, process)
        yield url
    finally:
        stop(process)


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
