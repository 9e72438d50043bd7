"""The SQLite backend of the durable store (EPISODE_STORE=sqlite:///ABSOLUTE/PATH.db).

One database file shared by the processes of one host (uvicorn's workers, or several
servers on one machine or volume, e.g. a Hugging Face Space's persistent `/data`). The
database runs in WAL mode, so readers never wait for the writer; each operation checks
and writes inside one `BEGIN IMMEDIATE` transaction, which takes the write lock first, so
two processes never both append at the same position. A busy timeout makes a process wait
for another's transaction instead of failing.

Each process keeps one connection, used from one thread of its own (the event loop never
blocks on the disk), and runs the operations that arrive while the previous batch commits
as the next batch, in one transaction (server/store/batching.py). `synchronous=FULL` (the
default) fsyncs the WAL at every commit: an acknowledged step survives a crash of the
process, of the OS or of the power. `?synchronous=normal` fsyncs only at checkpoints: a step
still survives any crash of the server processes (the WAL is written before the commit
returns), but a power loss or kernel crash may lose the last steps acknowledged.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

from ..lifecycle.sessions import StoreUnavailableError
from .backend import Backend, Elements, Reply, Status
from .batching import GroupCommit
from .sqlite_schema import create_schema

BUSY_TIMEOUT_MS = 10_000
SYNCHRONOUS = ("full", "normal")
Op = tuple[Any, ...]
Db = sqlite3.Connection


def database_path(url: str) -> tuple[str, str]:
    """(the absolute path, the synchronous mode) of a `sqlite:///ABSOLUTE/PATH.db[?...]` URL."""
    rest, _, query = url.removeprefix("sqlite://").partition("?")
    options = {key: values[-1] for key, values in parse_qs(query).items()}
    synchronous = options.pop("synchronous", "full").lower()
    if not rest.startswith("/") or rest.rstrip("/") in ("", "/:memory:"):
        raise ValueError(
            "EPISODE_STORE=sqlite needs an absolute path to a database file: "
            f"sqlite:///ABSOLUTE/PATH.db, got {url!r}"
        )
    if synchronous not in SYNCHRONOUS or options:
        raise ValueError(
            f"EPISODE_STORE={url!r}: the only option is ?synchronous=full (the default) or "
            "?synchronous=normal"
        )
    if os.path.isdir(rest) or not os.path.isdir(os.path.dirname(rest)):
        raise ValueError(
            f"EPISODE_STORE={url!r}: the database file's directory must exist (and the path "
            "must not be a directory itself)"
        )
    return rest, synchronous


class SqliteBackend(Backend):
    """Episode logs in one SQLite database file."""

    def __init__(self, url: str, max_live: int, ttl_seconds: float) -> None:
        self.path, self.synchronous = database_path(url)
        self.url = f"sqlite://{self.path}"
        self.max_live = max_live
        self.ttl_seconds = ttl_seconds
        self._pid = -1
        self._executor: ThreadPoolExecutor | None = None
        self._connection: sqlite3.Connection | None = None
        self._batches: GroupCommit[Op] = GroupCommit(self._run)

    # ------------------------------------------------------------ connection

    async def _run(self, batch: list[Op]) -> list[Any]:
        if self._pid != os.getpid():  # a fork inherits neither the thread nor the connection
            self._pid, self._connection = os.getpid(), None
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="episode-store")
        assert self._executor is not None
        return await asyncio.get_running_loop().run_in_executor(
            self._executor, self._transaction, batch
        )

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute(f"PRAGMA synchronous = {self.synchronous.upper()}")
        create_schema(connection, self.url)
        return connection

    def _transaction(self, batch: list[Op]) -> list[Any]:
        """Run the batch in one transaction (in the store's own thread).

        A failure before COMMIT rolls everything back: nothing was recorded. A COMMIT that
        fails (a disk error while the WAL is written or synced) may still have written the
        commit: its outcome is unknown."""
        committing = False
        try:
            if self._connection is None:
                self._connection = self._connect()
            db = self._connection
            db.execute("BEGIN IMMEDIATE")
            try:
                now = time.time()
                outcomes = [getattr(self, "_" + op[0])(db, now, *op[1:]) for op in batch]
                committing = True
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            return outcomes
        except sqlite3.Error as exc:
            failure = f"the episode store ({self.url}) failed: {type(exc).__name__}: {exc}"
            if committing:
                raise StoreUnavailableError(
                    f"{failure}, while committing: what was sent may have been recorded",
                    "unknown",
                ) from None
            raise StoreUnavailableError(f"{failure}. Nothing was recorded: send it again") from None

    # ------------------------------------------------- operations (in the thread)

    def _row(self, db: Db, now: float, episode_id: str) -> tuple[str, int, str, str] | None:
        """(header, steps, owner, client) of the episode; None (and deleted) if expired."""
        row = db.execute(
            "SELECT header, steps, last_used, owner, client FROM episodes WHERE id = ?",
            (episode_id,),
        ).fetchone()
        if row is None:
            return None
        if now - row[2] > self.ttl_seconds:
            db.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))
            return None
        return row[0], row[1], row[3], row[4]

    @staticmethod
    def _touch(db: Db, now: float, episode_id: str) -> None:
        db.execute("UPDATE episodes SET last_used = ? WHERE id = ?", (now, episode_id))

    @staticmethod
    def _elements(db: Db, episode_id: str, header: str, start: int) -> Elements:
        entries = db.execute(
            "SELECT entry FROM actions WHERE episode_id = ? AND step >= ? ORDER BY step",
            (episode_id, max(start, 1)),
        ).fetchall()
        head = [header.encode()] if start == 0 else []
        return head + [entry.encode() for (entry,) in entries]

    @staticmethod
    def _set_latest(db: Db, episode_id: str, env: str) -> None:
        db.executemany(
            "INSERT OR REPLACE INTO latest VALUES (?, ?)", ((env, episode_id), ("*", episode_id))
        )

    def _create(
        self,
        db: Db,
        now: float,
        episode_id: str,
        header: str,
        env: str,
        latest: bool,
        owner: str,
        client: str,
    ) -> bool:
        db.execute("DELETE FROM episodes WHERE last_used < ?", (now - self.ttl_seconds,))
        if db.execute("SELECT 1 FROM episodes WHERE id = ?", (episode_id,)).fetchone():
            return False
        (held,) = db.execute("SELECT value FROM counts WHERE name = 'held'").fetchone()
        for _ in range(held - self.max_live + 1):  # the client holding the most makes room
            (heaviest,) = db.execute(
                "SELECT client FROM shares ORDER BY held DESC LIMIT 1"
            ).fetchone()
            (victim,) = (
                db.execute(  # its finished first (earliest first), then its idlest
                    "SELECT id FROM episodes WHERE client = ? AND finished IS NOT NULL "
                    "ORDER BY finished LIMIT 1",
                    (heaviest,),
                ).fetchone()
                or db.execute(
                    "SELECT id FROM episodes WHERE client = ? ORDER BY last_used LIMIT 1",
                    (heaviest,),
                ).fetchone()
            )
            db.execute("DELETE FROM episodes WHERE id = ?", (victim,))
        db.execute(
            "INSERT INTO episodes (id, header, steps, last_used, owner, client) "
            "VALUES (?, ?, 0, ?, ?, ?)",
            (episode_id, header, now, owner, client),
        )
        if latest:
            self._set_latest(db, episode_id, env)
        return True

    def _replace(
        self, db: Db, now: float, episode_id: str, header: str, env: str, latest: bool, owner: str
    ) -> Status:
        row = self._row(db, now, episode_id)
        if row is None:
            return Status.GONE
        if row[2] != owner:
            return Status.FOREIGN
        db.execute("DELETE FROM actions WHERE episode_id = ?", (episode_id,))
        db.execute(
            "UPDATE episodes SET header = ?, steps = 0, finished = NULL, last_used = ? "
            "WHERE id = ?",
            (header, now, episode_id),
        )
        if latest:
            self._set_latest(db, episode_id, env)
        return Status.DONE

    def _append(
        self, db: Db, now: float, episode_id: str, steps: int, entry: str, done: bool, header: str
    ) -> Reply:
        held = self._row(db, now, episode_id)
        if held is None:
            return Status.GONE, []
        self._touch(db, now, episode_id)
        if held[0] != header:
            return Status.REPLACED, self._elements(db, episode_id, held[0], 0)
        if held[1] != steps:
            return Status.STALE, self._elements(db, episode_id, held[0], steps + 1)
        db.execute("INSERT INTO actions VALUES (?, ?, ?)", (episode_id, steps + 1, entry))
        db.execute(
            "UPDATE episodes SET steps = ?, finished = ? WHERE id = ?",
            (steps + 1, now if done else None, episode_id),
        )
        return Status.DONE, []

    def _read(
        self, db: Db, now: float, episode_id: str, start: int, header: str | None, owner: str | None
    ) -> Reply:
        held = self._row(db, now, episode_id)
        if held is None:
            return Status.GONE, []
        if owner is not None and held[2] != owner:
            return Status.FOREIGN, []
        self._touch(db, now, episode_id)
        if header is not None and held[0] != header:
            return Status.REPLACED, self._elements(db, episode_id, held[0], 0)
        return Status.DONE, self._elements(db, episode_id, held[0], start)

    def _hand_over(
        self, db: Db, now: float, episode_id: str, owner: str, to: str, client: str | None
    ) -> bool:
        held = self._row(db, now, episode_id)
        if held is None or held[2] != owner:
            return False
        db.execute(
            "UPDATE episodes SET owner = ?, client = ?, last_used = ? WHERE id = ?",
            (to, held[3] if client is None else client, now, episode_id),
        )
        return True

    @staticmethod
    def _latest(db: Db, now: float, scope: str) -> str | None:
        row = db.execute("SELECT episode_id FROM latest WHERE scope = ?", (scope,)).fetchone()
        return row[0] if row else None

    def _drop(self, db: Db, now: float, episode_id: str, owner: str) -> bool:
        held = self._row(db, now, episode_id)
        if held is None or held[2] != owner:
            return False
        db.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))
        return True

    # ------------------------------------------------------------ the interface

    async def create(
        self, episode_id: str, header: str, env_name: str, latest: bool, owner: str, client: str
    ) -> bool:
        return await self._batches.submit(
            ("create", episode_id, header, env_name, latest, owner, client)
        )

    async def replace(
        self, episode_id: str, header: str, env_name: str, latest: bool, owner: str
    ) -> Status:
        return await self._batches.submit(("replace", episode_id, header, env_name, latest, owner))

    async def append(
        self, episode_id: str, steps: int, entry: str, done: bool, header: str
    ) -> Reply:
        return await self._batches.submit(("append", episode_id, steps, entry, done, header))

    async def read(
        self, episode_id: str, start: int, header: str | None, owner: str | None = None
    ) -> Reply:
        return await self._batches.submit(("read", episode_id, start, header, owner))

    async def hand_over(self, episode_id: str, owner: str, to: str, client: str | None) -> bool:
        return await self._batches.submit(("hand_over", episode_id, owner, to, client))

    async def latest(self, scope: str) -> str | None:
        return await self._batches.submit(("latest", scope))

    async def drop(self, episode_id: str, owner: str) -> bool:
        return await self._batches.submit(("drop", episode_id, owner))

    async def close(self) -> None:
        executor, connection = self._executor, self._connection
        self._executor = self._connection = None
        self._pid = -1
        if executor is not None:
            if connection is not None:
                executor.submit(connection.close)
            executor.shutdown(wait=True)
