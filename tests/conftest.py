from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared helpers beside this file

from server_process import running_server  # noqa: E402


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    """Base URL of the real app served by uvicorn on a free loopback port."""
    with running_server() as url:
        yield url


@pytest.fixture(scope="session")
def battery_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real uvicorn for the robustness battery, whose log must stay free of errors."""
    from uvicorn_process import started_server

    log_path = tmp_path_factory.mktemp("robustness") / "server.log"
    with started_server({}, log_path, log_level="warning") as (_, url):
        yield url
    log = log_path.read_text(errors="replace")
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]


@pytest.fixture(scope="session")
def cards(live_server: str) -> list:
    """The task cards the live server lists (`/tasks`)."""
    from servicebench_support_queue.client import EnvHttpClient

    with EnvHttpClient(live_server) as client:
        return client.tasks()


@pytest.fixture(scope="module")
def runs(
    request: pytest.FixtureRequest,
    live_server: str,
    cards: list,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict:
    """The inference runs of the requesting test module's `SCENARIOS`, played once per module."""
    from inference_support import play_scenarios

    return play_scenarios(request.module.SCENARIOS, live_server, cards, tmp_path_factory)
