"""Fixtures of the services tests: the world that runs all six services."""

from __future__ import annotations

import pytest
from mock_services_support import full_world

from servicebench_support_queue.mock_services import World


@pytest.fixture(scope="module")
def world() -> World:
    return full_world()
