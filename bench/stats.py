"""Latency summaries: percentiles by the nearest-rank method, in milliseconds."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    if not sorted_values:
        return float("nan")
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


def summarize(seconds: Sequence[float]) -> dict[str, float]:
    """p50/p90/p99/max (ms) and the sample count of latencies given in seconds."""
    ordered = sorted(seconds)
    return {
        "samples": len(ordered),
        "p50_ms": percentile(ordered, 0.50) * 1000,
        "p90_ms": percentile(ordered, 0.90) * 1000,
        "p99_ms": percentile(ordered, 0.99) * 1000,
        "max_ms": (ordered[-1] * 1000) if ordered else float("nan"),
    }
