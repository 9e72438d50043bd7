"""The Redis backend of the durable store (EPISODE_STORE=redis://HOST:PORT/DB, unix://PATH).

Each operation is one Lua script (server/store/redis_scripts.py), so a step costs
one `EVALSHA`: check the log's length, `RPUSH` the entry, restart the idle TTL,
mark the LRU index. Each process keeps one connection and pipelines the operations
that arrive while the previous batch is in flight (server/store/batching.py), so
Redis flushes its append-only file once per batch, not once per step.

Run Redis with `appendonly yes` and `appendfsync always` for every acknowledged step
to be on disk before it is answered (Redis writes and fsyncs the AOF before it
replies); with `everysec`, Redis's default, a crash of the Redis host can lose the
last second of steps. One Redis (or a primary with replicas behind Sentinel), not a
Redis Cluster: the scripts touch the shared LRU index beside the episode's own key.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from typing import Any
from urllib.parse import unquote, urlsplit

import redis.asyncio as aioredis
from redis.exceptions import RedisError, ResponseError

from ..lifecycle.sessions import StoreUnavailableError
from .backend import Backend, Reply, Status
from .batching import GroupCommit
from .redis_scripts import SCRIPTS

KEY_PREFIX = "sbsq:"
BATCH_TIMEOUT_S = 10.0
"""A batch not answered in this time fails (503): Redis is away, or stuck."""
CONNECT_TIMEOUT_S = 3.0

Command = tuple[str | bytes | int, ...]


def packed(commands: list[Command]) -> bytes:
    """The commands in Redis's wire format (RESP arrays of bulk strings), as redis-py's
    `pack_commands` writes them for these argument types, at a tenth of its cost (it spent
    ~12 µs on each step's `EVALSHA`: a generic path for every argument type and size)."""
    parts: list[bytes] = []
    for command in commands:
        parts.append(b"*%d\r\n" % len(command))
        for arg in command:
            if isinstance(arg, str):
                arg = arg.encode()
            elif type(arg) is int:
                arg = b"%d" % arg
            elif not isinstance(arg, bytes):
                raise TypeError(f"a Redis argument must be str, bytes or int, got {type(arg)}")
            parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)


def check_database(url: str, described: str) -> None:
    """Refuse a redis:// URL whose path is not a database number: redis-py would read it
    as database 0 (perhaps another deployment's) without a word."""
    split = urlsplit(url)
    database = unquote(split.path).strip("/")
    if split.scheme in ("redis", "rediss") and database and not re.fullmatch("[0-9]+", database):
        raise ValueError(
            f"EPISODE_STORE={described!r}: the path of a Redis URL is its database number "
            f"(redis://HOST:PORT/DB), got {database!r}"
        )


