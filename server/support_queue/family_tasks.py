"""Support Queue's scenario families as tasks of their own: one ticket of one family.

The three tasks mix families in one queue; the Task API's splits (server/tasks/splits.py)
play one family at a time, so that a family can be held out of training entirely
(data/splits.json) and results can be read per family. A family's episode is one
ticket drawn from the family's situations with the settings of its *home* task, the
easiest task whose composition draws it: that task's chances of a breached SLA and
of executive pressure, and its guidance. Everything comes from the scenario data;
nothing here is typed per family.

The episode's card names no family: its id and title are the same for every family
(`single_ticket`, only the difficulty differs), because a family's name says much of
its labels (a duplicate charge goes to billing) and the card is in every observation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ...models import TaskCard
from .scenarios import COMPOSITIONS, FAMILIES, SITUATIONS, Composition, Slot
from .tasks import ENV_NAME, TASKS, SupportTask

CARD_ID = "single_ticket"
DIFFICULTIES = ("easy", "medium", "hard")
ONE_OF_EACH = MappingProxyType({"priority": 1, "queue": 1, "disposition": 1})
"""One ticket cannot differ from itself: the diversity a composition asks of a queue is moot."""


@dataclass(frozen=True, slots=True)
class FamilyTask:
    """How one family is played on its own: its one-slot composition, its card and guidance."""

    family: str
    composition: Composition
    card: TaskCard
    instructions: str


def _home(family: str) -> SupportTask:
    """The easiest task whose composition draws a situation of `family`."""
    for task in sorted(TASKS, key=lambda t: DIFFICULTIES.index(t.card.difficulty)):
        slots = COMPOSITIONS[task.card.id].slots
        if any(situation.family == family for slot in slots for situation in slot.draws):
            return task
    raise ValueError(f"support family {family!r} is drawn by no task's composition")


def _family_task(family: str) -> FamilyTask:
    home = _home(family)
    plan = COMPOSITIONS[home.card.id]
    situations = tuple(s for s in SITUATIONS.values() if s.family == family)
    card = TaskCard(
        id=CARD_ID,
        env=ENV_NAME,
        title="Single ticket",
        difficulty=home.card.difficulty,
        description="One ticket: choose its priority, queue and disposition, and write an "
        "internal summary and a safe first reply.",
        max_steps=1,
    )
    composition = Composition(
        task_id=family,
        breach_chance=plan.breach_chance,
        pressure_chance=plan.pressure_chance,
        min_distinct=ONE_OF_EACH,
        slots=(Slot(f"a {family.replace('_', ' ')} ticket", situations),),
    )
    return FamilyTask(family, composition, card, home.instructions)


FAMILY_TASKS: Mapping[str, FamilyTask] = MappingProxyType({f: _family_task(f) for f in FAMILIES})


def composition_of(key: str) -> Composition:
    """The composition a variant was drawn from: a task's, or a family's (`Variant.task_id`)."""
    found = COMPOSITIONS.get(key)
    return found if found is not None else FAMILY_TASKS[key].composition
