"""From episode records to the tables of an evaluation: per task, per environment, overall.

A task instance is one (task, seed); its repeats are its trials. A task's row
summarises its instances; an environment's row (and the overall row) gives
every task the same weight, so a task with more instances does not dominate.
Groups keep the order in which their first episode was planned, never a set's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .stats import combined_standard_error, mean, pass_hat_curve, standard_error

OVERALL = "all"


@dataclass(frozen=True)
class Row:
    """One line of a table: a task, an environment, or everything."""

    label: str
    env: str
    tasks: int
    instances: int
    episodes: int
    successes: int
    mean_score: float
    stderr: float | None
    pass_hat: Mapping[int, float | None]

    @property
    def success_rate(self) -> float:
        return self.successes / self.episodes if self.episodes else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "env": self.env,
            "tasks": self.tasks,
            "instances": self.instances,
            "episodes": self.episodes,
            "successes": self.successes,
            "success_rate": round(self.success_rate, 6),
            "mean_score": round(self.mean_score, 6),
            "stderr": None if self.stderr is None else round(self.stderr, 6),
            "pass_hat_k": {
                str(k): None if v is None else round(v, 6) for k, v in self.pass_hat.items()
            },
        }


@dataclass(frozen=True)
class Evaluation:
    repeats: int
    tasks: tuple[Row, ...]
    envs: tuple[Row, ...]
    overall: Row

    def as_json(self) -> dict[str, Any]:
        return {
            "repeats": self.repeats,
            "tasks": [row.as_json() for row in self.tasks],
            "envs": [row.as_json() for row in self.envs],
            "overall": self.overall.as_json(),
        }


def _group(
    records: Iterable[Mapping[str, Any]], *keys: str
) -> dict[tuple[Any, ...], list[Mapping[str, Any]]]:
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(tuple(record[key] for key in keys), []).append(record)
    return groups


def task_row(task_id: str, env: str, episodes: Sequence[Mapping[str, Any]], max_k: int) -> Row:
    """A task's row from its episodes: statistics over its (task, seed) instances."""
    instances = list(_group(episodes, "seed").values())
    instance_means = [mean([float(e["score"]) for e in trials]) for trials in instances]
    outcomes = [(len(trials), sum(1 for e in trials if e["success"])) for trials in instances]
    return Row(
        label=task_id,
        env=env,
        tasks=1,
        instances=len(instances),
        episodes=len(episodes),
        successes=sum(c for _, c in outcomes),
        mean_score=mean(instance_means),
        stderr=standard_error(instance_means),
        pass_hat=pass_hat_curve(outcomes, max_k),
    )


def combine(label: str, env: str, rows: Sequence[Row], max_k: int) -> Row:
    """Several tasks' rows as one, each task weighing the same."""
    pass_hat: dict[int, float | None] = {}
    for k in range(1, max_k + 1):
        values = [v for v in (row.pass_hat.get(k) for row in rows) if v is not None]
        pass_hat[k] = mean(values) if values else None
    return Row(
        label=label,
        env=env,
        tasks=len(rows),
        instances=sum(row.instances for row in rows),
        episodes=sum(row.episodes for row in rows),
        successes=sum(row.successes for row in rows),
        mean_score=mean([row.mean_score for row in rows]),
        stderr=combined_standard_error([row.stderr for row in rows]),
        pass_hat=pass_hat,
    )


def evaluate(records: Sequence[Mapping[str, Any]], repeats: int) -> Evaluation:
    """The tables of a run from its episode records (each with env, task_id, seed, score, success)."""
    tasks = tuple(
        task_row(task_id, env, episodes, repeats)
        for (env, task_id), episodes in _group(records, "env", "task_id").items()
    )
    envs = tuple(
        combine(env, env, [row for row in tasks if row.env == env], repeats)
        for env in dict.fromkeys(row.env for row in tasks)
    )
    return Evaluation(repeats, tasks, envs, combine(OVERALL, OVERALL, tasks, repeats))
