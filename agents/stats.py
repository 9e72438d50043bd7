"""The numbers of an evaluation: mean with standard error, and pass^k.

pass^k follows the tau-bench papers: for one task instance tried n times
with c successes, the unbiased estimate of "all of k independent tries
succeed" is C(c, k) / C(n, k); the metric averages it over instances. It
falls as k grows when an agent is inconsistent, which a mean score hides.

Repeats of one instance are not independent samples, so a standard error
is taken over instances (each scored by the mean of its repeats), and the
standard error of a mean over several tasks combines the tasks' own errors
(the tasks are fixed, their seeds are the sample).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb, fsum, sqrt


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean; 0.0 for no values (an empty table row reads 0, not an error)."""
    return fsum(values) / len(values) if values else 0.0


def standard_error(values: Sequence[float]) -> float | None:
    """Sample standard deviation over sqrt(n); None below two values, where it is undefined."""
    n = len(values)
    if n < 2:
        return None
    centre = mean(values)
    variance = fsum((v - centre) ** 2 for v in values) / (n - 1)
    return sqrt(variance / n)


def combined_standard_error(errors: Sequence[float | None]) -> float | None:
    """The standard error of the plain mean of independent group means with these errors.

    None if any group's error is undefined: one group's unknown spread makes the whole unknown.
    """
    if not errors or any(e is None for e in errors):
        return None
    return sqrt(fsum(e * e for e in errors if e is not None)) / len(errors)


def pass_hat_k(trials: int, successes: int, k: int) -> float:
    """C(successes, k) / C(trials, k) for one instance: the chance that k of its tries, drawn
    without replacement, all succeeded."""
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in 0..trials, got {successes} of {trials}")
    if not 1 <= k <= trials:
        raise ValueError(f"k must be in 1..trials, got k={k} with {trials} trials")
    return comb(successes, k) / comb(trials, k)


def pass_hat_curve(instances: Sequence[tuple[int, int]], max_k: int) -> dict[int, float | None]:
    """pass^1..pass^max_k averaged over instances given as (trials, successes).

    pass^k averages over the instances with at least k trials; None when there is none.
    """
    curve: dict[int, float | None] = {}
    for k in range(1, max_k + 1):
        values = [pass_hat_k(n, c, k) for n, c in instances if n >= k]
        curve[k] = mean(values) if values else None
    return curve
