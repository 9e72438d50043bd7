from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from server_process import running_server  # noqa: E402


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    """Base URL of the real app served by uvicorn on a free loopback port."""
    with running_server() as url:
        yield url
