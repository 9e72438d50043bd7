"""The Task API's splits: which (family, seed) each index of each split plays.

OpenEnv's Task API (`TaskProvider`: list_splits, num_tasks, get_task,
get_task_range, list_tasks; then `reset(split=..., index=...)`) publishes a
numbered set of tasks per split. Here a task is one family of an environment on
one seed, and every split is a product of families and a seed range:

* `train`, `validation` and `test` play the training families, each on its own
  seed range (server/tasks/seeds.py), so no (family, seed) is in two of them;
* `test_families` plays the held-out families (data/splits.json), which no other
  split serves, on the test seeds.

Index `i` of a split with families `F0..Fm-1` and seeds `s0, s0+1, ...` plays family
`F(i mod m)` on seed `s0 + i // m`: families interleave, so the first m tasks cover
every family of the split once, and any prefix is as balanced as it can be. The
mapping is arithmetic (nothing is generated to answer a question about a task) and
fixed for a given release: adding a family changes m, so a task is better named by
its `id` (`family-seed`), which never changes, than by its index.

A task spec says which task it is (id, env, split, index, family, task card,
difficulty, step budget, seed) and never what solves it: specs are made from the
family's card and the seed alone, before any world exists.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ... import DATA_DIR
from ...error_messages import shown
from ...models import TaskCard
from .episode_errors import EpisodeError
from .seeds import SEED_RANGES

SPLITS_PATH = DATA_DIR / "splits.json"
MAX_RANGE = 1_000
"""The most task specs one task_range answer holds (page through a split with start/stop)."""
LIST_PREVIEW = 100
"""The task specs list_tasks returns: a preview, as OpenEnv allows; num_tasks is the total."""


class UnknownSplitError(EpisodeError):
    """A split this environment does not have (like an unknown task id, a 404)."""

    status = 404


class TaskIndexError(EpisodeError, IndexError):
    """An index outside a split; an IndexError, so that OpenEnv's own server answers 400 too."""

    status = 400


class TaskRangeError(EpisodeError):
    """A task range longer than one answer may hold."""

    status = 400


class SplitRequestError(EpisodeError):
    """A reset that names a split task and something that contradicts it."""

    status = 400


@dataclass(frozen=True, slots=True)
class Family:
    """One family of tasks as the splits see it: its name and the card its episodes play."""

    name: str
    card: TaskCard
    difficulty: str
    workflow: str | None = None
    """The class of end state the family expects, where its registry names it."""
    held_out: bool = False
    """The registry holds it out of training (so does data/splits.json for the names it lists)."""


@dataclass(frozen=True, slots=True)
class SplitTask:
    """Index `index` of split `split`: `family` on `seed`."""

    env: str
    split: str
    index: int
    family: Family
    seed: int

    @property
    def id(self) -> str:
        """Stable across releases and unique within an environment (seed ranges are disjoint)."""
        return f"{self.family.name}-{self.seed}"

    def spec(self) -> dict[str, Any]:
        """What /task answers: which task this is, never what solves it."""
        card = self.family.card
        spec: dict[str, Any] = {
            "id": self.id,
            "index": self.index,
            "split": self.split,
            "env": self.env,
            "family": self.family.name,
            "task_id": card.id,
            "title": card.title,
            "difficulty": self.family.difficulty,
            "max_steps": card.max_steps,
            "seed": self.seed,
        }
        if self.family.workflow is not None:
            spec["workflow"] = self.family.workflow
        return spec


@dataclass(frozen=True)
class Split:
    """A named product of families and seeds (see the module docstring for the order)."""

    env: str
    name: str
    type: str
    description: str
    families: tuple[Family, ...]
    seeds: range

    def __len__(self) -> int:
        return len(self.families) * len(self.seeds)

    def task(self, index: int) -> SplitTask:
        """The task at `index`, which the caller has checked is in range."""
        row, column = divmod(index, len(self.families))
        return SplitTask(self.env, self.name, index, self.families[column], self.seeds[row])

    def descriptor(self) -> dict[str, Any]:
        """What /splits lists for this split."""
        return {
            "name": self.name,
            "type": self.type,
            "num_tasks": len(self),
            "families": [family.name for family in self.families],
            "seeds": [self.seeds[0], self.seeds[-1]] if self.seeds else [],
            "description": self.description,
        }


def _load_table() -> tuple[Mapping[str, Mapping[str, str]], Mapping[str, frozenset[str]]]:
    raw = json.loads(SPLITS_PATH.read_text(encoding="utf-8"))
    splits = MappingProxyType({name: MappingProxyType(s) for name, s in raw["splits"].items()})
    for name, split in splits.items():
        if split["seeds"] not in SEED_RANGES or split["families"] not in ("train", "held_out"):
            raise ValueError(f"{SPLITS_PATH}: split {name!r} names unknown seeds or families")
    held_out = MappingProxyType(
        {env: frozenset(names) for env, names in raw["held_out_families"].items()}
    )
    return splits, held_out


