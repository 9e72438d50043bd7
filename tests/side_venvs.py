"""The venvs .ci/run builds beside this project's, for checks that need other releases of a
package than uv.lock's (TRL's stack: $TRL_VENV; the MCP SDK's 2.x: $MCP2_VENV)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def side_python(variable: str, what: str, how: str) -> Path:
    """The interpreter of the venv `$variable` names. Without one the calling test skips, saying
    `how` to make it; in CI (`CI` set), where .ci/run builds it, it fails instead."""
    venv = os.environ.get(variable)
    python = Path(venv or "/nonexistent") / "bin" / "python"
    if not python.exists():
        if os.environ.get("CI"):
            pytest.fail(f"CI must check {what}: no venv at {variable}={venv}")
        pytest.skip(f"no venv for {what}: run .ci/run, or set {variable} to a venv with `{how}`")
    return python
