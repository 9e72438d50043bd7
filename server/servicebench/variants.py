"""Seeded ServiceBench task variants, as pure data (no environment, no agent).

`build_variant(task_id, seed, attempt, family)` draws a whole world (world.py) with
`random.Random(f"servicebench:{task_id}:{seed}:{attempt}")` (with the family's name
in the string when a family of the billing task is asked for), whose string seed is
hashed with SHA-512 by `random`, so the same arguments give the same variant in every
process. It plants the task's situation in that world (one of the families of
families.py) and renders the task's prompt template with the variant's own ids and
amounts. The support policy served with it is drawn from its own stream, so the world
is the one the seed always drew, and only with values under which the task's answer
stays right (a limit at or above its refund; the world's own return window).
Validity is not assumed here: proof.py proves every variant. The request families
(the other task cards) are drawn by requests/variants.py; draw.py picks the builder.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from ...mock_services import CANONICAL_WORLD, World, dollars
from ..tasks.variants import Draw
from .families import BUILDERS, FAMILY_BUILDERS, Plan
from .policy import policy_allowing
from .refund_readings import Readings, readings_for
from .tasks import TASK_SPECS, TaskSpec, money_text, render_prompt, seed_expectations
from .world import RETURN_WINDOW, WorldDraft


@dataclass(frozen=True)
class Variant(Draw):
    """One served task: its world, its graded spec and what its proof must check."""

    family: str
    world: World
    spec: TaskSpec
    mentions: tuple[str, ...]
    """Identifiers the prompt must carry (ids, email, SKU, the charged amount)."""
    readings: Readings | None = None
    """The right refund reading and the wrong ones (tasks with a refund)."""
    hidden_cents: tuple[int, ...] = ()
    """Derived amounts that no prompt or response may state (task 3)."""

    @property
    def label(self) -> str:
        return f"{super().label} ({self.family})"


def _prompt(task_id: str, plan: Plan) -> tuple[str, tuple[str, ...]]:
    """The rendered prompt and the identifiers it must mention."""
    order, customer = plan.order, plan.customer
    values = {
        "order_status_lookup": {"order_id": order["order_id"], "email": customer["email"]},
        "return_and_refund": {
            "email": customer["email"],
            "sku": plan.item_sku or "",
            "order_id": order["order_id"],
        },
        "billing_discrepancy": {
            "user_id": customer["user_id"],
            "order_id": order["order_id"],
            "charged": money_text(order["total_charged"]),
        },
    }[task_id]
    template = task_id
    if plan.damaged_units is not None:  # several units of the item: say how many arrived damaged
        template = "return_and_refund_units"
        quantity = next(item["quantity"] for item in order["items"] if item["sku"] == plan.item_sku)
        values.update(
            damaged=str(plan.damaged_units),
            quantity=str(quantity),
            unit_word="unit" if plan.damaged_units == 1 else "units",
        )
    return render_prompt(template, **values), tuple(values.values())


def build_variant(task_id: str, seed: int, attempt: int = 0, family: str | None = None) -> Variant:
    """The (task, seed) variant as drawn on `attempt` (the proof may reject one); `family`
    draws a variant of that family of the task (a task with one family: the same variant)."""
    canonical = TASK_SPECS[task_id]
    named = family is not None and task_id == "billing_discrepancy"
    stream = (
        f"servicebench:{task_id}:{family}:{seed}:{attempt}"
        if named
        else (f"servicebench:{task_id}:{seed}:{attempt}")
    )
    draft = WorldDraft(random.Random(stream))
    plan = FAMILY_BUILDERS[family](draft) if family is not None else BUILDERS[task_id](draft)
    world = draft.finish()
    policy = policy_allowing(
        random.Random(f"servicebench-policy:{stream}"),
        RETURN_WINDOW.days,
        plan.refund_cents or 0,
    )
    prompt, mentions = _prompt(task_id, plan)
    order = plan.order
    spec = replace(
        canonical,
        card=canonical.card.model_copy(update={"description": prompt}),
        customer_id=plan.customer["user_id"],
        order_id=order["order_id"],
        order_skus=tuple(dict.fromkeys(item["sku"] for item in order["items"])),
        item_sku=plan.item_sku if canonical.item_sku else None,
        refund_amount=dollars(plan.refund_cents) if plan.refund_cents is not None else None,
        policy=policy.text(),
        **plan.evidence,
    )
    spec = replace(
        spec,
        expected=seed_expectations(task_id, spec.order_id, spec.refund_amount, spec.target_status),
    )
    readings = (
        readings_for(world, plan.family, order["order_id"], plan.item_sku, plan.damaged_units or 1)
        if plan.refund_cents is not None
        else None
    )
    return Variant(
        task_id, seed, attempt, plan.family, world, spec, mentions, readings, plan.hidden_cents
    )


CANONICAL_FAMILIES: Mapping[str, str] = MappingProxyType(
    {
        "order_status_lookup": "order_status",
        "return_and_refund": "damaged_item",
        "billing_discrepancy": "coupon_added_percent_of_list",
    }
)


def canonical_variant(task_id: str) -> Variant:
    """The seed's own task as a variant: the canonical world and spec, unchanged."""
    spec = TASK_SPECS[task_id]
    family = CANONICAL_FAMILIES[task_id]
    readings = (
        readings_for(CANONICAL_WORLD, family, spec.order_id, spec.item_sku)
        if spec.refund_amount is not None
        else None
    )
    return Variant(task_id, 0, 0, family, CANONICAL_WORLD, spec, (), readings)
