"""MCP sessions: an MCP session is an episode of the shared store, its id the episode's.

The id is the episode's unguessable 128-bit token, so it works as a capability, and
whatever shares the store shares the sessions. Only an episode an MCP session started is
a session (server/lifecycle/owners.py): the id of an HTTP or WebSocket episode names none.
This module holds what the store does not: who is speaking (`Caller`), how a new session's
task is named (`new_session_data`), and which sessions have a WebSocket attached in this
process (`Attachments`), since OpenEnv defers closing such a session until its WebSocket
detaches.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..lifecycle.episodes import InvalidRequestError, seed_from_text
from ..lifecycle.owners import UNKNOWN_CLIENT

NEW_SESSION_KEYS = ("env", "task_id", "seed", "split", "index", "faults")
"""What may name a new session's task: the MCP endpoint URL's query, or the params of
`openenv/session/create` (a Task API split and index, or a task and seed; and the fault
level of its services)."""
NUMBER_KEYS = ("seed", "index")
PARAMS_META = "_meta"
"""The key MCP reserves in every request's params for metadata; never an argument."""


@dataclass(frozen=True)
class Caller:
    """Who sends an MCP message.

    `session_id` is the session the transport names: the `Mcp-Session-Id` header over
    HTTP, the attached session over a WebSocket (a request's `params.session_id`, as
    OpenEnv's client sends it, names one too). `defaults` is the endpoint URL's query,
    which names the task of a session started by `initialize` or `openenv/session/create`.
    `client` is the network identity a new session counts for (server/lifecycle/owners.py).
    """

    session_id: str | None = None
    over_websocket: bool = False
    defaults: Mapping[str, str] = field(default_factory=dict)
    client: str = UNKNOWN_CLIENT


def new_session_data(defaults: Mapping[str, str], params: Mapping[str, Any]) -> dict[str, Any]:
    """The reset data of a new session: the URL's query, overridden by the request's params.

    A query value is text: a seed written in digits is read as its number (anything
    else is left for the reset's validation to refuse by name).
    """
    unknown = sorted(set(defaults) - set(NEW_SESSION_KEYS))
    if unknown:
        raise InvalidRequestError(
            f"unknown query parameter(s) {', '.join(map(repr, unknown))} on the MCP endpoint; "
            f"a session's task is named by {', '.join(NEW_SESSION_KEYS)}"
        )
    data: dict[str, Any] = dict(defaults)
    for key in NUMBER_KEYS:
        if key in data:
            data[key] = seed_from_text(data[key])
    unknown = sorted(set(params) - {*NEW_SESSION_KEYS, PARAMS_META})
    if unknown:
        raise InvalidRequestError(
            f"unknown param(s) {', '.join(map(repr, unknown))}; a new session takes "
            + ", ".join(NEW_SESSION_KEYS)
        )
    data.update({key: params[key] for key in NEW_SESSION_KEYS if key in params})
    return data


class Attachments:
    """The sessions a WebSocket of this process is attached to (`/ws?session_id=`)."""

    def __init__(self) -> None:
        self._attached: set[str] = set()
        self._closing: set[str] = set()

    @classmethod
    def shared_by(cls, owner: object) -> Attachments:
        """The one registry of everything serving `owner` (the app's shared episode store)."""
        found = _REGISTRIES.get(owner)
        if found is None:
            found = _REGISTRIES[owner] = cls()
        return found

    def attach(self, session_id: str) -> bool:
        """Attach a WebSocket; False if one already is."""
        if session_id in self._attached:
            return False
        self._attached.add(session_id)
        return True

    def detach(self, session_id: str) -> bool:
        """Detach the WebSocket; True if a close was asked for meanwhile (close it now)."""
        self._attached.discard(session_id)
        if session_id in self._closing:
            self._closing.discard(session_id)
            return True
        return False

    def defer_close(self, session_id: str) -> bool:
        """Mark an attached session to close when its WebSocket detaches; False if none is."""
        if session_id not in self._attached:
            return False
        self._closing.add(session_id)
        return True


_REGISTRIES: weakref.WeakKeyDictionary[object, Attachments] = weakref.WeakKeyDictionary()
