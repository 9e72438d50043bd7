"""The official MCP Python SDK at both majors, each in its own interpreter.

1.x is this project's test extra (OpenEnv's fastmcp requires `mcp<2`); 2.x lives in the venv
.ci/run builds from .ci/mcp2-requirements.txt and names in $MCP2_VENV. Without it (a run outside
.ci/run) the 2.x cases skip, and in CI they fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from server_process import CHILD_TIMEOUT
from side_venvs import side_python

TESTS = Path(__file__).resolve().parent
MAJORS = ("1", "2")


def sdk_python(major: str) -> str:
    """The interpreter whose `mcp` is that major."""
    if major == "1":
        return sys.executable
    how = "pip install -r .ci/mcp2-requirements.txt"
    return str(side_python("MCP2_VENV", "MCP with the SDK's 2.x", how))


def run_sdk(major: str, code: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A script run by that major's interpreter, outside this project's environment."""
    return subprocess.run(
        [sdk_python(major), "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": ""},
        cwd=TESTS,  # not the checkout: the 2.x interpreter must not find this package there
    )


class SdkPlayer:
    """tests/mcp_sdk_player.py at one major: one MCP session, one request per call."""

    def __init__(self, major: str, url: str) -> None:
        self.process = subprocess.Popen(
            [sdk_python(major), str(TESTS / "mcp_sdk_player.py"), url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": ""},
            cwd=TESTS,
        )
        hello = self._read()
        assert hello["sdk"].split(".")[0] == major, hello["sdk"]
        self.initialized: dict[str, Any] = hello["initialize"]

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=CHILD_TIMEOUT)
            stderr = self.process.stderr.read() if self.process.stderr else ""
            raise AssertionError(f"the SDK player ended: {stderr[-4000:]}")
        return json.loads(line)

    def request(self, method: str, name: str | None = None, arguments: Any = None) -> Any:
        assert self.process.stdin is not None
        message = {"method": method, "name": name, "arguments": arguments}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        """Leave the session as the SDK does at the end of its `async with` (DELETE)."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self._read() == {"closed": True}
        assert self.process.wait(timeout=CHILD_TIMEOUT) == 0

    def __enter__(self) -> SdkPlayer:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
