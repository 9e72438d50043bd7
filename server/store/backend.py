"""What a durable store asks of its backend (SQLite, Redis): five operations on logs.

A log is a list: element 0 is the episode's header, element k the entry of step k.
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
    reused): the new episode's whole log, header first."""


Reply = tuple[Status, Elements]


class Backend(ABC):
    """The shared, durable half of a durable store; see DurableStore for the other half."""

    url: str
    """Where it is, without credentials (for messages)."""

    @abstractmethod
    async def create(self, episode_id: str, header: str, env_name: str, latest: bool) -> bool:
        """Start a log with `header`, making room at the cap (finished episodes first, then
        the longest idle); False, and nothing changed, if the id is held. `latest`: it is
        now the latest episode of `env_name` and of all."""

    @abstractmethod
    async def append(
        self, episode_id: str, steps: int, entry: str, done: bool, header: str
    ) -> Reply:
        """Append `entry` as step `steps + 1` if the log of the episode that `header` starts
        has exactly `steps` steps (`done`: the step finished the episode)."""

    @abstractmethod
    async def read(self, episode_id: str, start: int, header: str | None) -> Reply:
        """The elements from index `start` on (0: the header first). `header`: the one the
        caller knows (REPLACED if the id now names another episode); None: any."""

    @abstractmethod
    async def latest(self, scope: str) -> str | None:
        """The id of the latest episode reset of env `scope` (or `*`: of any env)."""

    @abstractmethod
    async def drop(self, episode_id: str) -> None:
        """Delete the episode's log."""

    @abstractmethod
    async def close(self) -> None:
        """Release the connection (at shutdown)."""
