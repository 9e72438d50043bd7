"""Which generator draws a ServiceBench variant: the seed's tasks or the request families.

`draw(task_id, seed, attempt, family)` is the environment's generator (server/tasks/variants.py
caches and proves what it returns). The seed's three tasks are drawn by variants.py;
every other task card is a request task, whose families are drawn by
requests/variants.py (a seed alone picks one with `default_family`).
"""

from __future__ import annotations

from .requests.variants import build_request_variant, default_family
from .tasks import SEED_TASK_IDS
from .variants import Variant, build_variant


def draw(task_id: str, seed: int, attempt: int = 0, family: str | None = None) -> Variant:
    """Attempt `attempt` of the (task, seed) variant, of `family` if named."""
    if task_id in SEED_TASK_IDS:
        return build_variant(task_id, seed, attempt, family)
    return build_request_variant(task_id, seed, attempt, family or default_family(task_id, seed))
