"""Where a Support Queue episode gets its tickets: the canonical task, or a proven variant.

`variant_for(task_id, seed)` returns the canonical task for seed None or
`CANONICAL_SEED` (server/seeds.py), exactly as data/support_tickets.json states it;
for any other seed it returns the proven variant of (task, seed): attempt 0, 1, 2...
of server/support_queue_generator until one passes server/support_queue_proof. The
first proven attempt is the variant of that (task, seed) in every process.

Proven variants are immutable and shared by every episode that plays them. They are
kept in a bounded LRU, so memory stays flat however many seeds are played: an evicted
variant is rebuilt identically on its next reset, and the episodes still playing it
keep their own reference.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from types import MappingProxyType
from typing import Callable, Mapping, Optional

from server.seeds import is_canonical
from server.support_queue_generator import Variant, build_variant
from server.support_queue_grader import CANONICAL_FACTS
from server.support_queue_proof import ProvenVariant, VariantRejected, prove
from server.support_queue_tasks import TASKS

DEFAULT_CAPACITY = 1024
MAX_ATTEMPTS = 16

CANONICAL: Mapping[str, ProvenVariant] = MappingProxyType({
    task.card.id: ProvenVariant(task_id=task.card.id, seed=None, attempt=0, task=task,
                                facts=CANONICAL_FACTS[task.card.id])
    for task in TASKS
})


class VariantUnavailable(RuntimeError):
    """No attempt of a (task, seed) passed its proof (never observed; a bug if it is)."""


class ProvenVariants:
    """A thread-safe, bounded LRU of proven variants keyed by (task_id, seed)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY,
                 build: Callable[[str, int, int], Variant] = build_variant) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._build = build
        self._cache: OrderedDict[tuple[str, int], ProvenVariant] = OrderedDict()
        self._lock = threading.Lock()
        self.rejections = 0

    def __len__(self) -> int:
        return len(self._cache)

    def get(self, task_id: str, seed: int) -> ProvenVariant:
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

    def build_proven(self, task_id: str, seed: int) -> ProvenVariant:
        """The first attempt of (task, seed) that builds and passes its proof."""
        problems: list[str] = []
        for attempt in range(MAX_ATTEMPTS):
            try:
                return prove(self._build(task_id, seed, attempt))
            except (VariantRejected, ValueError) as problem:
                self.rejections += 1
                problems.append(str(problem))
        raise VariantUnavailable(f"{task_id} seed {seed}: no valid variant in {MAX_ATTEMPTS} "
                                 "attempts: " + "; ".join(problems[-3:]))


VARIANTS = ProvenVariants()


def variant_for(task_id: str, seed: Optional[int]) -> ProvenVariant:
    """The canonical task for no seed or the canonical seed; otherwise the proven variant."""
    if is_canonical(seed):
        return CANONICAL[task_id]
    return VARIANTS.get(task_id, int(seed))  # type: ignore[arg-type]
