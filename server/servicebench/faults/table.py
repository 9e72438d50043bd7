"""The docs' table of faults, measured from the code so that it cannot drift.

`measure_faults()` plays every family on `FAULT_SEEDS` at every fault level with the
oracle and the two controls of fault handling (controls.py): their mean scores and
completion rates, and how often each kind of fault was served per call of the oracle's
episodes (the calls of a policy that handles every fault, so the rates are the
schedule's, not a control's). `faults_markdown` renders it. scripts/servicebench_faults.py
prints it, writes it into the docs and keeps the raw result in bench/results/;
tests/server/servicebench/faults/test_controls.py checks both against a fresh measurement.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from statistics import fmean
from typing import Any

from ..catalogue import FAMILIES, FamilyInfo
from .controls import FAULT_CONTROLS, run_fault_control
from .schedule import LEVELS

FAULT_SEEDS: tuple[int, ...] = (*range(1, 7), 100_000, 100_001)
"""Six training seeds and two held-out seeds of every family (the family named at reset)."""
CONTROL_LABELS = {
    "oracle": "Oracle",
    "blind_resender": "Blind re-sender",
    "never_retrier": "Never-retrier",
}


def _faults(play: Any) -> list[dict[str, Any]]:
    return list(play.env.state.model_dump(mode="json").get("faults") or [])


def measure_level(
    level: str, seeds: Sequence[int], families: Iterable[FamilyInfo]
) -> dict[str, Any]:
    """One level: each control's mean score and completion rate, the oracle's faults by kind."""
    scores: dict[str, list[float]] = {name: [] for name in FAULT_CONTROLS}
    completed: dict[str, list[bool]] = {name: [] for name in FAULT_CONTROLS}
    calls, kinds = 0, {}
    for info in families:
        for seed in seeds:
            for name in FAULT_CONTROLS:
                play = run_fault_control(name, info.task_id, seed, info.name, level)
                scores[name].append(play.env.score)
                completed[name].append(play.env.state.task_completed)
                if name == "oracle":
                    calls += len(play.actions)
                    for fault in _faults(play):
                        kinds[fault["kind"]] = kinds.get(fault["kind"], 0) + 1
    return {
        "episodes": len(scores["oracle"]),
        "mean_score": {name: round(fmean(values), 4) for name, values in scores.items()},
        "completed": {name: sum(values) for name, values in completed.items()},
        "oracle_calls": calls,
        "faults_by_kind": dict(sorted(kinds.items())),
    }


def measure_faults(
    seeds: Sequence[int] = FAULT_SEEDS,
    families: Iterable[FamilyInfo] = FAMILIES,
    levels: Sequence[str] = LEVELS,
) -> dict[str, Any]:
    """Every level's measurement, with the sample it was taken on."""
    families = list(families)
    return {
        "seeds": list(seeds),
        "families": [info.name for info in families],
        "levels": {level: measure_level(level, seeds, families) for level in levels},
    }


def _rate(count: int, calls: int) -> str:
    return f"{count / calls:.1%}" if calls else "n/a"


def faults_markdown(measured: dict[str, Any]) -> str:
    """Scores per level and control, then the faults served per call of the oracle."""
    levels = measured["levels"]
    kinds = sorted({kind for row in levels.values() for kind in row["faults_by_kind"]})
    names = list(CONTROL_LABELS)
    head = ["Faults", *(f"{CONTROL_LABELS[name]} (completed)" for name in names)]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * len(names) + "|"]
    for level, row in levels.items():
        cells = [
            f"{row['mean_score'][name]:.3f} ({row['completed'][name]}/{row['episodes']})"
            for name in names
        ]
        lines.append(f"| `{level}` | " + " | ".join(cells) + " |")
    lines += ["", "| Faults | Oracle calls | " + " | ".join(f"`{k}`" for k in kinds) + " |"]
    lines.append("|---|---:" + "|---:" * len(kinds) + "|")
    for level, row in levels.items():
        calls = row["oracle_calls"]
        cells = [
            f"{row['faults_by_kind'].get(k, 0)} ({_rate(row['faults_by_kind'].get(k, 0), calls)})"
            for k in kinds
        ]
        lines.append(f"| `{level}` | {calls} | " + " | ".join(cells) + " |")
    sample = (
        f"{len(measured['families'])} families x seeds {', '.join(map(str, measured['seeds']))}"
    )
    return "\n".join(
        [*lines, "", f"Measured on {sample} (`python scripts/servicebench_faults.py`)."]
    )
