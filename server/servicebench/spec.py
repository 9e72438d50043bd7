"""What grading one ServiceBench task needs: its `TaskSpec`, and its intended writes.

A `TaskSpec` is the public card (id, title, difficulty, prompt, step budget) plus the
entities the task is about, the endpoints that bear on it, the milestones that complete
it and its expected end state: the reset world plus exactly the writes in `expected`
(each an `Expect` over effects, effects.py). The seed's three tasks and every seeded
variant or family build one (tasks.py, variants.py); the rewards and the outcome check
read nothing else of a task.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, NamedTuple

from ...mock_services import to_cents
from ...mock_services.paths import INVENTORY_LOOKUP
from ...models import TaskCard
from .grading.effects import EffectKey


class Expect(NamedTuple):
    """One intended write: an effect (effects.py) the expected end state holds.

    `value` is the effect's expected total (additive kinds: cents refunded, units, cases
    opened) or value (set kinds: a status, an address). `row` is the reward-table outcome
    row held while every expectation of that row is met (None: part of the end state, no
    row of its own); `check` names the outcome check that reports it.
    """

    key: EffectKey
    value: Any
    row: str | None
    check: str


@dataclass(frozen=True)
class TaskSpec:
    """A task card plus what grading it needs: targets, relevant endpoints, completion."""

    card: TaskCard
    customer_id: str
    order_id: str
    relevant_endpoints: tuple[tuple[str, str], ...]
    completion: tuple[str, ...]
    order_skus: tuple[str, ...] = ()
    """SKUs in the task's order: inventory calls about them bear on the task."""
    item_sku: str | None = None
    target_status: str | None = None
    refund_amount: float | None = None
    order_evidence: tuple[str, ...] = ("items", "coupon_applied")
    """Order fields (non-empty) whose lookup earns task 3's order_data_retrieved."""
    price_evidence: tuple[str, ...] = (INVENTORY_LOOKUP,)
    """Inventory endpoints whose answer about an order SKU earns inventory_prices_verified."""
    note_fields: tuple[str, ...] = ()
    """Fields of the customer's record the task lets the agent write (task 3: `notes`, to
    document the case). Any other user field, or another user, is collateral damage."""
    expected: tuple[Expect, ...] = ()
    """The intended writes: the expected end state is the reset world plus exactly these."""
    table: str = ""
    """The reward table that grades the task (empty: the card's id, one of the seed's)."""
    owner_id: str = ""
    """The order's owner when the requester is someone else (or nobody: `customer_id` "")."""
    optimal_calls: int = 0
    """The oracle's call count on this variant (0: the task's fixed optimum)."""
    policy: str = ""
    """The support policy served with the task (every observation carries it)."""

    @property
    def table_id(self) -> str:
        return self.table or self.card.id

    @cached_property
    def user_ids(self) -> frozenset[str]:
        """Users the task is about: the requester, and the order's owner if another."""
        return frozenset(uid for uid in (self.customer_id, self.owner_id) if uid)

    @cached_property
    def intended_keys(self) -> Mapping[EffectKey, Any]:
        """Effect key -> the expected value of every intended or allowed write (None: any
        value, e.g. the wording of a case note)."""
        keys: dict[EffectKey, Any] = {
            ("user", self.customer_id, name): None for name in self.note_fields
        }
        keys.update((expect.key, expect.value) for expect in self.expected)
        return MappingProxyType(keys)


def seed_expectations(
    task_id: str, order_id: str, refund_amount: float | None, target_status: str | None
) -> tuple[Expect, ...]:
    """The intended writes of the seed's tasks: the refund total (task 2's "correct refund",
    task 3's "correct adjustment") and task 2's status `returned`."""
    row = {"return_and_refund": "correct_refund_issued"}.get(task_id, "correct_adjustment_issued")
    found: list[Expect] = []
    if refund_amount is not None:
        found.append(
            Expect(("refund", order_id), to_cents(refund_amount), row, "refunded_in_episode")
        )
    if target_status is not None:
        found.append(
            Expect(("status", order_id), target_status, "status_updated_to_returned", "status")
        )
    return tuple(found)
