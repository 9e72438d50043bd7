"""Running a command of the README or the docs as a user would: by bash, from a working directory,
in this project's environment (`UV_PROJECT` points `uv run` at the checkout), against a live server
whose free port stands in for the text's `localhost:8000`."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

from checkout import REPO
from server_process import free_port, wait_healthy

DOCUMENTED_HOST = "localhost:8000"
CLEARED = (
    "MODEL_",
    "INFERENCE_",
    "API_",
    "HF_TOKEN",
    "ENV_BASE_URL",
    "AGENT_",
    "UV_",
    "VIRTUAL_ENV",
)
"""Variables of the test run that a user's shell would not have."""


def user_environment(**variables: str) -> dict[str, str]:
    """A user's environment: none of the test run's settings, `uv run` aimed at the checkout."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED)}
    environ.update(UV_PROJECT=str(REPO), **variables)
    return environ


def against(command: str, base_url: str) -> str:
    """The command with the live server's host:port for the documented one."""
    return command.replace(DOCUMENTED_HOST, base_url.removeprefix("http://"))


def run_as_written(
    command: str, base_url: str | None = None, cwd: Path = REPO, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`command` run by `bash -e`, against `base_url` (also `$ENV_BASE_URL`) when given."""
    script = against(command, base_url) if base_url else command
    extra = {"ENV_BASE_URL": base_url} if base_url else {}
    return subprocess.run(
        ["bash", "-ec", script],
        cwd=cwd,
        env=user_environment(**extra),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@contextlib.contextmanager
def served_as_written(command: str) -> Iterator[str]:
    """A documented server command run as written, on a free loopback port given by `$HOST` and
    `$PORT` (the defaults of its flags); yields its base URL, then stops it and its children."""
    port = free_port()
    process = subprocess.Popen(
        ["bash", "-ec", command],
        cwd=REPO,
        env=user_environment(HOST="127.0.0.1", PORT=str(port)),
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
