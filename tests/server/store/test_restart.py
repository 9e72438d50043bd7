"""A restart replaces an episode in one operation, on every store: while an MCP session is
restarted again and again (switching environments at the root), no concurrent `/state`
finds it missing, and no concurrent `/reset` naming its id takes the id.

On SQLite and Redis the readers and the would-be takers are another process (another
app on the same store, with its own cache and connection) as well as the same one. A
restart used to drop the episode and then add the new one: a `/reset` naming the id
landed in the gap in 12-25% of the attempts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi.testclient import TestClient
from mcp_support import Session

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings

RESTARTS = 60
TASKS = ("billing_discrepancy", "easy_inbox_cleanup")  # one per environment: switched each time


def hammer(restart: Callable[[int], None], probes: list[Callable[[], str | None]]) -> list[str]:
    """Run `RESTARTS` restarts while every probe runs in a loop of its own; the problems the
    probes found (at most a few of each)."""
    done = threading.Event()
    found: list[str] = []

    def probe_until_done(probe: Callable[[], str | None]) -> None:
        while not done.is_set() and len(found) < 20:
            problem = probe()
            if problem is not None:
                found.append(problem)

    with ThreadPoolExecutor(len(probes)) as pool:
        running = [pool.submit(probe_until_done, probe) for probe in probes]
        try:
            for i in range(RESTARTS):
                restart(i)
        finally:
            done.set()
        for future in running:
            future.result()
    return found


def test_a_restart_never_frees_the_id_nor_hides_the_episode(backend_url: str) -> None:
    apps = [TestClient(create_app(Settings(episode_store=backend_url))).__enter__()]
    if backend_url != "memory":
        apps.append(TestClient(create_app(Settings(episode_store=backend_url))).__enter__())
    try:
        session = Session(apps[0], "", f"?task_id={TASKS[0]}")
        seen_envs: set[str] = set()

        def restart(i: int) -> None:
            session.result("prompts/get", {"name": TASKS[(i + 1) % 2]})

        def reader(app: TestClient) -> Callable[[], str | None]:
            def read() -> str | None:
                response = app.get("/state", params={"episode_id": session.id})
                if response.status_code != 200:
                    return f"/state during a restart: {response.status_code} {response.text}"
                seen_envs.add(response.json()["env"])
                return None

            return read

        def taker(app: TestClient) -> Callable[[], str | None]:
            def take() -> str | None:
                body: dict[str, Any] = {"episode_id": session.id, "env": "support_queue"}
                response = app.post("/reset", json=body)
                if response.status_code != 409:
                    return f"/reset naming the id during a restart: {response.status_code}"
                return None

            return take

        probes = [make(app) for app in apps for make in (reader, taker)]
        assert hammer(restart, probes) == []
        assert seen_envs == {"servicebench", "support_queue"}  # the probes saw both sides
        final = apps[-1].get("/state", params={"episode_id": session.id}).json()
        assert (final["task"]["id"], final["step_count"]) == (TASKS[RESTARTS % 2], 0)
    finally:
        for app in apps:
            app.__exit__(None, None, None)
