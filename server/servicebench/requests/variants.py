"""Seeded variants of the request families: a world, a policy and the end state it implies.

`build_request_variant(task_id, seed, attempt, family)` draws the family's world with
`random.Random(f"servicebench:{task_id}:{family}:{seed}:{attempt}")`, lets the family
plant its situation under a drawn policy (families.py, families_orders.py), renders the task's
prompt and builds the graded spec: the requester, the order, the intended writes the
served policy implies, the family's reward table and the oracle's optimal call count.
A seed alone picks the family (`default_family`): a training seed never a held-out one.
Validity is not assumed here: proof.py proves every variant before it is served.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import date, timedelta
from types import MappingProxyType

from ....mock_services import World, dollars, to_cents
from ...tasks.seeds import TRAIN
from ..catalogue import families_of_task
from ..grading.reward_table import FAMILY_COMPLETION
from ..refund_readings import Readings
from ..tasks import REQUEST_PROMPTS, TASK_SPECS
from ..variants import Variant
from ..world import price_on
from . import families as claims
from . import families_orders as orders
from .world import RequestDraft, RequestPlan, expectations

REQUEST_FAMILIES = tuple(FAMILY_COMPLETION)
"""Every family of the request tasks (those graded by a family table)."""
REQUEST_BUILDERS: Mapping[str, Callable[[RequestDraft], RequestPlan]] = MappingProxyType(
    {name: getattr(claims, name, None) or getattr(orders, name) for name in REQUEST_FAMILIES}
)


def default_family(task_id: str, seed: int) -> str:
    """The family a seed alone plays: any of the task's, but never a held-out one for the
    canonical seed 0 or a seed of the training range."""
    training = seed == 0 or seed in TRAIN
    pool = [info.name for info in families_of_task(task_id) if not (training and info.held_out)]
    return random.Random(f"servicebench-family:{task_id}:{seed}").choice(pool)


def _readings(world: World, plan: RequestPlan) -> Readings | None:
    """A refund family's right amount and the amounts a careless reading would refund: the
    whole charge, today's list price, the whole line, one unit, or today's price drop."""
    if plan.refund_cents is None or plan.item is None or plan.cancel:
        return None
    order = world.tables["orders"][plan.order["order_id"]]
    product = world.tables["products"][plan.item["sku"]]
    line = next(item for item in order["items"] if item["sku"] == product["sku"])
    quantity, unit, now = line["quantity"], to_cents(line["unit_price"]), to_cents(product["price"])
    units = plan.damaged or quantity
    wrong = {"full_charge": to_cents(order["total_charged"]), "whole_line": quantity * unit}
    if plan.damaged is not None:
        wrong.update(list_price_now=units * now, one_unit=unit)
    else:  # a price adjustment: to today's price, or per unit once
        placed = date.fromisoformat(order["placed_at"])
        wrong.update(
            to_price_now=quantity * (unit - now),
            one_unit=plan.refund_cents // quantity,
            to_first_change=quantity * (unit - price_on(product, placed + timedelta(days=1))),
        )
    return Readings(
        correct=plan.refund_cents,
        wrong=MappingProxyType(
            {
                name: cents
                for name, cents in wrong.items()
                if cents > 0 and cents != plan.refund_cents
            }
        ),
    )


def build_request_variant(task_id: str, seed: int, attempt: int, family: str) -> Variant:
    """The family's variant for (seed, attempt), as drawn (the proof may reject it)."""
    draft = RequestDraft(random.Random(f"servicebench:{task_id}:{family}:{seed}:{attempt}"))
    plan = REQUEST_BUILDERS[family](draft)
    world = draft.finish()
    values = plan.prompt_values()
    template = REQUEST_PROMPTS[task_id][plan.prompt]
    prompt = template.format(**values)
    order, requester = plan.order, plan.requester
    customer_id = requester["user_id"] if requester is not None else ""
    base = TASK_SPECS[task_id]
    spec = replace(
        base,
        card=base.card.model_copy(update={"description": prompt}),
        customer_id=customer_id,
        owner_id=order["user_id"] if order["user_id"] != customer_id else "",
        order_id=order["order_id"],
        order_skus=tuple(dict.fromkeys(item["sku"] for item in order["items"])),
        item_sku=plan.item["sku"] if plan.item is not None else None,
        refund_amount=dollars(plan.refund_cents) if plan.refund_cents is not None else None,
        completion=FAMILY_COMPLETION[family],
        expected=expectations(plan, draft),
        table=family,
        optimal_calls=plan.optimal_calls,
        policy=plan.policy.text(),
    )
    mentions = tuple(
        value
        for name, value in values.items()
        if "{" + name + "}" in template and name != "unit_word"
    )
    return Variant(task_id, seed, attempt, family, world, spec, mentions, _readings(world, plan))
