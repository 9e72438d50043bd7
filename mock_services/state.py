"""One episode's view of the services: a shared frozen world plus its own writes.

An episode's writes land in a small copy-on-write overlay held by its
`ServiceState`, so an episode costs a few bytes until it writes, and a fresh
`ServiceState` is exactly the initial data again. `dispatch` is the one entry point
for a call: it finds the endpoint in the catalogue, validates the parameters and
runs the handler on this state. This is the top of the package's imports: it
imports the catalogue (and through it the services), never the other way round.

No input reaches `dispatch`'s last-resort handler: parameters are validated
(types and ranges, mock_services/registry.py) before a handler runs, and a property
test over every endpoint holds it to that. It stays for bugs only, which it logs
with their traceback and answers as a 500 inside the observation, so that one bug
does not end a training run's episode.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from ..read_only_json import thaw
from .catalogue import resolve_route
from .registry import ServiceError, bind_params
from .world import CANONICAL_WORLD, World

log = logging.getLogger("services")


class ServiceState:
    """One episode's view of the services: a shared world plus its own writes."""

    __slots__ = ("_world", "_overlay")

    def __init__(self, world: World = CANONICAL_WORLD) -> None:
        self._world = world
        self._overlay: dict[str, dict[str, dict[str, Any]]] | None = None

    @property
    def world(self) -> World:
        return self._world

    @property
    def has_writes(self) -> bool:
        return self._overlay is not None

    def fork(self) -> ServiceState:
        """An independent copy: same shared world, its own copy of the writes so far."""
        twin = ServiceState(self._world)
        twin._overlay = thaw(self._overlay) if self._overlay is not None else None
        return twin

    def read(self, table: str, key: str) -> Mapping[str, Any] | None:
        """The current record (this episode's copy if it wrote one), or None."""
        if self._overlay is not None:
            written = self._overlay.get(table, {}).get(key)
            if written is not None:
                return written
        return self._world.tables[table].get(key)

    def write(self, table: str, key: str) -> dict[str, Any]:
        """A mutable copy of an existing record, made on first write (copy-on-write)."""
        if self._overlay is None:
            self._overlay = {}
        records = self._overlay.setdefault(table, {})
        if key not in records:
            records[key] = thaw(self._world.tables[table][key])
        return records[key]

    def written(self) -> Iterator[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]]:
        """`(table, key, before, after)` for every record this episode wrote.

        `before` is the shared world's record, `after` this episode's copy: what the
        episode changed, read straight off the overlay (nothing is tracked per step).
        """
        for table, records in (self._overlay or {}).items():
            for key, after in records.items():
                yield table, key, self._world.tables[table][key], after

    def find_user_id_by_email(self, email: str) -> str | None:
        """The user whose current email this is, honouring this episode's email updates."""
        wanted = email.strip().lower()
        written = self._overlay.get("users", {}) if self._overlay is not None else {}
        for user_id, user in written.items():
            if user["email"].lower() == wanted:
                return user_id
        user_id = self._world.user_id_by_email.get(wanted)
        if user_id is None or user_id in written:
            return None
        return user_id

    def dispatch(
        self, service: str, endpoint: str, method: str, params: Mapping[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        """Serve one call: `(200, data)` or `(4xx, {"error": message})`; never raises."""
        try:
            entry = resolve_route(service, endpoint, method)
            if not isinstance(params, Mapping):
                raise ServiceError(400, "params must be a JSON object")
            kwargs = bind_params(entry, params)
            return 200, entry.handler(entry.owner(self), **kwargs)
        except ServiceError as error:
            return error.status, {"error": error.message}
        except Exception as error:  # a bug: logged loudly, yet it must not take the episode down
            log.exception("bug in the service handling %s %s", method, endpoint)
            return 500, {"error": f"internal error in {endpoint!r}: {type(error).__name__}"}
