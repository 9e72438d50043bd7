"""The memory store: the live episodes of one process, as objects (EPISODE_STORE=memory).

Episodes are kept in least-recently-used order, so the longest-idle episode is always
the first one, expiry is a scan from the front, and making room costs O(1). Each
keeps the actions it was stepped with, so that a retried step (same `step_index`)
is answered again by replay instead of being applied twice. Nothing is serialised:
this is the default store, and it costs a step nothing it did not cost before.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from openenv.core.env_server.types import Action

from ..episode import EpisodeEnvironment
from ..sessions import (
    NO_EPISODE,
    EpisodeNotFoundError,
    EpisodeStore,
    Stepped,
    check_step_index,
    id_taken,
    not_found,
    taken_by_another,
)
from .log import Header, entry_of, replay, same_action


class _Live:
    """One held episode: the environment, when it was last used, the actions it took."""

    __slots__ = ("env", "last_used", "actions")

    def __init__(self, env: EpisodeEnvironment, now: float) -> None:
        self.env = env
        self.last_used = now
        self.actions: list[Action] = []


class MemoryStore(EpisodeStore):
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
        self._episodes: OrderedDict[str, _Live] = OrderedDict()
        self._finished: OrderedDict[str, None] = OrderedDict()
        self._latest: dict[str | None, str] = {}
        self.evicted = 0
        self.expired = 0

    def __len__(self) -> int:
        return len(self._episodes)

    def __contains__(self, episode_id: str) -> bool:
        return episode_id in self._episodes

    async def add(self, env: EpisodeEnvironment, latest: bool = True) -> None:
        now = self._clock()
        self._expire(now)
        if env.episode_id in self._episodes:
            raise id_taken(env.episode_id)
        while len(self._episodes) >= self.max_live:
            victim = next(iter(self._finished), None) or next(iter(self._episodes))
            self._drop(victim)
            self.evicted += 1
        self._episodes[env.episode_id] = _Live(env, now)
        if latest:
            self._latest[env.env_name] = env.episode_id
            self._latest[None] = env.episode_id
        self._note_progress(env)

    def _live(self, episode_id: str, env_names: tuple[str, ...]) -> _Live:
        """The held episode `episode_id` of one of `env_names`, marked as just used."""
        live = self._episodes.get(episode_id)
        now = self._clock()
        if live is not None and now - live.last_used > self.ttl_seconds:
            self._drop(episode_id)
            self.expired += 1
            live = None
        if live is None or live.env.env_name not in env_names:
            raise not_found(episode_id, env_names, self.ttl_seconds)
        live.last_used = now
        self._episodes.move_to_end(episode_id)
        return live

    async def lookup(self, episode_id: str, env_names: tuple[str, ...]) -> EpisodeEnvironment:
        return self._live(episode_id, env_names).env

    async def get(self, episode_id: str, env_names: tuple[str, ...]) -> EpisodeEnvironment:
        return self._live(episode_id, env_names).env

    async def step(
        self, env: EpisodeEnvironment, action: Action, step_index: int | None
    ) -> Stepped:
        live = self._episodes.get(env.episode_id)
        if live is None or live.env is not env:  # dropped since `lookup`
            raise not_found(env.episode_id, (env.env_name,), self.ttl_seconds)
        if not check_step_index(env.episode_id, step_index, env.step_count):
            assert step_index is not None
            return self._answer_again(live, action, step_index)
        observation = env.step(action)
        live.actions.append(action)
        self._note_progress(env)
        return env, observation

    def _answer_again(self, live: _Live, action: Action, step_index: int) -> Stepped:
        """A retried step: its answer again, by replay, if it is the action that was taken."""
        taken = live.actions[step_index - 1]
        if not same_action(entry_of(taken), entry_of(action)):
            raise taken_by_another(live.env.episode_id, step_index)
        _, observation = replay(type(live.env), Header.of(live.env), live.actions[:step_index])
        return live.env, observation

    async def current(self, episode_id: str, env_names: tuple[str, ...]) -> Stepped:
        live = self._live(episode_id, env_names)
        _, observation = replay(type(live.env), Header.of(live.env), live.actions)
        return live.env, observation

    async def latest_id(self, env_name: str | None) -> str:
        episode_id = self._latest.get(env_name)
        if episode_id is None or episode_id not in self._episodes:
            raise EpisodeNotFoundError(NO_EPISODE)
        return episode_id

    async def drop(self, episode_id: str) -> None:
        self._drop(episode_id)

    def _note_progress(self, env: EpisodeEnvironment) -> None:
        """Mark a finished episode as the first to drop when room is needed."""
        if env.done and env.episode_id in self._episodes:
            self._finished[env.episode_id] = None

    def _expire(self, now: float) -> None:
        while self._episodes:
            episode_id, live = next(iter(self._episodes.items()))
            if now - live.last_used <= self.ttl_seconds:
                return
            self._drop(episode_id)
            self.expired += 1

    def _drop(self, episode_id: str) -> None:
        self._episodes.pop(episode_id, None)
        self._finished.pop(episode_id, None)
