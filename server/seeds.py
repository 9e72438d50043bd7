"""Seed ranges shared by both environments: the canonical task, training and held-out seeds.

`reset(task_id)` with no seed serves the canonical task exactly as the seed
documents state it, and so does `CANONICAL_SEED`. Every other seed serves a
generated variant. Seeds in `HELD_OUT` are for evaluation only: train on
`TRAIN`, report on `HELD_OUT`.
"""

from __future__ import annotations

CANONICAL_SEED = 0
TRAIN = range(1, 100_000)
HELD_OUT = range(100_000, 110_000)


def is_canonical(seed: int | None) -> bool:
    return seed is None or seed == CANONICAL_SEED


def split_of(seed: int | None) -> str:
    """'canonical', 'train', 'held_out' or 'other' (seeds past the documented ranges)."""
    if is_canonical(seed):
        return "canonical"
    if seed in TRAIN:
        return "train"
    if seed in HELD_OUT:
        return "held_out"
    return "other"
