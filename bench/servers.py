"""The servers under test, each started the same way: one uvicorn worker on loopback.

The three targets share every uvicorn setting (uvicorn's defaults, as the Dockerfile
runs them, minus the access log), so the only difference between them is the app.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOG_DIR = REPO / "bench" / "results" / "logs"
BASELINES_DIR = Path(os.environ.get("BENCH_BASELINES_DIR", REPO.parent / "shared" / "bench"))
UVICORN_SETTINGS: tuple[str, ...] = (
    "--loop",
    "auto",
    "--http",
    "auto",
    "--ws",
    "auto",  # uvloop, httptools, websockets
    "--log-level",
    "warning",
    "--no-access-log",
    "--backlog",
    "4096",
)


@dataclass(frozen=True)
class Target:
    """One app to benchmark and where its OpenEnv routes live."""

    name: str
    app: str
    app_dir: Path
    ws_path: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    python: str | None = None
    """Another checkout's interpreter (its venv), to run an older tree beside this one."""


OURS = Target(
    "servicebench", "servicebench_support_queue.server.app:app", REPO, ws_path="/servicebench/ws"
)
OPENENV = Target("openenv-reference", "baselines:openenv_echo", BASELINES_DIR, ws_path="/ws")
BARE = Target("bare-fastapi", "baselines:bare", BASELINES_DIR)
WS_FLOOR = Target("uvicorn-ws-floor", "bench.ws_floor:app", REPO, ws_path="/ws")
"""Not a peer: what uvicorn's WebSocket path costs with an app that does nothing."""
WS_IDEAL = Target("minimal-servicebench-ws", "bench.ws_ideal:app", REPO, ws_path="/ws")
"""Not a peer: the least a ServiceBench WebSocket server can do per message (a bound for ours)."""


@dataclass(frozen=True)
class RunningServer:
    target: Target
    url: str
    pid: int
    seconds_to_healthy: float

    @property
    def ws_url(self) -> str:
        assert self.target.ws_path is not None, f"{self.target.name} has no WebSocket"
        return self.url.replace("http://", "ws://") + self.target.ws_path

    def rss_bytes(self) -> int:
        """Resident set size of the server process, from /proc."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS in /proc status")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(port: int) -> bool:
    """One raw GET /health (no client library: this loop times server start-up)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return sock.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


@contextlib.contextmanager
def serve(
    target: Target,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    args: Sequence[str] = (),
) -> Iterator[RunningServer]:
    """Start `target` on a free loopback port; yield it once /health answers; SIGTERM it after.
    `args`: more uvicorn options (e.g. `--workers 2`).

    The server's output goes to bench/results/logs/<name>-<port>.log.
    """
    port = free_port()
    command = [
        target.python or sys.executable,
        "-m",
        "uvicorn",
        target.app,
        "--app-dir",
        str(target.app_dir),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *UVICORN_SETTINGS,
        *args,
    ]
    started = time.perf_counter()
    log_path = LOG_DIR / f"{target.name}-{port}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:  # the child keeps its own descriptor
        process = subprocess.Popen(
            command,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **target.env, **(env or {})},
        )
    try:
        while not _healthy(port):
            if process.poll() is not None:
                raise RuntimeError(f"{target.name} exited with {process.returncode}")
            if time.perf_counter() - started > timeout:
                raise TimeoutError(f"{target.name} not healthy after {timeout}s")
            time.sleep(0.005)
        yield RunningServer(
            target, f"http://127.0.0.1:{port}", process.pid, time.perf_counter() - started
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def checkout(ref: str) -> Iterator[Path]:
    """A directory from which `servicebench_support_queue` imports the code of `ref`."""
    with tempfile.TemporaryDirectory() as directory:
        tree = Path(directory) / "tree"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), ref],
            check=True,
            capture_output=True,
        )
        try:
            package_dir = Path(directory) / "import"
            package_dir.mkdir()
            (package_dir / "servicebench_support_queue").symlink_to(tree)
            yield package_dir
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                check=False,
                capture_output=True,
            )
