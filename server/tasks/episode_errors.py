"""What a request that an episode cannot serve raises: each error carries its HTTP status.

Below the environments (server/lifecycle/episode.py re-exports them) so that the split
catalogue (server/tasks/splits.py), which the environments use, raises the same errors
every transport already answers.
"""

from __future__ import annotations

from typing import Any, ClassVar


class EpisodeError(Exception):
    """A request that the episode cannot serve; `status` is its HTTP status."""

    status: ClassVar[int] = 400

    def details(self) -> dict[str, Any]:
        """Machine-readable fields that every transport's error reply carries beside the
        message (e.g. the outcome of a step the store may have recorded)."""
        return {}


class UnknownTaskError(EpisodeError):
    status = 404


class EpisodeFinishedError(EpisodeError):
    status = 409


class EpisodeNotStartedError(EpisodeError):
    status = 409


class FaultLevelError(EpisodeError):
    """A `faults` level the environment does not have (only ServiceBench injects faults)."""

    status = 422
