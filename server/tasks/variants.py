"""The one variant pipeline of both environments: draw, prove, cache.

`reset(task_id, seed=N)` plays a generated variant of the task. Each environment
brings a generator, `draw(task_id, seed, attempt)`, and a proof, `prove(draw)`;
`VariantCache.get(task_id, seed)` returns the cached variant or draws attempt 0,
1, 2, ... until one passes its proof. The first proven attempt is the variant of
that (task, seed), the same in every process. A task with several families can be
asked for one of them: `get(task_id, seed, family)` draws with
`draw(task_id, seed, attempt, family)`, and (task, seed, family) is its own variant. Proven variants are immutable and
shared by every episode that plays them; the cache is a bounded LRU, so memory
stays flat however many seeds are played (an evicted variant is drawn again,
identically, on its next reset, and episodes already playing it keep theirs).

Drawing and proving a variant is CPU work of tens of milliseconds (a Support Queue proof
grades every gold action), too long for the event loop, which would hold every other
request of the process meanwhile: `VariantCache.prepared` runs a cache miss on the one
variant thread instead (a hit costs the loop a dictionary lookup).

Only `VariantRejected` means "draw the next attempt": a proof raises it through
`require`, and a generator raises it for a draw it cannot complete. Any other
exception, a `ValueError` included, is a bug in a generator or a proof, and it
propagates instead of being skipped as a rejected draw.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

Drawn = TypeVar("Drawn")
Proven = TypeVar("Proven")

DEFAULT_CAPACITY = 1024
MAX_ATTEMPTS = 16
SWITCH_INTERVAL_SECONDS = 0.001
"""How long the variant thread may hold the GIL while the event loop waits for it (Python's
default, 5 ms, would add up to 5 ms to each turn of the loop while a variant is built)."""
_BUILDER: ThreadPoolExecutor | None = None


def _builder() -> ThreadPoolExecutor:
    """The one thread that builds variants (one: builds queue up, the loop keeps its core)."""
    global _BUILDER
    if _BUILDER is None:
        _BUILDER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="variants")
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_SECONDS))
    return _BUILDER


class VariantRejected(Exception):
    """This draw cannot be served (its proof failed, or the generator hit a dead end):
    the cache draws the next attempt. Deliberately not a ValueError, so that a bug
    raising one is never mistaken for a rejection."""


class VariantUnavailable(RuntimeError):
    """No attempt of a (task, seed) passed its proof (never observed; a bug if it is)."""


@dataclass(frozen=True, slots=True)
class Draw:
    """Which attempt of which (task, seed) a variant is: the fields every variant starts with."""

    task_id: str
    seed: int | None
    """None for a canonical task."""
    attempt: int

    @property
    def label(self) -> str:
        """How rejections name the draw."""
        return f"{self.task_id} seed {self.seed} attempt {self.attempt}"


def require(condition: bool, draw: Draw, problem: str) -> None:
    """Reject `draw` with `problem` unless `condition` holds: the proofs' one check."""
    if not condition:
        raise VariantRejected(f"{draw.label}: {problem}")


class VariantCache(Generic[Drawn, Proven]):
    """Thread-safe: `draw(task, seed, attempt)`, then `prove(drawn)`, which returns what is served."""

    def __init__(
        self,
        draw: Callable[..., Drawn],
        prove: Callable[[Drawn], Proven],
        capacity: int = DEFAULT_CAPACITY,
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.rejections = 0
        self._draw = draw
        self._prove = prove
        self._cache: OrderedDict[tuple[str, int, str | None], Proven] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._cache)

    def cached(self, task_id: str, seed: int, family: str | None = None) -> Proven | None:
        """The variant if it is cached (marked as just used), else None."""
        key = (task_id, seed, family)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
            return cached

    async def prepared(self, task_id: str, seed: int, family: str | None = None) -> Proven:
        """`get`, with a cache miss built on the variant thread, off the event loop."""
        cached = self.cached(task_id, seed, family)
        if cached is not None:
            return cached
        return await asyncio.get_running_loop().run_in_executor(
            _builder(), self.get, task_id, seed, family
        )

    def get(self, task_id: str, seed: int, family: str | None = None) -> Proven:
        cached = self.cached(task_id, seed, family)
        if cached is not None:
            return cached
        proven = self.build_proven(task_id, seed, family)  # outside the lock: a race builds twice
        key = (task_id, seed, family)
        with self._lock:
            self._cache[key] = proven
            self._cache.move_to_end(key)
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
        return proven

    def build_proven(self, task_id: str, seed: int, family: str | None = None) -> Proven:
        """The first attempt of (task, seed[, family]) that draws and passes its proof."""
        problems: list[str] = []
        for attempt in range(MAX_ATTEMPTS):
            try:
                drawn = (
                    self._draw(task_id, seed, attempt)
                    if family is None
                    else self._draw(task_id, seed, attempt, family)  # type: ignore[call-arg]
                )
                return self._prove(drawn)
            except VariantRejected as problem:
                self.rejections += 1
                problems.append(str(problem))
        named = f" ({family})" if family is not None else ""
        raise VariantUnavailable(
            f"{task_id} seed {seed}{named}: no valid variant in {MAX_ATTEMPTS} "
            "attempts: " + "; ".join(problems[-3:])
        )
