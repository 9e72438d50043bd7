"""The episode stores, chosen by `EPISODE_STORE` (server/settings.py).

* `memory` (memory.py): the live episodes of one process, as objects; the default.
* `sqlite:///ABSOLUTE/PATH.db` (sqlite.py): durable on one host, shared by its processes.
* a Redis URL (redis.py): durable, shared by every process and replica that opens it.

The durable ones keep each episode as a header plus its action log (log.py) and serve it
from a per-process cache of rebuilt episodes (durable.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..lifecycle.episode import EpisodeEnvironment
from ..lifecycle.sessions import EpisodeStore
from ..settings import Settings
from .backend import Backend
from .memory import MemoryStore

REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def describe(url: str) -> str:
    """The store's URL without credentials, for messages and logs."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, path = rest.partition("/")
    host = authority.rpartition("@")[2]
    return f"{scheme}://{host}{slash}{path.partition('?')[0]}"


def check_store_url(url: str) -> None:
    """Refuse a store URL that cannot work, with a clear ValueError, without opening anything:
    the server checks it before it serves (and its command line before it starts a worker)."""
    if url == "memory":
        return
    if url.startswith("sqlite:"):
        from .sqlite import database_path

        database_path(url)
    elif url.startswith(REDIS_SCHEMES):
        from .redis import check_database

        check_database(url, describe(url))
    else:
        raise ValueError(
            f"EPISODE_STORE must be 'memory', 'sqlite:///ABSOLUTE/PATH.db' or a Redis URL "
            f"(redis://HOST:PORT/DB, rediss://..., unix:///PATH), got {describe(url)!r}"
        )


def open_store(settings: Settings, envs: Iterable[type[EpisodeEnvironment]]) -> EpisodeStore:
    """The store `settings.episode_store` names; a clear ValueError for anything else."""
    url = settings.episode_store
    check_store_url(url)
    if url == "memory":
        return MemoryStore(settings.max_live_episodes, settings.episode_ttl_seconds)
    limits = (settings.max_live_episodes, settings.episode_ttl_seconds)
    backend: Backend
    if url.startswith("sqlite:"):
        from .sqlite import SqliteBackend

        backend = SqliteBackend(url, *limits)
    else:
        from .redis import RedisBackend

        backend = RedisBackend(url, describe(url), *limits)
    from .durable import DurableStore

    return DurableStore(backend, envs, settings.max_live_episodes, settings.episode_ttl_seconds)
