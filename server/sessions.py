"""Live HTTP episodes: lookup by id, idle expiry and a cap on how many live at once.

Every stateful HTTP route of every environment goes through one `EpisodeStore`.
Episodes are kept in least-recently-used order, so the longest-idle episode is
always the first one, expiry is a scan from the front, and making room costs
O(1). At the cap the store drops finished episodes first (oldest first), then
the longest-idle live one, so a client that plays episodes back to back never
sees an error; a dropped or expired episode answers 404 afterwards. An id is
never reused while the store holds it: adding a second episode under it is a 409.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from ..error_messages import shown
from .episode import EpisodeEnvironment, EpisodeError


class EpisodeNotFoundError(EpisodeError):
    status = 404


class EpisodeIdRequiredError(EpisodeError):
    status = 400


class EpisodeIdTakenError(EpisodeError):
    status = 409


class EpisodeStore:
    """The live episodes of one server process (the event loop is its only user)."""

    def __init__(
        self,
        max_live: int,
        ttl_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_live < 1:
            raise ValueError("max_live must be at least 1")
        self.max_live = max_live
        self.ttl_seconds = ttl_seconds
        self._clock = clock
        self._episodes: OrderedDict[str, tuple[EpisodeEnvironment, float]] = OrderedDict()
        self._finished: OrderedDict[str, None] = OrderedDict()
        self._latest: dict[str | None, str] = {}
        self.evicted = 0
        self.expired = 0

    def __len__(self) -> int:
        return len(self._episodes)

    def __contains__(self, episode_id: str) -> bool:
        return episode_id in self._episodes

    def ensure_free(self, episode_id: str) -> None:
        """Refuse (409) an id the store still holds: a new episode never replaces another."""
        self._expire(self._clock())
        self._refuse_held(episode_id)

    def add(self, env: EpisodeEnvironment) -> None:
        """Register a freshly reset episode, making room if the store is full."""
        now = self._clock()
        self._expire(now)
        self._refuse_held(env.episode_id)
        while len(self._episodes) >= self.max_live:
            victim = next(iter(self._finished), None) or next(iter(self._episodes))
            self._drop(victim)
            self.evicted += 1
        self._episodes[env.episode_id] = (env, now)
        self._latest[env.env_name] = env.episode_id
        self._latest[None] = env.episode_id
        self.note_progress(env)

    def get(self, episode_id: str, env_names: tuple[str, ...]) -> EpisodeEnvironment:
        """The live episode `episode_id` of one of `env_names`, marked as just used."""
        entry = self._episodes.get(episode_id)
        now = self._clock()
        if entry is not None and now - entry[1] > self.ttl_seconds:
            self._drop(episode_id)
            self.expired += 1
            entry = None
        if entry is None or entry[0].env_name not in env_names:
            raise EpisodeNotFoundError(
                f"no live {' or '.join(env_names)} episode with id {shown(episode_id)}: "
                "it never existed, expired after "
                f"{self.ttl_seconds:g}s idle, or was dropped to make room; call /reset"
            )
        self._episodes[episode_id] = (entry[0], now)
        self._episodes.move_to_end(episode_id)
        return entry[0]

    def remove(self, episode_id: str) -> None:
        """Drop an episode on its owner's request (an MCP session's close); a 404 once gone."""
        self._drop(episode_id)

    def latest_id(self, env_name: str | None) -> str:
        """The id of the most recently reset episode (of `env_name`, or of any env)."""
        episode_id = self._latest.get(env_name)
        if episode_id is None or episode_id not in self._episodes:
            raise EpisodeNotFoundError("no episode is running: call /reset first")
        return episode_id

    def note_progress(self, env: EpisodeEnvironment) -> None:
        """Mark a finished episode as the first to drop when room is needed."""
        if env.done and env.episode_id in self._episodes:
            self._finished[env.episode_id] = None

    def _refuse_held(self, episode_id: str) -> None:
        if episode_id in self._episodes:
            raise EpisodeIdTakenError(
                f"episode_id {shown(episode_id)} belongs to an episode that is still held "
                "(live, or finished and not yet dropped): pick another id, or reset without "
                "one to get a fresh random id"
            )

    def _expire(self, now: float) -> None:
        while self._episodes:
            episode_id, (_, last_used) = next(iter(self._episodes.items()))
            if now - last_used <= self.ttl_seconds:
                return
            self._drop(episode_id)
            self.expired += 1

    def _drop(self, episode_id: str) -> None:
        self._episodes.pop(episode_id, None)
        self._finished.pop(episode_id, None)
