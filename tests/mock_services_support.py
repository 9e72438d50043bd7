"""Shared by the services tests (tests/test_services_*.py): one call, as an agent makes it."""

from __future__ import annotations

from typing import Any

from servicebench_support_queue.mock_services import ServiceState


def call(
    state: ServiceState, service: str, path: str, method: str = "GET", **params: Any
) -> tuple[int, dict[str, Any]]:
    """`state.dispatch` with the parameters as keywords."""
    return state.dispatch(service, path, method, params)
