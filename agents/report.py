"""The markdown report of a run: what was run, then the per-task and per-environment tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .evaluation import Evaluation, Row
from .output import Redactor
from .results import write_atomically

NOT_AVAILABLE = "n/a"
CAUSE_LABELS = {
    "fault_double_write": "Fault: a write applied twice after a 504",
    "fault_unretried": "Fault: not retried",
    "agent": "The agent's own",
}
"""How the reports name each cause of a failure (agents/fault_blame.py)."""
DEFINITIONS = """\
- **Mean score**: the episode score in [0, 1] credited to the policy under test: the environment's \
own score, less what stand-in actions earned (a Support Queue ticket the agent moved on with the \
neutral action, when the model gave no usable decision, counts 0); a task instance (task, seed) \
scores the mean of its repeats, a task the mean of its instances, an environment the mean of its tasks.
- **Std. error**: over a task's instances (repeats of one instance are not independent); an \
environment's combines its tasks' errors. n/a with fewer than two instances per task.
- **Success**: the policy under test did the task (`[END] success=true`): the environment says it \
is done, and no action of the episode was a stand-in.
- **pass^k**: for an instance with n tries and c successes, C(c, k) / C(n, k), the chance that k \
tries all succeed (tau-bench); averaged over instances, then over tasks.
- **Split runs** (`--split`): an instance is a (family, seed); a family's row summarises its \
instances, a split's and an environment's give every family the same weight.
- **Failures by cause** (`--faults`): a failed ServiceBench episode is the faults' when a 504 write \
that had been applied was sent again without its `idempotency_key` (a double write), else when a \
call answered 503, 429 or 504 never got a real answer from that endpoint afterwards (not \
retried); every other failed episode is the agent's own."""


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


def _split_tables(evaluation: Evaluation, max_k: int) -> list[str]:
    """A split run's tables: per split, then per family (nothing for a run by task and seed)."""
    if not evaluation.splits:
        return []
    return [
        "## Per split",
        "",
        *_table(
            ("Environment", "Split", "Families"),
            [((row.env, f"`{row.label}`", str(row.tasks)), row) for row in evaluation.splits],
            max_k,
        ),
        "",
        "## Per family",
        "",
        *_table(
            ("Environment", "Split", "Family"),
            [((row.env, f"`{row.split}`", f"`{row.label}`"), row) for row in evaluation.families],
            max_k,
        ),
        "",
    ]


def _failure_lines(failures: Mapping[str, int] | None) -> list[str]:
    """The failed episodes by cause: the services' injected faults, or the agent's own."""
    if not failures:
        return []
    lines = ["## Failures by cause", "", "| Cause | Episodes |", "| --- | ---: |"]
    lines += [
        f"| {CAUSE_LABELS.get(cause, cause)} | {count} |" for cause, count in failures.items()
    ]
    return [*lines, ""]


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
        f"- ServiceBench faults: {run.get('faults', 'off')}",
        "",
        *_failure_lines(run.get("failures")),
        "## Per task",
        "",
        *_table(
            ("Environment", "Task"),
            [((row.env, f"`{row.label}`"), row) for row in evaluation.tasks],
            max_k,
        ),
        "",
        *_split_tables(evaluation, max_k),
        "## Per environment",
        "",
        *_table(
            ("Environment", "Families" if evaluation.families else "Tasks"),
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