SPLIT_TABLE, HELD_OUT_FAMILIES = _load_table()
SPLIT_NAMES: tuple[str, ...] = tuple(SPLIT_TABLE)


class Catalogue:
    """One environment's splits, answering the Task API's questions without building a world."""

    def __init__(self, env: str, families: Iterable[Family]) -> None:
        families = tuple(families)
        names = [family.name for family in families]
        if len(set(names)) != len(names):
            raise ValueError(f"{env}: family names must be unique, got {names}")
        listed = HELD_OUT_FAMILIES.get(env, frozenset())
        held_out = listed | {family.name for family in families if family.held_out}
        unknown = sorted(listed - set(names))
        if unknown:
            raise ValueError(
                f"{SPLITS_PATH.name}: {env} holds out {unknown}, which are not its families "
                f"({', '.join(names)})"
            )
        pools = {
            "train": tuple(f for f in families if f.name not in held_out),
            "held_out": tuple(f for f in families if f.name in held_out),
        }
        if not pools["train"]:
            raise ValueError(f"{env}: every family is held out; train would be empty")
        self.env = env
        self.families: Mapping[str, Family] = MappingProxyType({f.name: f for f in families})
        self.splits: Mapping[str, Split] = MappingProxyType(
            {
                name: Split(
                    env,
                    name,
                    row["type"],
                    row["description"],
                    pools[row["families"]],
                    SEED_RANGES[row["seeds"]],
                )
                for name, row in SPLIT_TABLE.items()
            }
        )

    def split(self, name: Any) -> Split:
        found = self.splits.get(name) if isinstance(name, str) else None
        if found is None:
            raise UnknownSplitError(
                f"unknown split {shown(name)} for env {self.env!r}; splits: "
                + ", ".join(self.splits)
            )
        return found

    def descriptors(self) -> list[dict[str, Any]]:
        return [split.descriptor() for split in self.splits.values()]

    def num_tasks(self, split: Any) -> int:
        return len(self.split(split))

    def task(self, split: Any, index: Any) -> SplitTask:
        """The task at `index` of `split`; TaskIndexError (400) outside 0..num_tasks-1."""
        chosen = self.split(split)
        if type(index) is not int or not 0 <= index < len(chosen):
            raise TaskIndexError(
                f"task index {shown(index)} out of range for split {chosen.name!r} of "
                f"{self.env!r}: {len(chosen)} tasks, indices 0 to {len(chosen) - 1}"
            )
        return chosen.task(index)

    def task_range(self, split: Any, start: int | None, stop: int | None) -> list[SplitTask]:
        """Tasks `[start:stop]` with Python's slice semantics (negative counts from the end,
        bounds past either end are clipped); at most MAX_RANGE of them, else a 400."""
        chosen = self.split(split)
        indices = range(len(chosen))[slice(start, stop)]
        if len(indices) > MAX_RANGE:
            raise TaskRangeError(
                f"task_range of split {chosen.name!r} asks for {len(indices)} tasks; one answer "
                f"holds at most {MAX_RANGE}: page through with start and stop"
            )
        return [chosen.task(index) for index in indices]

    def preview(self, split: Any) -> list[SplitTask]:
        """The first LIST_PREVIEW tasks of `split` (list_tasks' answer)."""
        chosen = self.split(split)
        return [chosen.task(index) for index in range(min(LIST_PREVIEW, len(chosen)))]

    def chosen(self, split: Any, index: Any, seed: int | None) -> SplitTask:
        """What `reset(split=..., index=...)` plays. Without an index the seed picks one
        (`seed mod num_tasks`), so the episode stays reproducible; without either, a
        random index (the episode's state names it)."""
        chosen = self.split(split)
        if index is None:
            if not len(chosen):
                raise TaskIndexError(f"split {chosen.name!r} of {self.env!r} has no tasks")
            index = seed % len(chosen) if seed is not None else secrets.randbelow(len(chosen))
        return self.task(chosen.name, index)


def check_split_reset(
    split: Any, index: Any, seed: Any = None, task_id: Any = None, variant: Any = None
) -> None:
    """Refuse a reset that names a split task and also a task, variant or seed of its own (a
    seed without an index is allowed: it picks the index)."""
    if split is None and index is not None:
        raise SplitRequestError(f"index {shown(index)} needs the split it indexes: add split")
    if split is not None and index is not None and seed is not None:
        raise SplitRequestError(
            "split and index name the task and its seed: leave seed out (a seed without an "
            "index picks the index)"
        )
    if split is not None and (task_id is not None or variant is not None):
        raise SplitRequestError(
            f"split {shown(split)} names the task: leave task_id out (the split's task "
            "spec from /task says which task and seed it plays)"
        )


def specs(tasks: Sequence[SplitTask]) -> list[dict[str, Any]]:
    return [task.spec() for task in tasks]