class RedisBackend(Backend):
    """Episode logs in one Redis, shared by every process that opens the same URL."""

    def __init__(self, url: str, described: str, max_live: int, ttl_seconds: float) -> None:
        self.url = described
        check_database(url, described)
        self._pool = aioredis.ConnectionPool.from_url(
            url, socket_timeout=None, socket_connect_timeout=CONNECT_TIMEOUT_S
        )
        self.max_live = max_live
        self.ttl_ms = max(1, round(ttl_seconds * 1000))
        self._shas = {
            name: hashlib.sha1(text.encode()).hexdigest() for name, text in SCRIPTS.items()
        }
        self._connection: Any = None
        self._owner: tuple[int, asyncio.AbstractEventLoop] | None = None
        self._batches: GroupCommit[Command] = GroupCommit(self._run)

    # ------------------------------------------------------------ connection

    async def _connected(self) -> Any:
        """This process's connection on the running loop (a new one after a fork, a failure,
        or in another event loop), with the scripts loaded."""
        owner = (os.getpid(), asyncio.get_running_loop())
        if self._connection is not None and self._owner == owner:
            return self._connection
        self._connection = None
        connection = self._pool.make_connection()
        await connection.connect()
        await self._load_scripts(connection)
        self._connection, self._owner = connection, owner
        return connection

    async def _load_scripts(self, connection: Any) -> None:
        for name, text in SCRIPTS.items():
            await connection.send_command("SCRIPT", "LOAD", text)
            if (await connection.read_response()).decode() != self._shas[name]:
                raise StoreUnavailableError(f"Redis at {self.url} hashed a script differently")

    async def _run(self, batch: list[Command]) -> list[Any]:
        """The batch's outcomes; a failure is a 503 whose outcome is unknown once the batch
        may have reached Redis (a reply lost or late: Redis may still run it, even after
        the timeout, e.g. once a paused Redis resumes), and `not_applied` before."""
        sent: list[bool] = []
        try:
            async with asyncio.timeout(BATCH_TIMEOUT_S):
                return await self._exchange(batch, sent)
        except (RedisError, OSError, TimeoutError) as exc:
            connection, self._connection = self._connection, None
            if connection is not None:
                await connection.disconnect(nowait=True)
            failure = (
                f"the episode store (Redis at {self.url}) did not answer: "
                f"{type(exc).__name__}: {exc}"
            )
            raise StoreUnavailableError(failure, "unknown" if sent else "not_applied") from None

    async def _exchange(self, batch: list[Command], sent: list[bool]) -> list[Any]:
        connection = await self._connected()
        sent.append(True)
        await connection.send_packed_command(packed(batch), check_health=False)
        outcomes: list[Any] = []
        for _ in batch:
            try:
                outcomes.append(await connection.read_response())
            except ResponseError as exc:
                outcomes.append(exc)
        if any(isinstance(o, ResponseError) and "NOSCRIPT" in str(o) for o in outcomes):
            await self._load_scripts(connection)  # flushed: load them, rerun what did not run
            retry = [i for i, o in enumerate(outcomes) if isinstance(o, ResponseError)]
            for i, outcome in zip(
                retry, await self._exchange([batch[i] for i in retry], sent), strict=True
            ):
                outcomes[i] = outcome
        return [
            StoreUnavailableError(f"Redis at {self.url} refused an operation: {o}")
            if isinstance(o, ResponseError)
            else o
            for o in outcomes
        ]

    # ------------------------------------------------------------ operations

    async def _episode_script(self, name: str, episode_id: str, *args: str | int) -> list[Any]:
        """Run script `name` on one episode: its log is the declared key, the prefix and the
        id its first arguments (the scripts derive the other keys from them)."""
        log_key = f"{KEY_PREFIX}ep:{episode_id}"
        return await self._batches.submit(
            ("EVALSHA", self._shas[name], 1, log_key, KEY_PREFIX, episode_id, *args)
        )

    async def create(
        self, episode_id: str, header: str, env_name: str, latest: bool, owner: str, client: str
    ) -> bool:
        reply = await self._episode_script(
            "create", episode_id, header, env_name, int(latest), self.ttl_ms, self.max_live,
            owner, client,
        )  # fmt: skip
        return reply[0] == 1

    async def replace(
        self, episode_id: str, header: str, env_name: str, latest: bool, owner: str
    ) -> Status:
        reply = await self._episode_script(
            "replace", episode_id, header, env_name, int(latest), self.ttl_ms, owner
        )
        return Status(reply[0])

    async def append(
        self, episode_id: str, steps: int, entry: str, done: bool, header: str
    ) -> Reply:
        reply = await self._episode_script(
            "append", episode_id, steps, entry, int(done), header, self.ttl_ms
        )
        return Status(reply[0]), reply[1:]

    async def read(
        self, episode_id: str, start: int, header: str | None, owner: str | None = None
    ) -> Reply:
        reply = await self._episode_script(
            "read", episode_id, start, header or "", self.ttl_ms, owner or ""
        )
        return Status(reply[0]), reply[1:]

    async def hand_over(self, episode_id: str, owner: str, to: str, client: str | None) -> bool:
        reply = await self._episode_script(
            "hand_over", episode_id, owner, to, client or "", self.ttl_ms
        )
        return reply[0] == 1

    async def latest(self, scope: str) -> str | None:
        episode_id = await self._batches.submit(("HGET", KEY_PREFIX + "latest", scope))
        return episode_id.decode() if episode_id is not None else None

    async def drop(self, episode_id: str, owner: str) -> bool:
        reply = await self._episode_script("drop", episode_id, owner)
        return reply[0] == 1

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and self._owner == (os.getpid(), asyncio.get_running_loop()):
            await connection.disconnect()
