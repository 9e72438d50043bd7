"""Smoke-test a running server: /health, `POST /reset {}` and a whole ServiceBench episode.

    python scripts/smoke_test_server.py http://localhost:8000     # e.g. after `docker run`

Standard library only, so it runs with any Python 3.9+ and no install. The
episode is ServiceBench's default task (what `/reset {}` starts) played along its
two-call path, with the email and order id read off the task text; it must end
done, completed, with a score of 1.0 that equals the sum of the step rewards.
Prints a JSON summary; exits 0 only if every check passed. scripts/replay_dockerfile.py
runs the same checks against the server it starts.
"""

from __future__ import annotations

import json
import re
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any


class SmokeTestError(Exception):
    """The server answered, but not as it should have."""


def call(url: str, body: dict[str, Any] | None = None, timeout: float = 10.0) -> tuple[int, Any]:
    """(status, decoded JSON) of a GET, or of a POST when `body` is given."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def wait_healthy(
    url: str, still_running: Callable[[], bool] = lambda: True, timeout: float = 90.0
) -> Any:
    """The body of the first 200 from /health; fails if the server stops or stays down."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not still_running():
            raise SmokeTestError("the server exited before it was healthy")
        try:
            status, body = call(f"{url}/health", timeout=2.0)
            if status == 200:
                return body
        except OSError:
            pass
        time.sleep(0.1)
    raise SmokeTestError(f"{url}/health not healthy after {timeout:.0f}s")


def play_servicebench(url: str) -> dict[str, Any]:
    """`POST /reset {}` (ServiceBench's first task), then its two-call path over /step."""
    status, first = call(f"{url}/reset", {})
    if status != 200 or "observation" not in first:
        raise SmokeTestError(f"POST /reset {{}} answered {status}: {first}")
    episode_id, task = first["episode_id"], first["observation"]["task_description"]
    email = re.search(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", task)
    order_id = re.search(r"ORD-\d+", task)
    if email is None or order_id is None:
        raise SmokeTestError(f"the default task names no customer email and order: {task!r}")
    actions = [
        {
            "service": "user",
            "endpoint": "/users/lookup",
            "method": "GET",
            "params": {"email": email.group(0)},
        },
        {
            "service": "order",
            "endpoint": "/orders/lookup",
            "method": "GET",
            "params": {"order_id": order_id.group(0)},
        },
    ]
    rewards, result = [], first
    for action in actions:
        status, result = call(f"{url}/step", {"action": action, "episode_id": episode_id})
        if status != 200:
            raise SmokeTestError(f"POST /step answered {status}: {result}")
        rewards.append(result["reward"])
    final = result["observation"]
    summary = {
        "task_id": final["task_id"],
        "steps": len(rewards),
        "rewards": rewards,
        "done": result["done"],
        "task_completed": final["task_completed"],
        "score": final["cumulative_reward"],
    }
    if not (
        result["done"]
        and final["task_completed"]
        and abs(final["cumulative_reward"] - 1.0) < 1e-9
        and abs(sum(rewards) - final["cumulative_reward"]) < 1e-9
    ):
        raise SmokeTestError(f"the ServiceBench episode did not finish with score 1.0: {summary}")
    return summary


def check_server(url: str, still_running: Callable[[], bool] = lambda: True) -> dict[str, Any]:
    """Every check, in order; the summary of what the server answered."""
    url = url.rstrip("/")
    return {"health": wait_healthy(url, still_running), "episode": play_servicebench(url)}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        summary = {"passed": True, **check_server(argv[0])}
    except (SmokeTestError, OSError) as exc:
        summary = {"passed": False, "error": str(exc)}
    print(json.dumps(summary, indent=2))
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
