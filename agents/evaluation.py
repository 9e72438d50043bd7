"""From episode records to the tables of an evaluation: per task, per environment, overall,
and for a `--split` run per split and per family.

A task instance is one (task, seed), or in a split run one (family, seed); its
repeats are its trials. A task's (a family's) row summarises its instances; an
environment's row (and the overall row) gives every task the same weight, so a task
with more instances does not dominate; in a split run every family weighs the same
instead (and a split's row is its families'). Groups keep the order in which their
first episode was planned, never a set's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
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
    split: str | None = None
    """The split of a split run's family or split row."""

    @property
    def success_rate(self) -> float:
        return self.successes / self.episodes if self.episodes else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "env": self.env,
            **({"split": self.split} if self.split is not None else {}),
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
    splits: tuple[Row, ...] = ()
    """Per (env, split) of a split run: its families' rows combined."""
    families: tuple[Row, ...] = ()
    """Per (env, split, family) of a split run."""

    def as_json(self) -> dict[str, Any]:
        return {
            "repeats": self.repeats,
            "tasks": [row.as_json() for row in self.tasks],
            "envs": [row.as_json() for row in self.envs],
            "overall": self.overall.as_json(),
            "splits": [row.as_json() for row in self.splits],
            "families": [row.as_json() for row in self.families],
        }


def _group(
    records: Iterable[Mapping[str, Any]], *keys: str
) -> dict[tuple[Any, ...], list[Mapping[str, Any]]]:
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(tuple(record.get(key) for key in keys), []).append(record)
    return groups


def task_row(task_id: str, env: str, episodes: Sequence[Mapping[str, Any]], max_k: int) -> Row:
    """A task's (or a family's) row from its episodes: statistics over its instances, each a
    (family, seed): two families of one task may play the same seed."""
    instances = list(_group(episodes, "family", "seed").values())
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
    split_records = [r for r in records if r.get("split") is not None]
    env_order = list(dict.fromkeys(r["env"] for r in split_records))
    by_family = dict(  # environment by environment, each in the order its families were played
        sorted(
            _group(split_records, "env", "split", "family").items(),
            key=lambda item: env_order.index(item[0][0]),
        )
    )
    families = tuple(
        replace(task_row(family, env, episodes, repeats), split=split)
        for (env, split, family), episodes in by_family.items()
    )
    splits = tuple(
        replace(
            combine(split, env, [r for r in families if (r.env, r.split) == (env, split)], repeats),
            split=split,
        )
        for env, split in dict.fromkeys((row.env, row.split) for row in families)
    )
    units = families or tasks  # what weighs the same in an environment's row
    envs = tuple(
        combine(env, env, [row for row in units if row.env == env], repeats)
        for env in dict.fromkeys(row.env for row in units)
    )
    overall = combine(OVERALL, OVERALL, units, repeats)
    return Evaluation(repeats, tasks, envs, overall, splits, families)
