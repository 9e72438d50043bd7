"""From a results document (inference.py's JSON) to what the HTML report shows.

The numbers are the evaluation's own (agents/evaluation.py, agents/stats.py): a task's
mean score over its instances with the standard error over instances, and pass^k by
tau-bench's estimator C(c, k) / C(n, k). They are recomputed from the episode records,
so an old results file renders the same way as a new one. A split run (its records carry a
`split` and a `family`) gets a table per family and per split too; any other run gets none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents.evaluation import Evaluation, Row, evaluate

RECORD_KEYS = ("env", "task_id", "seed", "score", "success")
"""What every episode record must carry for the report to count it."""


class ResultsError(ValueError):
    """A results file the report cannot read: the message names the problem."""


@dataclass(frozen=True)
class Table:
    """One table of the report (and its chart): a title, a column naming the rows, the rows."""

    title: str
    label: str
    rows: tuple[Row, ...]
    show_env: bool = True
    """False where the label is the environment already."""


@dataclass(frozen=True)
class ReportData:
    document: Mapping[str, Any]
    episodes: tuple[Mapping[str, Any], ...]
    repeats: int
    evaluation: Evaluation
    tables: tuple[Table, ...]

    @property
    def scores(self) -> list[float]:
        return [float(e["score"]) for e in self.episodes]


def load_results(path: str | Path) -> dict[str, Any]:
    """The results document at `path`; ResultsError if it is missing, not JSON or not results."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ResultsError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path} is not a JSON file: {exc}") from exc
    check_document(document)
    return document


def check_document(document: Any) -> None:
    """ResultsError unless `document` has a list of episode records the report can count."""
    if not isinstance(document, dict) or not isinstance(document.get("tasks"), list):
        raise ResultsError("not an inference.py results file: no `tasks` list of episodes")
    for index, record in enumerate(document["tasks"]):
        missing = [k for k in RECORD_KEYS if not isinstance(record, dict) or k not in record]
        if missing:
            raise ResultsError(f"episode {index} of `tasks` lacks {', '.join(missing)}")
        if not isinstance(record["score"], (int, float)) or isinstance(record["score"], bool):
            raise ResultsError(f"episode {index}: `score` is not a number")


def trials_per_instance(episodes: Sequence[Mapping[str, Any]]) -> int:
    """The most tries of one (task, family, seed) in the records (1 for none)."""
    counts: dict[tuple[Any, ...], int] = {}
    for e in episodes:
        key = (e["env"], e["task_id"], e.get("family"), e.get("seed"))
        counts[key] = counts.get(key, 0) + 1
    return max(counts.values(), default=1)


def build(document: Mapping[str, Any]) -> ReportData:
    """Everything the report shows, from a checked results document."""
    check_document(document)
    episodes = tuple(document["tasks"])
    declared = document.get("repeats")
    repeats = max(
        declared if isinstance(declared, int) and declared > 0 else 1,
        trials_per_instance(episodes),
    )
    evaluation = evaluate(episodes, repeats)
    tables = [Table("Score per task", "Task", evaluation.tasks)]
    if evaluation.families:
        tables.append(Table("Score per family", "Family", evaluation.families))
    if evaluation.splits:
        tables.append(Table("Score per split", "Split", evaluation.splits))
    if episodes:
        overall = (*evaluation.envs, evaluation.overall)
        tables.append(Table("Score per environment", "Environment", overall, show_env=False))
    return ReportData(document, episodes, repeats, evaluation, tuple(tables))
