"""Group commit: the operations that arrive while one batch is in flight go together next.

A durable store's backend pays a round trip per batch, not per operation, and its
durability (Redis's `appendfsync always`, SQLite's `synchronous=FULL`) one disk flush
per batch. With one request in flight a batch is one operation and waits for nothing;
under load, batches grow on their own while the previous one is being written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

Op = TypeVar("Op")

RunBatch = Callable[[list[Op]], Awaitable[list[Any]]]
"""Runs a batch and returns one outcome per operation, in order: a result, or the exception
that operation failed with. A raised exception fails the whole batch."""


class GroupCommit(Generic[Op]):
    """Submits operations to `run_batch`, one batch at a time, on the running event loop."""

    def __init__(self, run_batch: RunBatch[Op]) -> None:
        self._run_batch = run_batch
        self._pending: list[tuple[Op, asyncio.Future[Any]]] = []
        self._flushing: asyncio.Task[None] | None = None

    def submit(self, op: Op) -> asyncio.Future[Any]:
        """The outcome of `op`, once the batch it joins has run."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._pending.append((op, future))
        if self._flushing is None or self._flushing.get_loop() is not loop:
            self._flushing = loop.create_task(self._flush())
        return future

    async def _flush(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    outcomes = await self._run_batch([op for op, _ in batch])
                except Exception as exc:  # noqa: BLE001 - every operation of the batch failed
                    outcomes = [exc] * len(batch)
                for (_, future), outcome in zip(batch, outcomes, strict=True):
                    if future.done():
                        continue
                    if isinstance(outcome, BaseException):
                        future.set_exception(outcome)
                    else:
                        future.set_result(outcome)
        finally:
            self._flushing = None
