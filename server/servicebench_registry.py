"""Where `reset(task_id, seed=N)` gets its variant: built once, proven, then shared.

`ProvenVariants.get(task_id, seed)` returns the cached variant or builds attempt 0,
1, 2, ... of it (server/servicebench_variants) until one passes `prove`; the first
proven attempt is the variant of that (task, seed), the same in every process.
Proven variants are immutable and shared by every episode that plays them; the
cache is a bounded LRU, so memory stays flat however many seeds are played (an
evicted variant is rebuilt identically on its next reset, and episodes already
playing it keep their reference).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable

from server.servicebench_proof import VariantRejected
from server.servicebench_variants import Variant, build_variant

DEFAULT_CAPACITY = 1024
MAX_ATTEMPTS = 16


class VariantUnavailable(RuntimeError):
    """No attempt of a (task, seed) passed its proof (never observed; a bug if it is)."""


class ProvenVariants:
    """A thread-safe, bounded LRU of proven variants keyed by (task_id, seed)."""

    def __init__(self, prove: Callable[[Variant], object], capacity: int = DEFAULT_CAPACITY,
                 build: Callable[[str, int, int], Variant] = build_variant) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._prove = prove
        self._build = build
        self.capacity = capacity
        self._cache: OrderedDict[tuple[str, int], Variant] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._cache)

    def get(self, task_id: str, seed: int) -> Variant:
        key = (task_id, seed)
        with self._lock:
            variant = self._cache.get(key)
            if variant is not None:
                self._cache.move_to_end(key)
                return variant
        variant = self.build_proven(task_id, seed)  # outside the lock: a race only builds twice
        with self._lock:
            self._cache[key] = variant
            self._cache.move_to_end(key)
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
        return variant

    def build_proven(self, task_id: str, seed: int) -> Variant:
        """The first attempt of (task, seed) that passes its proof."""
        problems = []
        for attempt in range(MAX_ATTEMPTS):
            try:
                variant = self._build(task_id, seed, attempt)
                self._prove(variant)
            except (VariantRejected, ValueError) as problem:
                problems.append(str(problem))
                continue
            return variant
        raise VariantUnavailable(f"{task_id} seed {seed}: no valid variant in {MAX_ATTEMPTS} attempts: "
                                 + "; ".join(problems[-3:]))
