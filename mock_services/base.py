"""What the services share: their base class and the view of an episode they get.

A service call sees only its episode's records, through the `EpisodeRecords`
interface that `ServiceState` (state.py) provides. The interface is declared here
rather than imported from state.py because state.py dispatches to the services: the
services never import the state, so the package's imports run one way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .registry import ServiceError
from .world import World


def normalize_id(value: str) -> str:
    """Ids are matched case-insensitively: `ord-1005` finds ORD-1005."""
    return value.strip().upper()


class EpisodeRecords(Protocol):
    """An episode's current records: the shared world plus that episode's own writes."""

    @property
    def world(self) -> World: ...

    def read(self, table: str, key: str) -> Mapping[str, Any] | None: ...

    def write(self, table: str, key: str) -> dict[str, Any]: ...

    def insert(self, table: str, key: str, record: dict[str, Any]) -> dict[str, Any]: ...

    def created(self, table: str) -> list[Mapping[str, Any]]: ...

    def find_user_id_by_email(self, email: str) -> str | None: ...


class _Service:
    """Base of the services: a service call sees the episode's state only."""

    def __init__(self, state: EpisodeRecords) -> None:
        self.state = state

    def _require(self, table: str, key: str, label: str) -> Mapping[str, Any]:
        record = self.state.read(table, normalize_id(key))
        if record is None:
            raise ServiceError(404, f"{label} {key!r} not found")
        return record
