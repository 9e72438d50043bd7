"""Where a Support Queue episode gets its tickets: the canonical task, or a proven variant.

`variant_for(task_id, seed)` returns the canonical task for seed None or
`CANONICAL_SEED` (server/seeds.py), exactly as data/support_tickets.json states it;
for any other seed it returns the proven variant of (task, seed): attempt 0, 1, 2...
of server/support_queue/variants until one passes server/support_queue/proof. The
first proven attempt is the variant of that (task, seed) in every process.

Proven variants are immutable, shared by every episode that plays them, and kept in
the bounded LRU of server/variants.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Mapping, Optional

from ..seeds import is_canonical
from .variants import Variant, build_variant
from .grader import CANONICAL_FACTS
from .proof import ProvenVariant, VariantRejected, prove
from .tasks import TASKS
from ..variants import DEFAULT_CAPACITY, VariantCache

CANONICAL: Mapping[str, ProvenVariant] = MappingProxyType({
    task.card.id: ProvenVariant(task_id=task.card.id, seed=None, attempt=0, task=task,
                                facts=CANONICAL_FACTS[task.card.id])
    for task in TASKS
})


class ProvenVariants(VariantCache[Variant, ProvenVariant]):
    """The bounded LRU of proven Support Queue variants keyed by (task_id, seed)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY,
                 build: Callable[[str, int, int], Variant] = build_variant) -> None:
        super().__init__(build, prove, rejected=(VariantRejected, ValueError), capacity=capacity)


VARIANTS = ProvenVariants()


def variant_for(task_id: str, seed: Optional[int]) -> ProvenVariant:
    """The canonical task for no seed or the canonical seed; otherwise the proven variant."""
    if is_canonical(seed):
        return CANONICAL[task_id]
    return VARIANTS.get(task_id, int(seed))  # type: ignore[arg-type]
