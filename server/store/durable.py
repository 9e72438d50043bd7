"""A durable store: the logs in a shared backend, the rebuilt episodes in a local cache.

Any process serves any step of any episode. A process that has not seen an episode
loads its log (one read) and replays it; after that it keeps the rebuilt episode in
its cache, and a step costs one round trip: the step is computed on a fork of the
cached episode, then appended only if the log still has the length the cache has
(optimistic concurrency). If it does not, another process stepped the episode
meanwhile: the answer carries the steps this cache missed, which are replayed onto
it, and the step is computed again on the new state (up to `MAX_ATTEMPTS` times,
then 409). Only a recorded step is answered, and only a recorded step enters the
cache: a fork that was not recorded is thrown away.

A step sent with `step_index` names the step it means. If that step is already in
the log with the same action (a retry whose first answer was lost), it is answered
again by replaying the log up to it, and not applied twice; with another action it
is a 409. Without `step_index`, steps sent at once to one process take turns (a lock per
episode in flight), so each applies once, one after the other; steps sent at once to two
processes race for the append, and the loser retries on the new state as above.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from time import monotonic

from ...openenv_types import Action
from ..lifecycle.episode import EpisodeEnvironment
from ..lifecycle.sessions import (
    NO_EPISODE,
    EpisodeNotFoundError,
    EpisodeStore,
    StepConflictError,
    Stepped,
    StoreUnavailableError,
    check_step_index,
    id_taken,
    not_found,
    not_owned,
    taken_by_another,
)
from .backend import Backend, Elements, Reply, Status
from .log import Header, Replayer, catch_up, entry_of, replay_version, same_action

MAX_ATTEMPTS = 4
"""How often a step is computed again after other processes stepped its episode first."""


class _Cached:
    """A rebuilt episode as this process last saw it recorded, and its log's header."""

    __slots__ = ("env", "header", "last_used")

    def __init__(self, env: EpisodeEnvironment, header: str, now: float) -> None:
        self.env = env
        self.header = header
        self.last_used = now


