from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared helpers beside this file

from server_process import running_server  # noqa: E402

LONGEST_MODULES = (
    "tests/server/test_answer_leaks.py",
    "tests/test_readme_inference.py",
    "tests/test_trl_example.py",
    "tests/server/support_queue/test_variants.py",
    "tests/test_dockerfile.py",
    "tests/test_openenv_types.py",
    "tests/server/store/test_faults.py",
    "tests/server/support_queue/text/test_echo_attacks.py",
    "tests/server/support_queue/test_proof.py",
    "tests/server/test_reliability.py",
    "tests/server/store/test_episode_bytes.py",
    "tests/server/protocols/test_http.py",
    "tests/test_openenv_validate.py",
)
"""The modules that take longest on a 2-core machine (a minute or more each, measured with
`--durations`), longest first. pytest-xdist hands out whole modules (`--dist loadscope`) in the
order of the collection, so these come first: a long module started last would keep one
worker busy alone at the end while the other has nothing left."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest modules first, in the order above; then the others by their number of tests,
    most first (what xdist's own reordering would do); a module's tests in their own order."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    rank = {module: n for n, module in enumerate(LONGEST_MODULES)}
    order = sorted(modules, key=lambda m: (rank.get(m, len(rank)), -len(modules[m])))
    items[:] = [item for module in order for item in modules[module]]


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
