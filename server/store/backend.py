"""What a durable store asks of its backend (SQLite, Redis): seven operations on logs.

A log is a list: element 0 is the episode's header, element k the entry of step k.
Beside it the backend keeps who owns the episode and whose share of the cap it counts in
(server/lifecycle/owners.py), and checks the owner in the operation that restarts or ends it.
Every operation that names an episode also marks it as just used (its idle timer
restarts), and answers `GONE` if the episode expired, was dropped or never existed.
Each backend does each operation atomically (a Lua script, an SQLite transaction), so
processes sharing a backend never see a half-applied step.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import IntEnum

Elements = list[bytes]


class Status(IntEnum):
    """How an append or a read went; the elements that come with it."""

    GONE = 0
    """No such episode (expired, dropped, never existed): no elements."""
    DONE = 1
    """Appended (no elements), or read: the elements from the index asked for."""
    STALE = 2
    """Not appended: the log is longer than expected. The elements from the index the
    caller expected to append at: the steps it has not seen, to replay before retrying."""
    REPLACED = 3
    """The id now names another episode (the one the caller knew is gone and its id was
    reused, or its owner restarted it): the new episode's whole log, header first."""
    FOREIGN = 4
    """Not done: the episode is held, but not by the owner the operation named."""


Reply = tuple[Status, Elements]


class Backend(ABC):
    """The shared, durable half of a durable store; see DurableStore for the other half."""

    url: str
    """Where it is, without credentials (for messages)."""

    @abstractmethod
    async def create(
        self, episode_id: str, header: str, env_name: str, latest: bool, owner: str, client: str
    ) -> bool:
        """Start a log with `header`, owned by `owner` and counted in `client`'s share, making
        room at the cap (an episode of the client holding the most: its finished first, then
        its longest idle); False, and nothing changed, if the id is held. `latest`: it is now
        the latest episode of `env_name` and of all."""

    @abstractmethod
    async def replace(
        self, episode_id: str, header: str, env_name: str, latest: bool, owner: str
    ) -> Status:
        """Start the log of a held episode of `owner`'s afresh with `header` (its steps
        deleted), in one operation: DONE, GONE, or FOREIGN (another's: nothing changed)."""

    @abstractmethod
    async def append(
        self, episode_id: str, steps: int, entry: str, done: bool, header: str
    ) -> Reply:
        """Append `entry` as step `steps + 1` if the log of the episode that `header` starts
        has exactly `steps` steps (`done`: the step finished the episode)."""

    @abstractmethod
    async def read(
        self, episode_id: str, start: int, header: str | None, owner: str | None = None
    ) -> Reply:
        """The elements from index `start` on (0: the header first). `header`: the one the
        caller knows (REPLACED if the id now names another episode); None: any. `owner`:
        FOREIGN (and the episode not touched) unless it is that owner's."""

    @abstractmethod
    async def hand_over(self, episode_id: str, owner: str, to: str, client: str | None) -> bool:
        """Make the episode `to`'s (and `client`'s, unless None) if it is `owner`'s;
        whether it was."""

    @abstractmethod
    async def latest(self, scope: str) -> str | None:
        """The id of the latest episode reset of env `scope` (or `*`: of any env)."""

    @abstractmethod
    async def drop(self, episode_id: str, owner: str) -> bool:
        """Delete the episode's log if it is `owner`'s; whether it was."""

    @abstractmethod
    async def close(self) -> None:
        """Release the connection (at shutdown)."""
