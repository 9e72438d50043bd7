"""HAProxy from Debian in front of local servers, configured by the reference topology's own
deploy/haproxy.cfg: only what Docker provides is swapped for local facts (the resolvers
and the server template become the given servers; the bind becomes a free loopback port)."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest
from server_process import REPO, free_port

HAPROXY = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
requires_haproxy = pytest.mark.skipif(
    HAPROXY is None, reason="haproxy is not installed (apt-get install haproxy; .ci/run does)"
)
CONFIG = REPO / "deploy" / "haproxy.cfg"
SERVED_BY = "x-served-by"


def swap(text: str, pattern: str, replacement: str) -> str:
    """`text` with the one match of `pattern` replaced (a clear error if the file changed)."""
    result, count = re.subn(pattern, lambda _: replacement, text, flags=re.MULTILINE)
    assert count == 1, f"deploy/haproxy.cfg: expected one match of {pattern!r}, found {count}"
    return result


def local_config(port: int, backends: Sequence[str]) -> str:
    """deploy/haproxy.cfg bound to `port`, balancing over `backends` (base URLs)."""
    text = CONFIG.read_text(encoding="utf-8")
    text = swap(text, r"^resolvers docker\n(?:[ \t]+.*\n)+", "")
    text = swap(text, r"^([ \t]+)bind :8000$", f"    bind 127.0.0.1:{port}")
    template = re.search(r"^[ \t]+server-template \S+ \d+ \S+ (.*) resolvers .*$", text, re.M)
    assert template, "deploy/haproxy.cfg: no server-template line"
    servers = "\n".join(
        f"    server s{number} {url.removeprefix('http://')} {template.group(1)}"
        for number, url in enumerate(backends)
    )
    return swap(text, re.escape(template.group(0)), servers)


class HAProxyProcess:
    def __init__(self, directory: Path, backends: Sequence[str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = directory / "haproxy.cfg"
        self.config.write_text(local_config(self.port, backends), encoding="utf-8")
        self.process: subprocess.Popen | None = None

    def start(self, backends_up: int) -> HAProxyProcess:
        """Start it and wait until its health checks see `backends_up` servers up."""
        assert HAPROXY is not None
        self.process = subprocess.Popen([HAPROXY, "-f", str(self.config), "-db"])
        deadline = time.monotonic() + 30
        seen: set[str] = set()
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                answer = httpx.get(f"{self.url}/health", timeout=1)
                if answer.status_code == 200:
                    seen.add(answer.headers[SERVED_BY])
                    if len(seen) >= backends_up:
                        return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"haproxy did not reach {backends_up} servers (saw {sorted(seen)})")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
