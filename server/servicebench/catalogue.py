"""ServiceBench's catalogue of task families: the one registry, read from data.

A family is one situation a customer request can be in (a damage claim inside the
window and the limit, the same claim above the limit, on an order that is not the
requester's, ...). Its `workflow` names the class of end state the served policy
implies: which writes, on which records, or none. Families hang under the task
cards that `/tasks` lists; each is played deterministically by (family, seed)
(`ServiceBenchEnvironment.reset(task_id, seed=..., family=...)`).

`held_out` families are never served by a training seed: they are the Task API's
`test_families` split (about a quarter of the families, spread across workflows).

This module reads data/servicebench_families.json and imports nothing of the
environment, so anything (the Task API, scripts, the docs' table generator) can read it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from ... import DATA_DIR
from ...read_only_json import read_only

FAMILIES_PATH = DATA_DIR / "servicebench_families.json"
FAMILY_DATA: Mapping[str, Any] = read_only(json.loads(FAMILIES_PATH.read_text(encoding="utf-8")))

Difficulty = Literal["easy", "medium", "hard"]


@dataclass(frozen=True, slots=True)
class FamilyInfo:
    """A family as the Task API and docs/servicebench.md list it."""

    name: str
    """Stable id."""
    task_id: str
    """The task card (GET /tasks) the family hangs under."""
    workflow: str
    """The class of expected end state: lookup, refund, refund_and_return, reship, cancel,
    decline, escalation, verification_failed, address_update, payment_reversal."""
    difficulty: Difficulty
    held_out: bool
    """Never in train: the `test_families` split."""
    title: str


def _info(row: Mapping[str, Any]) -> FamilyInfo:
    return FamilyInfo(
        name=row["name"],
        task_id=row["task"],
        workflow=row["workflow"],
        difficulty=row["difficulty"],
        held_out=row["held_out"],
        title=row["title"],
    )


FAMILIES: tuple[FamilyInfo, ...] = tuple(_info(row) for row in FAMILY_DATA["families"])
FAMILY_BY_NAME: Mapping[str, FamilyInfo] = MappingProxyType({info.name: info for info in FAMILIES})
if len(FAMILY_BY_NAME) != len(FAMILIES):
    raise ValueError("two families share a name in " + FAMILIES_PATH.name)
HELD_OUT_FAMILIES: frozenset[str] = frozenset(info.name for info in FAMILIES if info.held_out)
WORKFLOWS: tuple[str, ...] = tuple(dict.fromkeys(info.workflow for info in FAMILIES))


def servicebench_families() -> tuple[FamilyInfo, ...]:
    """Every family, in a stable order (by task, then family)."""
    return FAMILIES


def family_info(name: str) -> FamilyInfo:
    """The family called `name` (KeyError if there is none)."""
    return FAMILY_BY_NAME[name]


def families_of_task(task_id: str) -> tuple[FamilyInfo, ...]:
    """The families that hang under one task card, in catalogue order."""
    return tuple(info for info in FAMILIES if info.task_id == task_id)
