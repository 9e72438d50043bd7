"""Seed ranges shared by both environments: the canonical task, and the seeds of each split.

`reset(task_id)` with no seed serves the canonical task exactly as the seed
documents state it, and so does `CANONICAL_SEED`. Every other seed serves a
generated variant. The ranges never overlap, so no seed is in two splits:

* `TRAIN` (1-99,999): training;
* `HELD_OUT` (100,000-109,999): evaluation only, the `test` and `test_families` splits
  (the held-out seeds of the training families, and the families never trained on);
* `VALIDATION` (110,000-119,999): model selection, never reported as a test score.

server/tasks/splits.py turns them into the Task API's splits.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

CANONICAL_SEED = 0
TRAIN = range(1, 100_000)
HELD_OUT = range(100_000, 110_000)
VALIDATION = range(110_000, 120_000)

SEED_RANGES: Mapping[str, range] = MappingProxyType(
    {"train": TRAIN, "validation": VALIDATION, "test": HELD_OUT}
)
"""The seed range of each use; the `test_families` split draws from `test`'s range."""


def is_canonical(seed: int | None) -> bool:
    return seed is None or seed == CANONICAL_SEED


def split_of(seed: int | None) -> str:
    """'canonical', 'train', 'validation', 'test' or 'other' (seeds past the documented ranges)."""
    if is_canonical(seed):
        return "canonical"
    for name, seeds in SEED_RANGES.items():
        if seed in seeds:
            return name
    return "other"
