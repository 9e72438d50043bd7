"""HAProxy in front of several servers, as the reference topology (compose.yaml) runs it:
round robin per request, no sticky sessions, each answer naming the server that gave it."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest
from server_process import free_port

HAPROXY = shutil.which("haproxy")
requires_haproxy = pytest.mark.skipif(
    HAPROXY is None, reason="haproxy is not installed (apt-get install haproxy; .ci/run does)"
)
SERVED_BY = "x-served-by"

CONFIG = """\
global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    retries 3
    option redispatch
frontend episodes
    bind 127.0.0.1:{port}
    default_backend servers
backend servers
    balance roundrobin
    option httpchk GET /health
    http-response set-header X-Served-By %s
{servers}
"""


class HAProxyProcess:
    def __init__(self, directory: Path, backends: Sequence[str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        servers = "\n".join(
            f"    server s{i} {url.removeprefix('http://')} check inter 300ms"
            for i, url in enumerate(backends)
        )
        self.config = directory / "haproxy.cfg"
        self.config.write_text(CONFIG.format(port=self.port, servers=servers))
        self.process: subprocess.Popen | None = None

    def start(self) -> HAProxyProcess:
        assert HAPROXY is not None
        self.process = subprocess.Popen([HAPROXY, "-f", str(self.config), "-db"])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("haproxy did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
