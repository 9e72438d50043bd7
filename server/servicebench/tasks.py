"""The three ServiceBench tasks, as data.

Each task is a `TaskSpec`: the public card (id, integer alias, title, difficulty,
the prompt, step budget), the entities it is about, the endpoints that bear on it,
and the milestones that complete it. Prompts are templates (`PROMPT_TEMPLATES`):
the canonical task renders the seed's prompt verbatim from the seed data, a seeded
variant (server/servicebench/variants.py) renders the same template with its own
values. The canonical amounts a grader checks (the damaged item's price, the
overbilled amount) are *derived* from the shared seed data here, never typed in.

Endpoints relevant to each task (any other endpoint earns the -0.05 irrelevant-
endpoint penalty; a write to any other order or user, to another status, or to a
user field other than the task's `note_fields`, too):

=============================  ======  ======  ======
endpoint                       task 1  task 2  task 3
=============================  ======  ======  ======
user  /users/lookup            yes     yes     yes
user  /users/list              -       -       -
user  /users/update            -       -       yes (the customer's notes only)
order /orders/lookup           yes     yes     yes
order /orders/by-user          yes     yes     yes
order /orders/update-status    -       yes (the order, to 'returned')  -
order /orders/process-refund   -       yes (the order)  yes (the order)
inv.  /inventory/lookup        -       yes     yes
inv.  /inventory/check-stock   -       -       -
inv.  /inventory/price-history -       yes     yes
inv.  /inventory/update-stock  -       -       -
=============================  ======  ======  ======

Task 3's evidence milestones depend on how the billing error arose: a coupon error
needs the order with its coupon (`order_evidence`) and a list price from
`/inventory/lookup` (`price_evidence`); a stale-price error needs the order's items
and the price at the order date, which only `/inventory/price-history` shows.

Step budgets: 8 / 12 / 15 calls against optimal paths of 2 / 5 / 4. The spare calls
grow with difficulty (the hard task needs exploration to find the root cause), so an
agent can recover from a wrong turn, while a looping agent still ends quickly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from ...mock_services import BASE, FULL_SURFACE, coupon_discount, dollars, order_lines, to_cents
from ...mock_services.paths import (
    INVENTORY,
    INVENTORY_LOOKUP,
    INVENTORY_PRICE_HISTORY,
    ORDER,
    ORDERS_BY_USER,
    ORDERS_LOOKUP,
    ORDERS_PROCESS_REFUND,
    ORDERS_UPDATE_STATUS,
    USER,
    USERS_LIST,
    USERS_LOOKUP,
    USERS_UPDATE,
)
from ...models import TaskCard
from .catalogue import FAMILY_DATA
from .policy import CANONICAL_POLICY
from .spec import Expect, TaskSpec, seed_expectations

__all__ = ["ENV_NAME", "TASK_CARDS", "TASK_SPECS", "Expect", "TaskSpec", "seed_expectations"]

ENV_NAME = "servicebench"


PROMPT_TEMPLATES: Mapping[str, str] = MappingProxyType(
    {
        "order_status_lookup": "Find the current delivery status of order {order_id} for customer "
        "{email}. Report the order status.",
        "return_and_refund": "Customer {email} reports that item {sku} from order {order_id} "
        "arrived damaged. Verify the order is eligible for return, check the "
        "item was in the order, process the refund for the damaged item, and "
        "update the order status to 'returned'.",
        "return_and_refund_units": "Customer {email} reports that {damaged} of the {quantity} units of "
        "item {sku} from order {order_id} arrived damaged. Verify the order is "
        "eligible for return, check the item was in the order, process the refund "
        "for the damaged {unit_word}, and update the order status to 'returned'.",
        "billing_discrepancy": "Customer {user_id} reports being charged ${charged} for order "
        "{order_id}, but believes the total should be lower. Investigate the "
        "discrepancy across all services, identify the root cause, apply the "
        "correct adjustment, and document what happened.",
    }
)


def render_prompt(task_id: str, **values: str) -> str:
    """The prompt from its template (`return_and_refund_units`: a variant's order holds
    several units of the damaged item, and the prompt says how many arrived damaged)."""
    return PROMPT_TEMPLATES[task_id].format(**values)


def money_text(amount: float) -> str:
    """An amount as the prompts and refund reasons print it: 247.50."""
    return f"{to_cents(amount) / 100:.2f}"


def line_item_price(order_id: str, sku: str) -> float:
    """What one unit of `sku` was charged on the order (the refund for one damaged unit)."""
    return next(
        item["unit_price"] for item in BASE["orders"][order_id]["items"] if item["sku"] == sku
    )


def overbilled_amount(order_id: str) -> float:
    """Charged minus what should have been charged: the line items less the coupon, by its rule."""
    order = BASE["orders"][order_id]
    lines = order_lines(order, BASE["products"])
    coupon = BASE["coupons"][order["coupon_code"]] if order["coupon_code"] else None
    discount = coupon_discount(coupon, lines) if coupon else 0
    line_total = sum(line.quantity * line.unit_cents for line in lines)
    return dollars(to_cents(order["total_charged"]) - (line_total - discount))


def _card(
    task_id: str, alias: int, title: str, difficulty: str, prompt: str, max_steps: int
) -> TaskCard:
    return TaskCard(
        id=task_id,
        env=ENV_NAME,
        title=title,
        difficulty=difficulty,
        description=prompt,
        max_steps=max_steps,
        alias=alias,
    )


def _skus(order_id: str) -> tuple[str, ...]:
    return tuple(item["sku"] for item in BASE["orders"][order_id]["items"])


def _email(user_id: str) -> str:
    return BASE["users"][user_id]["email"]


READ_ENDPOINTS = ((USER, USERS_LOOKUP), (ORDER, ORDERS_LOOKUP), (ORDER, ORDERS_BY_USER))
INVENTORY_READS = ((INVENTORY, INVENTORY_LOOKUP), (INVENTORY, INVENTORY_PRICE_HISTORY))

ORDER_STATUS_LOOKUP = TaskSpec(
    card=_card(
        "order_status_lookup",
        1,
        "Order Status Lookup",
        "easy",
        render_prompt("order_status_lookup", order_id="ORD-1005", email=_email("USR-001")),
        8,
    ),
    customer_id="USR-001",
    order_id="ORD-1005",
    order_skus=_skus("ORD-1005"),
    relevant_endpoints=READ_ENDPOINTS,
    completion=("order_status_retrieved",),
    policy=CANONICAL_POLICY.text(),
)

RETURN_AND_REFUND = TaskSpec(
    card=_card(
        "return_and_refund",
        2,
        "Process Return and Refund",
        "medium",
        render_prompt(
            "return_and_refund", email=_email("USR-001"), sku="SKU-445", order_id="ORD-1005"
        ),
        12,
    ),
    customer_id="USR-001",
    order_id="ORD-1005",
    order_skus=_skus("ORD-1005"),
    relevant_endpoints=READ_ENDPOINTS
    + INVENTORY_READS
    + ((ORDER, ORDERS_PROCESS_REFUND), (ORDER, ORDERS_UPDATE_STATUS)),
    completion=("correct_refund_issued", "status_updated_to_returned"),
    item_sku="SKU-445",
    target_status="returned",
    refund_amount=line_item_price("ORD-1005", "SKU-445"),
    expected=seed_expectations(
        "return_and_refund", "ORD-1005", line_item_price("ORD-1005", "SKU-445"), "returned"
    ),
    policy=CANONICAL_POLICY.text(),
)

BILLING_DISCREPANCY = TaskSpec(
    card=_card(
        "billing_discrepancy",
        3,
        "Billing Discrepancy Investigation",
        "hard",
        render_prompt(
            "billing_discrepancy",
            user_id="USR-003",
            order_id="ORD-1009",
            charged=money_text(BASE["orders"]["ORD-1009"]["total_charged"]),
        ),
        15,
    ),
    customer_id="USR-003",
    order_id="ORD-1009",
    order_skus=_skus("ORD-1009"),
    relevant_endpoints=READ_ENDPOINTS
    + INVENTORY_READS
    + ((ORDER, ORDERS_PROCESS_REFUND), (USER, USERS_UPDATE)),
    completion=("correct_adjustment_issued",),
    refund_amount=overbilled_amount("ORD-1009"),
    note_fields=("notes",),
    expected=seed_expectations(
        "billing_discrepancy", "ORD-1009", overbilled_amount("ORD-1009"), None
    ),
    policy=CANONICAL_POLICY.text(),
)

SEED_TASK_IDS = ("order_status_lookup", "return_and_refund", "billing_discrepancy")
REQUEST_ENDPOINTS = tuple(
    (entry.service, entry.path) for entry in FULL_SURFACE.endpoints if entry.path != USERS_LIST
)
"""The request tasks' relevant endpoints: every endpoint but the list of all users. A write
among them that the task does not intend is an unintended write, whichever service it hits."""
REQUEST_PROMPTS: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {row["id"]: row["prompts"] for row in FAMILY_DATA["tasks"]}
)
"""Per request task, its prompt templates by name (a family's plan names the one it uses)."""


def _request_template(row: Mapping[str, object]) -> TaskSpec:
    """A request task's card and what its families share; each variant fills in the rest.
    The card's description is the first prompt with its blanks shown as <blank>."""
    prompt = next(iter(row["prompts"].values()))  # type: ignore[attr-defined]
    card = _card(
        str(row["id"]),
        int(row["alias"]),  # type: ignore[call-overload]
        str(row["title"]),
        str(row["difficulty"]),
        re.sub(r"\{(\w+)\}", r"<\1>", prompt),
        int(row["max_steps"]),  # type: ignore[call-overload]
    )
    return TaskSpec(
        card=card, customer_id="", order_id="", relevant_endpoints=REQUEST_ENDPOINTS, completion=()
    )


TASK_SPECS: Mapping[str, TaskSpec] = MappingProxyType(
    {
        spec.card.id: spec
        for spec in (
            ORDER_STATUS_LOOKUP,
            RETURN_AND_REFUND,
            BILLING_DISCREPANCY,
            *(_request_template(row) for row in FAMILY_DATA["tasks"]),
        )
    }
)
TASK_CARDS: tuple[TaskCard, ...] = tuple(spec.card for spec in TASK_SPECS.values())
