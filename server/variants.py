"""A bounded LRU of proven task variants, shared by both environments.

`VariantCache.get(task_id, seed)` returns the cached variant or builds attempt
0, 1, 2, ... of it until one passes its proof; the first proven attempt is the
variant of that (task, seed), the same in every process. Proven variants are
immutable and shared by every episode that plays them; the cache is bounded,
so memory stays flat however many seeds are played (an evicted variant is
rebuilt identically on its next reset, and episodes already playing it keep
their reference).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, TypeVar

Built = TypeVar("Built")
Proven = TypeVar("Proven")

DEFAULT_CAPACITY = 1024
MAX_ATTEMPTS = 16


class VariantUnavailable(RuntimeError):
    """No attempt of a (task, seed) passed its proof (never observed; a bug if it is)."""


class VariantCache(Generic[Built, Proven]):
    """Thread-safe: `build(task, seed, attempt)` then `prove(built)`, which raises to reject."""

    def __init__(
        self,
        build: Callable[[str, int, int], Built],
        prove: Callable[[Built], Proven],
        rejected: tuple[type[Exception], ...] = (ValueError,),
        capacity: int = DEFAULT_CAPACITY,
    ) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.rejections = 0
        self._build = build
        self._prove = prove
        self._rejected = rejected
        self._cache: OrderedDict[tuple[str, int], Proven] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._cache)

    def get(self, task_id: str, seed: int) -> Proven:
        key = (task_id, seed)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        proven = self.build_proven(task_id, seed)  # outside the lock: a race only builds twice
        with self._lock:
            self._cache[key] = proven
            self._cache.move_to_end(key)
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
        return proven

    def build_proven(self, task_id: str, seed: int) -> Proven:
        """The first attempt of (task, seed) that builds and passes its proof."""
        problems: list[str] = []
        for attempt in range(MAX_ATTEMPTS):
            try:
                return self._prove(self._build(task_id, seed, attempt))
            except self._rejected as problem:
                self.rejections += 1
                problems.append(str(problem))
        raise VariantUnavailable(f"{task_id} seed {seed}: no valid variant in {MAX_ATTEMPTS} "
                                 "attempts: " + "; ".join(problems[-3:]))
