"""A uvicorn server for tests that need its process and its log (SIGTERM, log contents).

Unlike `server_process.running_server`, this logs at uvicorn's default level (info,
with the access log: what a deployment writes) into a file, and yields the process.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from server_process import REPO, free_port, stop, wait_healthy


@contextlib.contextmanager
def started_server(
    env: Mapping[str, str], log_path: Path, log_level: str = "info"
) -> Iterator[tuple[subprocess.Popen, str]]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "servicebench_support_queue.server.app:app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                log_level,
            ],
            cwd=REPO,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_healthy(url, process)
        yield process, url
    finally:
        stop(process)
