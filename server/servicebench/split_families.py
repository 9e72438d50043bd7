"""ServiceBench's families as the Task API's splits see them (server/tasks/splits.py).

The one place that reads the family registry for the splits: every family of
`catalogue.servicebench_families()`, in its order, with the card of the task it plays; the
registry's `held_out` flags decide which families only the `test_families` split serves.
"""

from __future__ import annotations

from ..tasks.splits import Family
from .catalogue import family_info, servicebench_families
from .draw import draw
from .tasks import TASK_CARDS
from .variants import Variant

_CARDS = {card.id: card for card in TASK_CARDS}


def registry_families() -> tuple[Family, ...]:
    """Every family of the registry, in its order, with the card of the task it plays."""
    return tuple(
        Family(
            info.name,
            _CARDS[info.task_id],
            info.difficulty,
            workflow=info.workflow,
            held_out=info.held_out,
        )
        for info in servicebench_families()
    )


def build_family_variant(family: str, seed: int, attempt: int = 0) -> Variant:
    """Attempt `attempt` of `family` on `seed`, drawn as a reset naming the family draws it."""
    return draw(family_info(family).task_id, seed, attempt, family)
