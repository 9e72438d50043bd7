"""The seed README's curl walkthrough, run verbatim with curl against a live server."""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

# Copied from the ServiceBench seed document; only the host:port is substituted.
WALKTHROUGH = [
    """curl -X POST http://localhost:8000/reset \\
-H "Content-Type: application/json" \\
-d '{"task_id": 1}'""",
    """curl -X POST http://localhost:8000/step \\
-H "Content-Type: application/json" \\
-d '{"service": "user", "endpoint": "/users/lookup", "method": "GET", "params": {"email": "jane.doe@example.com"}}'""",
]


def curl(command: str, base_url: str) -> dict:
    argv = shlex.split(command.replace("\\\n", " ").replace("http://localhost:8000", base_url))
    output = subprocess.run(
        [*argv, "-s", "--max-time", "10"], check=True, capture_output=True, text=True
    )
    return json.loads(output.stdout)


def test_seed_curl_walkthrough_verbatim(live_server: str) -> None:
    started = curl(WALKTHROUGH[0], live_server)
    assert started["observation"]["task_id"] == "order_status_lookup"
    assert started["done"] is False
    stepped = curl(WALKTHROUGH[1], live_server)
    assert stepped["episode_id"] == started["episode_id"]
    assert stepped["observation"]["success"] is True
    assert stepped["reward"] == pytest.approx(0.45)
    state = curl(f"curl {live_server}/state", live_server)
    assert state["episode_id"] == started["episode_id"] and state["step_count"] == 1
