"""One episode's view of the services: a shared frozen world plus its own writes.

An episode's writes land in a small copy-on-write overlay held by its
`ServiceState`, so an episode costs a few bytes until it writes, and a fresh
`ServiceState` is exactly the initial data again. `dispatch` is the one entry point
for a call: it finds the endpoint in the catalogue, validates the parameters and
runs the handler on this state. This is the top of the package's imports: it
imports the catalogue (and through it the services), never the other way round.

Idempotent writes: every write takes an optional `idempotency_key` (registry.py's
`KEY_PARAM`). The state keeps, per key, the write's fingerprint and the answer it
gave (`KeyedAnswer`); the same key with the same fingerprint is not applied again and
answers a copy of that answer, whatever the state is now; the same key with another
fingerprint is a 409 that changes nothing. Rules, as Stripe's keys have them:

* the fingerprint is the route plus the bound parameters (after validation, so `25`
  and `"25.00"` are one amount), without the key and without free text (`Wording`: a
  refund's reason, a user's notes by name only), as the reward rules' call identity
  (server/servicebench/grading/calls.py) has it: re-worded, it is the same write. Ids are
  compared as sent: a retry re-sends its request, and a re-spelt one is refused, safely;
* a key is recorded once the write's handler ran, whatever it answered: a write refused
  by its own rules (a refund over the balance: 400; a transition not allowed: 409)
  answers the same refusal to its retries; a new attempt needs a new key. A call refused
  before its handler (an unknown route, a missing or mistyped parameter, a bad key)
  records nothing;
* keys are an episode's own: `fork` copies the table, a fresh state has none.

Memory: a write step adds one entry at most, so the step budget bounds their number, and
each is small whatever the client sends (`MAX_KEY_ENTRY_BYTES`, which the environment's
memory bound allows per step): the key kept as a 16-byte digest, the write as a 16-byte
fingerprint, the answer pickled (each replay unpickles a fresh copy) but for its long
strings, which stay the very objects the episode's records hold: a long refund reason is
not kept twice.

No input reaches `dispatch`'s last-resort handler: parameters are validated
(types and ranges, mock_services/registry.py) before a handler runs, and a property
test over every endpoint holds it to that. It stays for bugs only, which it logs
with their traceback and answers as a 500 inside the observation, so that one bug
does not end a training run's episode.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import pickle
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from ..error_messages import shown
from ..read_only_json import thaw
from .catalogue import Surface, resolve_route, surface
from .registry import IDEMPOTENCY_KEY, Endpoint, ServiceError, bind_params
from .world import CANONICAL_WORLD, World

log = logging.getLogger("services")


class Served(NamedTuple):
    """One call's answer, and whether it was a keyed write's recorded answer (not applied)."""

    status: int
    body: dict[str, Any]
    replayed: bool = False


SHARED_CHARS = 16
"""A string of a recorded answer longer than this is kept by reference, not copied."""
MAX_KEY_ENTRY_BYTES = 768
"""The most one key's entry holds besides the strings it shares with the episode's records
(336 to 589 bytes measured, warm; tests/mock_services/test_idempotency.py holds each write to it)."""


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def write_fingerprint(entry: Endpoint, kwargs: Mapping[str, Any]) -> bytes:
    """A write as its idempotency key compares it: the route and the bound parameters but
    the key and free text (an object's free-text fields count by name only)."""
    effect: dict[str, Any] = {}
    for param in entry.params:
        if param.name not in kwargs or param.wording or param.name == IDEMPOTENCY_KEY:
            continue
        value = kwargs[param.name]
        if param.fields is not None and param.fields.wording and isinstance(value, Mapping):
            value = {name: None if name in param.fields.wording else v for name, v in value.items()}
        effect[param.name] = value
    return _digest(json.dumps([entry.service, entry.path, effect], sort_keys=True, default=repr))


class _Packer(pickle.Pickler):
    """Pickles an answer, leaving its long strings out (by their index in `shared`)."""

    def __init__(self, file: io.BytesIO, shared: list[str]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.shared = shared

    def persistent_id(self, obj: Any) -> int | None:
        if type(obj) is str and len(obj) > SHARED_CHARS:
            self.shared.append(obj)
            return len(self.shared) - 1
        return None


class _Unpacker(pickle.Unpickler):
    def __init__(self, data: bytes, shared: tuple[str, ...]) -> None:
        super().__init__(io.BytesIO(data))
        self.shared = shared

    def persistent_load(self, pid: Any) -> str:
        return self.shared[pid]


class KeyedAnswer(NamedTuple):
    """What one key recorded: its write's fingerprint and the answer it gave."""

    fingerprint: bytes
    status: int
    packed: bytes
    shared: tuple[str, ...]

    @classmethod
    def of(cls, fingerprint: bytes, status: int, body: Mapping[str, Any]) -> KeyedAnswer:
        shared: list[str] = []
        file = io.BytesIO()
        _Packer(file, shared).dump(body)
        return cls(fingerprint, status, file.getvalue(), tuple(shared))

    def body(self) -> dict[str, Any]:
        """A fresh copy of the answer's body."""
        return _Unpacker(self.packed, self.shared).load()  # our own bytes, never a client's


class KeyTable:
    """The keys one episode's writes used, by digest, in the order they were first used."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[bytes, KeyedAnswer] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and _digest(key) in self._entries

    def get(self, key: str) -> KeyedAnswer | None:
        return self._entries.get(_digest(key))

    def record(self, key: str, answer: KeyedAnswer) -> None:
        self._entries[_digest(key)] = answer

    def answers(self) -> list[KeyedAnswer]:
        return list(self._entries.values())

    def copy(self) -> KeyTable:
        """An independent table with the same entries (which never change)."""
        twin = KeyTable()
        twin._entries = dict(self._entries)
        return twin


class ServiceState:
    """One episode's view of the services: a shared world plus its own writes."""

    __slots__ = ("_world", "_overlay", "_keys", "surface")

    def __init__(self, world: World = CANONICAL_WORLD, keyed: bool = False) -> None:
        self._world = world
        self._overlay: dict[str, dict[str, dict[str, Any]]] | None = None
        self._keys: KeyTable | None = None
        self.surface: Surface = surface(world.services, keyed)
        """The endpoints the world runs (what an episode of it sees and can call); `keyed`:
        its catalogue shows the writes' idempotency key (accepted either way)."""

    @property
    def world(self) -> World:
        return self._world

    @property
    def has_writes(self) -> bool:
        return self._overlay is not None

    @property
    def keys(self) -> KeyTable:
        """The idempotency keys this episode's writes recorded (`key in state.keys`)."""
        return self._keys if self._keys is not None else KeyTable()

    def fork(self) -> ServiceState:
        """An independent copy: same shared world, its own copy of the writes and keys so far."""
        twin = ServiceState(self._world, self.surface.keyed)
        twin._overlay = thaw(self._overlay) if self._overlay is not None else None
        twin._keys = self._keys.copy() if self._keys is not None else None
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

    def insert(self, table: str, key: str, record: dict[str, Any]) -> dict[str, Any]:
        """Add a new record (a replacement shipment, a case) to this episode only."""
        if self.read(table, key) is not None:
            raise ValueError(f"{table}/{key} exists already")
        if self._overlay is None:
            self._overlay = {}
        self._overlay.setdefault(table, {})[key] = record
        return record

    def created(self, table: str) -> list[Mapping[str, Any]]:
        """The records this episode added to `table`, in the order it added them."""
        records = (self._overlay or {}).get(table, {})
        shared = self._world.tables[table]
        return [record for key, record in records.items() if key not in shared]

    def written(self) -> Iterator[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]]:
        """`(table, key, before, after)` for every record this episode wrote or added.

        `before` is the shared world's record (empty for a record the episode added),
        `after` this episode's copy: what the episode changed, read straight off the
        overlay (nothing is tracked per step).
        """
        empty: Mapping[str, Any] = {}
        for table, records in (self._overlay or {}).items():
            shared = self._world.tables[table]
            for key, after in records.items():
                yield table, key, shared.get(key, empty), after

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
        served = self.serve(service, endpoint, method, params)
        return served.status, served.body

    def serve(self, service: str, endpoint: str, method: str, params: Mapping[str, Any]) -> Served:
        """`dispatch`, saying also whether the answer is a keyed write's recorded one."""
        try:
            entry = resolve_route(service, endpoint, method, self.surface)
            if not isinstance(params, Mapping):
                raise ServiceError(400, "params must be a JSON object")
            kwargs = bind_params(entry, params, self.surface.keyed)
            key = kwargs.pop(IDEMPOTENCY_KEY, None)
            if key is None:
                return Served(200, entry.handler(entry.owner(self), **kwargs))
            return self._keyed(entry, kwargs, key)
        except ServiceError as error:
            return Served(error.status, {"error": error.message})
        except Exception as error:  # a bug: logged loudly, yet it must not take the episode down
            log.exception("bug in the service handling %s %s", method, endpoint)
            return Served(500, _bug(endpoint, error))

    def _keyed(self, entry: Endpoint, kwargs: dict[str, Any], key: str) -> Served:
        """A write sent with an idempotency key: run and recorded once, then replayed."""
        fingerprint = write_fingerprint(entry, kwargs)
        recorded = self._keys.get(key) if self._keys is not None else None
        if recorded is not None and recorded.fingerprint != fingerprint:
            raise ServiceError(
                409,
                f"{IDEMPOTENCY_KEY} {shown(key)} was already used for a different request; "
                "nothing was done. Send a new key for a new write, or the first request's "
                "parameters unchanged to get its answer again",
            )
        if recorded is not None:
            return Served(recorded.status, recorded.body(), replayed=True)
        try:
            status, body = 200, entry.handler(entry.owner(self), **kwargs)
        except ServiceError as error:
            status, body = error.status, {"error": error.message}
        except Exception as error:  # a bug, as in `serve`; recorded all the same
            log.exception("bug in the service handling %s %s", entry.method, entry.path)
            status, body = 500, _bug(entry.path, error)
        if self._keys is None:
            self._keys = KeyTable()
        self._keys.record(key, KeyedAnswer.of(fingerprint, status, body))
        return Served(status, body)


def _bug(endpoint: str, error: Exception) -> dict[str, Any]:
    return {"error": f"internal error in {endpoint!r}: {type(error).__name__}"}
