"""Where `reset(task_id, seed=N)` gets its ServiceBench variant: built once, proven, then shared.

The caching and retrying is `server/variants.VariantCache`; this module only
says how a ServiceBench variant is built (server/servicebench/variants) and that
the proof's verdict is the variant itself.
"""

from __future__ import annotations

from typing import Callable

from .proof import VariantRejected
from .variants import Variant, build_variant
from ..variants import DEFAULT_CAPACITY, VariantCache


class ProvenVariants(VariantCache[Variant, Variant]):
    """The bounded LRU of proven ServiceBench variants keyed by (task_id, seed)."""

    def __init__(self, prove: Callable[[Variant], object], capacity: int = DEFAULT_CAPACITY,
                 build: Callable[[str, int, int], Variant] = build_variant) -> None:
        def proven(variant: Variant) -> Variant:
            prove(variant)
            return variant

        super().__init__(build, proven, rejected=(VariantRejected, ValueError), capacity=capacity)
