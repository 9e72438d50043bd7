"""The markdown report of a run: what was run, then the per-task and per-environment tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .evaluation import Evaluation, Row
from .output import Redactor
from .results import write_atomically

NOT_AVAILABLE = "n/a"
DEFINITIONS = """\
- **Mean score**: the environment's episode score in [0, 1]; a task instance (task, seed) scores the \
mean of its repeats, a task the mean of its instances, an environment the mean of its tasks.
- **Std. error**: over a task's instances (repeats of one instance are not independent); an \
environment's combines its tasks' errors. n/a with fewer than two instances per task.
- **Success**: the episode completed its task (`[END] success=true`).
- **pass^k**: for an instance with n tries and c successes, C(c, k) / C(n, k), the chance that k \
tries all succeed (tau-bench); averaged over instances, then over tasks."""


def _number(value: float | None) -> str:
    return NOT_AVAILABLE if value is None else f"{value:.3f}"


def _table(
    first_columns: Sequence[str], rows: Sequence[tuple[Sequence[str], Row]], max_k: int
) -> list[str]:
    columns = [
        *first_columns,
        "Instances",
        "Episodes",
        "Mean score",
        "Std. error",
        "Success rate",
        *(f"pass^{k}" for k in range(1, max_k + 1)),
    ]
    align = ["---"] * len(first_columns) + ["---:"] * (len(columns) - len(first_columns))
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join(align) + " |"]
    for labels, row in rows:
        cells = [
            *labels,
            str(row.instances),
            str(row.episodes),
            _number(row.mean_score),
            _number(row.stderr),
            _number(row.success_rate),
            *(_number(row.pass_hat.get(k)) for k in range(1, max_k + 1)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_report(evaluation: Evaluation, run: Mapping[str, Any]) -> str:
    """The report's text; `run` holds the model label, seeds, repeats and duration."""
    max_k = evaluation.repeats
    lines = [
        "# inference.py evaluation",
        "",
        f"- Model: `{run['model']}`",
        f"- Seeds: {run['seeds']}",
        f"- Repeats per (task, seed): {max_k}",
        f"- Episodes: {evaluation.overall.episodes} ({evaluation.overall.successes} successful)",
        f"- Wall time: {run['duration_s']:.1f} s",
        "",
        "## Per task",
        "",
        *_table(
            ("Environment", "Task"),
            [((row.env, f"`{row.label}`"), row) for row in evaluation.tasks],
            max_k,
        ),
        "",
        "## Per environment",
        "",
        *_table(
            ("Environment", "Tasks"),
            [((row.label, str(row.tasks)), row) for row in (*evaluation.envs, evaluation.overall)],
            max_k,
        ),
        "",
        "## Definitions",
        "",
        DEFINITIONS,
        "",
    ]
    return "\n".join(lines)


def write_report(
    path: str, evaluation: Evaluation, run: Mapping[str, Any], redactor: Redactor
) -> Path:
    return write_atomically(path, redactor(render_report(evaluation, run)))
