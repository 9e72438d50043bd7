"""The memory store: the live episodes of one process, as objects (EPISODE_STORE=memory).

Episodes are kept in least-recently-used order, so the longest-idle episode is always
the first one and expiry is a scan from the front; each client's episodes are kept the
same way, so making room at the cap (an episode of the client holding the most) costs
a look at the clients, not at the episodes. A retried step (same `step_index`)
is answered again by replaying the episode's own action entries (server/lifecycle/episode.py),
not applied twice: the store keeps no copy of its own.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from ...openenv_types import Action
from ..lifecycle.episode import EpisodeEnvironment
from ..lifecycle.sessions import (
    NO_EPISODE,
    EpisodeNotFoundError,
    EpisodeStore,
    Stepped,
    check_step_index,
    id_taken,
    not_found,
    not_owned,
    taken_by_another,
)
from .log import Header, Replayer, entry_of, same_action


class _Live:
    """One held episode: the environment, when it was last used, who
    owns it and whose share it counts in."""

    __slots__ = ("env", "last_used", "owner", "client")

    def __init__(self, env: EpisodeEnvironment, now: float, owner: str, client: str) -> None:
        self.env = env
        self.last_used = now
        self.owner = owner
        self.client = client


class _Share:
    """One client's held episodes, longest idle first, and its finished ones, earliest first."""

    __slots__ = ("held", "finished")

    def __init__(self) -> None:
        self.held: OrderedDict[str, None] = OrderedDict()
        self.finished: OrderedDict[str, None] = OrderedDict()


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
        self._shares: dict[str, _Share] = {}
        self._latest: dict[str | None, str] = {}
        self.evicted = 0
        self.expired = 0

    def __len__(self) -> int:
        return len(self._episodes)

    def __contains__(self, episode_id: str) -> bool:
        return episode_id in self._episodes

    async def add(
        self, env: EpisodeEnvironment, owner: str, client: str, latest: bool = True
    ) -> None:
        now = self._clock()
        self._expire(now)
        if env.episode_id in self._episodes:
            raise id_taken(env.episode_id)
        while len(self._episodes) >= self.max_live:
            self._drop(self._victim())
            self.evicted += 1
        self._episodes[env.episode_id] = _Live(env, now, owner, client)
        self._share(client).held[env.episode_id] = None
        self._note_latest(env, latest)

    def _victim(self) -> str:
        """The episode to drop at the cap: the heaviest client's first finished, else its
        longest idle (O(clients): it runs only at the cap)."""
        share = max(self._shares.values(), key=lambda s: len(s.held))
        return next(iter(share.finished), None) or next(iter(share.held))

    def _share(self, client: str) -> _Share:
        share = self._shares.get(client)
        if share is None:
            share = self._shares[client] = _Share()
        return share

    def _note_latest(self, env: EpisodeEnvironment, latest: bool) -> None:
        if latest:
            self._latest[env.env_name] = env.episode_id
            self._latest[None] = env.episode_id

    async def replace(self, env: EpisodeEnvironment, owner: str, latest: bool = True) -> None:
        live = self._held(env.episode_id)
        if live is None or live.owner != owner:
            raise not_owned(env.episode_id)
        replaced = _Live(env, live.last_used, owner, live.client)
        self._episodes[env.episode_id] = replaced
        self._shares[live.client].finished.pop(env.episode_id, None)
        self._touch(replaced, self._clock())
        self._note_latest(env, latest)

    def _held(self, episode_id: str) -> _Live | None:
        """The held episode `episode_id`, unless it expired (then it is dropped)."""
        live = self._episodes.get(episode_id)
        if live is not None and self._clock() - live.last_used > self.ttl_seconds:
            self._drop(episode_id)
            self.expired += 1
            return None
        return live

    def _touch(self, live: _Live, now: float) -> None:
        episode_id = live.env.episode_id
        live.last_used = now
        self._episodes.move_to_end(episode_id)
        self._shares[live.client].held.move_to_end(episode_id)

    def _live(self, episode_id: str, env_names: tuple[str, ...], owner: str | None = None) -> _Live:
        """The held episode `episode_id` of one of `env_names` (and of `owner`, if named),
        marked as just used."""
        live = self._held(episode_id)
        if live is None or live.env.env_name not in env_names:
            raise not_found(episode_id, env_names, self.ttl_seconds)
        if owner is not None and live.owner != owner:
            raise not_found(episode_id, env_names, self.ttl_seconds)
        self._touch(live, self._clock())
        return live

    async def lookup(self, episode_id: str, env_names: tuple[str, ...]) -> EpisodeEnvironment:
        return self._live(episode_id, env_names).env

    async def get(
        self, episode_id: str, env_names: tuple[str, ...], owner: str | None = None
    ) -> EpisodeEnvironment:
        return self._live(episode_id, env_names, owner).env

    async def step(
        self, env: EpisodeEnvironment, action: Action, step_index: int | None
    ) -> Stepped:
        live = self._episodes.get(env.episode_id)
        if live is None or live.env is not env:  # dropped or replaced since `lookup`
            raise not_found(env.episode_id, (env.env_name,), self.ttl_seconds)
        if not check_step_index(env.episode_id, step_index, env.step_count):
            assert step_index is not None
            return await self._answer_again(live, action, step_index)
        observation = env.step(action)
        if env.done:
            self._shares[live.client].finished[env.episode_id] = None
        return env, observation

    async def _answer_again(self, live: _Live, action: Action, step_index: int) -> Stepped:
        """A retried step: its answer again, by replay, if it is the action that was taken."""
        env = live.env
        if not same_action(env.entries[step_index - 1].decode(), entry_of(action)):
            raise taken_by_another(env.episode_id, step_index)
        _, observation = await self._replay(env, step_index)
        return env, observation

    async def current(self, episode_id: str, env_names: tuple[str, ...]) -> Stepped:
        env = self._live(episode_id, env_names).env
        _, observation = await self._replay(env, env.step_count)
        return env, observation

    @staticmethod
    async def _replay(env: EpisodeEnvironment, steps: int) -> Stepped:
        """The episode again, after its first `steps` steps, and their last observation."""
        header, replayer = Header.of(env), Replayer((type(env),))
        await replayer.prepare(header)
        return replayer.replay(header, env.entries[:steps])

    async def hand_over(
        self, episode_id: str, owner: str, to: str, client: str | None = None
    ) -> bool:
        live = self._held(episode_id)
        if live is None or live.owner != owner:
            return False
        live.owner = to
        if client is not None and client != live.client:
            old = self._shares[live.client]
            finished = episode_id in old.finished
            old.finished.pop(episode_id, None)
            old.held.pop(episode_id, None)
            if not old.held:
                del self._shares[live.client]
            live.client = client
            self._share(client).held[episode_id] = None
            if finished:
                self._shares[client].finished[episode_id] = None
        self._touch(live, self._clock())
        return True

    async def latest_id(self, env_name: str | None) -> str:
        episode_id = self._latest.get(env_name)
        if episode_id is None or episode_id not in self._episodes:
            raise EpisodeNotFoundError(NO_EPISODE)
        return episode_id

    async def drop(self, episode_id: str, owner: str) -> bool:
        live = self._held(episode_id)
        if live is None or live.owner != owner:
            return False
        self._drop(episode_id)
        return True

    def _expire(self, now: float) -> None:
        while self._episodes:
            episode_id, live = next(iter(self._episodes.items()))
            if now - live.last_used <= self.ttl_seconds:
                return
            self._drop(episode_id)
            self.expired += 1

    def _drop(self, episode_id: str) -> None:
        live = self._episodes.pop(episode_id, None)
        if live is None:
            return
        share = self._shares[live.client]
        share.held.pop(episode_id, None)
        share.finished.pop(episode_id, None)
        if not share.held:
            del self._shares[live.client]
