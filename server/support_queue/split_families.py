"""Support Queue's families as the Task API's splits see them (server/tasks/splits.py).

The scenario families of data/support_scenarios.json, in their order there, each
played on its own as one ticket (server/support_queue/family_tasks.py); the ones
data/splits.json holds out are the `test_families` split.
"""

from __future__ import annotations

from ..tasks.splits import Family
from .family_tasks import FAMILY_TASKS


def registry_families() -> tuple[Family, ...]:
    return tuple(
        Family(name, task.card, task.card.difficulty) for name, task in FAMILY_TASKS.items()
    )