class _Turn:
    """The lock of one episode's steps in this process, and how many steps hold or await it."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class DurableStore(EpisodeStore):
    """Episodes as logs in `backend`, served from a per-process cache of rebuilt episodes."""

    def __init__(
        self,
        backend: Backend,
        envs: Iterable[type[EpisodeEnvironment]],
        max_live: int,
        ttl_seconds: float,
    ) -> None:
        if max_live < 1:
            raise ValueError("max_live must be at least 1")
        self.backend = backend
        self.replayer = Replayer(envs)
        replay_version()  # the code as it starts, not as the disk holds it at the first step
        self.max_live = max_live
        self.ttl_seconds = ttl_seconds
        self._cache: OrderedDict[str, _Cached] = OrderedDict()
        self._turns: dict[str, _Turn] = {}
        """Episodes with steps in flight in this process."""

    # ----------------------------------------------------------------- cache

    def _install(self, env: EpisodeEnvironment, header: str) -> _Cached:
        """Cache `env` unless the cache already holds this episode further along."""
        now = monotonic()
        cached = self._cache.get(env.episode_id)
        if cached is None or cached.header != header or cached.env.step_count < env.step_count:
            cached = self._cache[env.episode_id] = _Cached(env, header, now)
        cached.last_used = now
        self._cache.move_to_end(env.episode_id)
        self._trim(now)
        return cached

    def _trim(self, now: float) -> None:
        """At most `max_live` cached, none idle past the TTL (the backend has dropped those)."""
        while self._cache:
            first = next(iter(self._cache.values()))
            if len(self._cache) <= self.max_live and now - first.last_used <= self.ttl_seconds:
                return
            self._cache.popitem(last=False)

    async def _rebuild(self, episode_id: str, elements: Elements) -> _Cached:
        """The episode from its whole log (header first), refused if another version wrote it."""
        header = Header.from_json(elements[0], episode_id)
        await self.replayer.prepare(header)
        env, _ = self.replayer.replay(header, elements[1:])
        return self._install(env, elements[0].decode())

    def _advance(self, cached: _Cached, steps: int, entries: Sequence[bytes]) -> _Cached:
        """`cached` moved on by the logged `entries` of steps `steps + 1`, ... (on a fork)."""
        skip = cached.env.step_count - steps
        if skip >= len(entries):
            return cached
        assert skip >= 0, "the cache only ever holds recorded states"
        twin = cached.env.fork()
        catch_up(twin, entries[skip:])
        return self._install(twin, cached.header)

    def _forget(self, episode_id: str) -> None:
        self._cache.pop(episode_id, None)

    # ------------------------------------------------------------ operations

    async def _read(
        self, episode_id: str, start: int, header: str | None, owner: str | None = None
    ) -> Reply:
        """A backend read: whatever became of it, it recorded nothing (a request that fails
        at its read applied nothing, even if the read reached the store)."""
        try:
            return await self.backend.read(episode_id, start, header, owner)
        except StoreUnavailableError as exc:
            raise exc.with_outcome("not_applied") from None

    async def add(
        self, env: EpisodeEnvironment, owner: str, client: str, latest: bool = True
    ) -> None:
        header = Header.of(env, incarnation=secrets.token_hex(8)).to_json()
        created = await self.backend.create(
            env.episode_id, header, env.env_name, latest, owner, client
        )
        if not created:
            raise id_taken(env.episode_id)
        self._forget(env.episode_id)
        self._install(env, header)

    async def replace(self, env: EpisodeEnvironment, owner: str, latest: bool = True) -> None:
        header = Header.of(env, incarnation=secrets.token_hex(8)).to_json()
        status = await self.backend.replace(env.episode_id, header, env.env_name, latest, owner)
        if status is not Status.DONE:
            raise not_owned(env.episode_id)
        self._forget(env.episode_id)
        self._install(env, header)

    async def lookup(self, episode_id: str, env_names: tuple[str, ...]) -> EpisodeEnvironment:
        cached = self._cache.get(episode_id)
        if cached is None:
            return await self.get(episode_id, env_names)
        if cached.env.env_name not in env_names:
            raise not_found(episode_id, env_names, self.ttl_seconds)
        return cached.env

    async def get(
        self, episode_id: str, env_names: tuple[str, ...], owner: str | None = None
    ) -> EpisodeEnvironment:
        cached = await self._refresh(episode_id, env_names, owner)
        return cached.env

    async def _refresh(
        self, episode_id: str, env_names: tuple[str, ...], owner: str | None = None
    ) -> _Cached:
        """The episode as recorded now (one read: the steps this cache has not seen)."""
        cached = self._cache.get(episode_id)
        if cached is None:
            status, elements = await self._read(episode_id, 0, None, owner)
        else:
            start = cached.env.step_count + 1
            status, elements = await self._read(episode_id, start, cached.header, owner)
        if status is Status.FOREIGN:
            raise not_found(episode_id, env_names, self.ttl_seconds)
        if status is Status.GONE:
            self._forget(episode_id)
            raise not_found(episode_id, env_names, self.ttl_seconds)
        if cached is None or status is Status.REPLACED:
            cached = await self._rebuild(episode_id, elements)
        else:
            cached = self._advance(self._cache.get(episode_id) or cached, start - 1, elements)
        if cached.env.env_name not in env_names:
            raise not_found(episode_id, env_names, self.ttl_seconds)
        return cached

    async def step(
        self, env: EpisodeEnvironment, action: Action, step_index: int | None
    ) -> Stepped:
        """This process's steps of one episode take turns (one lock per episode with steps
        in flight, dropped after the last), so they never race each other for the append."""
        episode_id = env.episode_id
        turn = self._turns.get(episode_id)
        if turn is None:
            turn = self._turns[episode_id] = _Turn()
        turn.users += 1
        try:
            async with turn.lock:
                return await self._step(env, action, step_index)
        finally:
            turn.users -= 1
            if not turn.users:
                del self._turns[episode_id]

    async def _step(
        self, env: EpisodeEnvironment, action: Action, step_index: int | None
    ) -> Stepped:
        episode_id, names = env.episode_id, (env.env_name,)
        entry = entry_of(action)
        cached = self._cache.get(episode_id) or await self._refresh(episode_id, names)
        if step_index is not None and step_index > cached.env.step_count + 1:
            cached = await self._refresh(episode_id, names)  # it may be ahead of this cache only
        for _ in range(MAX_ATTEMPTS):
            if type(cached.env) is not type(env):  # the id was reused by another env's episode
                raise not_found(episode_id, names, self.ttl_seconds)
            steps = cached.env.step_count
            if not check_step_index(episode_id, step_index, steps):
                assert step_index is not None
                return await self._answer_again(cached, entry, step_index)
            twin = cached.env.fork()
            observation = twin.step(action)  # a finished episode raises here: nothing recorded
            try:
                status, elements = await self.backend.append(
                    episode_id, steps, entry, twin.done, cached.header
                )
            except StoreUnavailableError as exc:
                if exc.outcome == "unknown":
                    raise exc.with_outcome("unknown", steps + 1) from None
                raise
            if status is Status.DONE:
                self._install(twin, cached.header)
                return twin, observation
            if status is Status.GONE:
                self._forget(episode_id)
                raise not_found(episode_id, names, self.ttl_seconds)
            if status is Status.REPLACED:
                cached = await self._rebuild(episode_id, elements)
            else:
                cached = self._advance(self._cache.get(episode_id) or cached, steps, elements)
        raise StepConflictError(
            f"episode {episode_id} was stepped by others {MAX_ATTEMPTS} times while this step "
            "was being applied: nothing was applied; send it again"
        )

    async def _answer_again(self, cached: _Cached, entry: str, step_index: int) -> Stepped:
        """A step already in the log: its answer again, by replay, if its action is this one."""
        env = cached.env
        status, elements = await self._read(env.episode_id, 0, cached.header)
        if status is not Status.DONE:  # gone, or another episode now: this step is not in it
            raise not_found(env.episode_id, (env.env_name,), self.ttl_seconds)
        if not same_action(elements[step_index].decode(), entry):
            raise taken_by_another(env.episode_id, step_index)
        header = Header.from_json(elements[0], env.episode_id)
        await self.replayer.prepare(header)
        _, observation = self.replayer.replay(header, elements[1 : step_index + 1])
        return env, observation

    async def current(self, episode_id: str, env_names: tuple[str, ...]) -> Stepped:
        status, elements = await self._read(episode_id, 0, None)
        if status is Status.GONE:
            self._forget(episode_id)
            raise not_found(episode_id, env_names, self.ttl_seconds)
        header = Header.from_json(elements[0], episode_id)
        if header.env not in env_names:
            raise not_found(episode_id, env_names, self.ttl_seconds)
        await self.replayer.prepare(header)
        env, observation = self.replayer.replay(header, elements[1:])
        self._install(env.fork(), elements[0].decode())
        return env, observation

    async def latest_id(self, env_name: str | None) -> str:
        try:
            episode_id = await self.backend.latest(env_name or "*")
        except StoreUnavailableError as exc:
            raise exc.with_outcome("not_applied") from None
        if episode_id is None:
            raise EpisodeNotFoundError(NO_EPISODE)
        return episode_id

    async def hand_over(
        self, episode_id: str, owner: str, to: str, client: str | None = None
    ) -> bool:
        return await self.backend.hand_over(episode_id, owner, to, client)

    async def drop(self, episode_id: str, owner: str) -> bool:
        dropped = await self.backend.drop(episode_id, owner)
        if dropped:
            self._forget(episode_id)
        return dropped

    async def close(self) -> None:
        await self.backend.close()
