"""ServiceBench's reward tables, as data, and the bounds they imply.

The rows and values are the seed's (`SEED_TABLES`, `BONUS_RULES`). Two things are
derived from them here, so that the rules in server/servicebench/rewards.py stay
free of numbers:

* `<row>_undone` rows (`OUTCOME_ROWS` negated): the rows paid for the task's writes
  are held only while the world holds the write, and taken back when it is undone.
* `BASE_ALLOWANCE`: how much base progress an episode may earn in all. It is the
  table's slack, ``1 - (every once-only row) - (the largest bonus total)``: exactly
  what the seed's optimal paths spend on calls that reach no milestone (0.05 on
  tasks 2 and 3, one call; nothing on task 1, whose table has no such row). Since
  the once-only rows are paid at most once (net of `_undone`), the bonuses once and
  base progress within the allowance, no episode can gain more than 1.00 in all.
* `non_completing_ceiling`: the most an episode that does not complete its task can
  score: every once-only row but the cheapest completion row, plus the allowance
  (0.45 / 0.70 / 0.50 on tasks 1 / 2 / 3, for every variant, which shares its task's
  table).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .tasks import TASK_SPECS

SCORE_DIGITS = 6
UNDONE = "_undone"

SEED_TABLES: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {
        "order_status_lookup": MappingProxyType(
            {
                "duplicate_call": -0.10,
                "irrelevant_endpoint": -0.05,
                "first_correct_call": 0.15,
                "user_id_retrieved": 0.30,
                "order_status_retrieved": 0.45,
                "completed_within_2_steps": 0.10,
                "completed_in_3_steps": 0.05,
            }
        ),
        "return_and_refund": MappingProxyType(
            {
                "duplicate_call": -0.10,
                "irrelevant_endpoint": -0.05,
                "base_progress": 0.05,
                "return_eligibility_confirmed": 0.15,
                "item_presence_verified": 0.15,
                "inventory_checked": 0.10,
                "correct_refund_issued": 0.25,
                "status_updated_to_returned": 0.20,
                "refund_before_eligibility": -0.15,
                "wrong_refund_amount": -0.10,
                "completed_within_5_steps": 0.10,
            }
        ),
        "billing_discrepancy": MappingProxyType(
            {
                "duplicate_call": -0.10,
                "irrelevant_endpoint": -0.05,
                "base_progress": 0.05,
                "order_data_retrieved": 0.10,
                "inventory_prices_verified": 0.10,
                "root_cause_identified": 0.25,
                "correct_adjustment_issued": 0.30,
                "wrong_refund_amount": -0.15,
                "completed_within_6_steps": 0.10,
                "precision_no_wrong_refund": 0.10,
            }
        ),
    }
)


@dataclass(frozen=True)
class BonusRule:
    """A completion bonus: paid if completion came within the step range (and cleanly)."""

    signal: str
    min_steps: int = 1
    max_steps: int | None = None
    needs_no_wrong_refund: bool = False


BONUS_RULES: Mapping[str, tuple[BonusRule, ...]] = MappingProxyType(
    {
        "order_status_lookup": (
            BonusRule("completed_within_2_steps", max_steps=2),
            BonusRule("completed_in_3_steps", min_steps=3, max_steps=3),
        ),
        "return_and_refund": (BonusRule("completed_within_5_steps", max_steps=5),),
        "billing_discrepancy": (
            BonusRule("completed_within_6_steps", max_steps=6),
            BonusRule("precision_no_wrong_refund", needs_no_wrong_refund=True),
        ),
    }
)

OUTCOME_ROWS: frozenset[str] = frozenset(
    {"correct_refund_issued", "status_updated_to_returned", "correct_adjustment_issued"}
)
"""Rows paid for a state of the world the task's writes create (see the rewards module)."""
PENALTY_ROWS: frozenset[str] = frozenset(
    {"duplicate_call", "irrelevant_endpoint", "refund_before_eligibility", "wrong_refund_amount"}
)


def _with_undone_rows(rows: Mapping[str, float]) -> Mapping[str, float]:
    table = dict(rows)
    table.update({name + UNDONE: -value for name, value in rows.items() if name in OUTCOME_ROWS})
    return MappingProxyType(table)


REWARD_TABLE: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {task_id: _with_undone_rows(rows) for task_id, rows in SEED_TABLES.items()}
)


def once_rows(task_id: str) -> tuple[str, ...]:
    """The rows an episode can hold at most once: milestones and the first correct call."""
    bonuses = {rule.signal for rule in BONUS_RULES[task_id]}
    return tuple(
        name
        for name in SEED_TABLES[task_id]
        if name not in PENALTY_ROWS and name not in bonuses and name != "base_progress"
    )


def best_bonus(task_id: str) -> float:
    """The largest total of bonuses one completion can earn (some exclude each other by steps)."""
    rules = BONUS_RULES[task_id]
    horizon = 1 + max(max(rule.min_steps, rule.max_steps or 0) for rule in rules)
    return max(
        sum(
            SEED_TABLES[task_id][rule.signal]
            for rule in rules
            if rule.min_steps <= steps <= (rule.max_steps or steps)
        )
        for steps in range(1, horizon + 1)
    )


def _allowance(task_id: str) -> float:
    if "base_progress" not in SEED_TABLES[task_id]:
        return 0.0
    slack = round(
        1.0 - sum(SEED_TABLES[task_id][name] for name in once_rows(task_id)) - best_bonus(task_id),
        SCORE_DIGITS,
    )
    if slack < 0:
        raise ValueError(f"{task_id}: the table pays more than 1.0 on its own")
    return slack


BASE_ALLOWANCE: Mapping[str, float] = MappingProxyType(
    {task_id: _allowance(task_id) for task_id in SEED_TABLES}
)


def non_completing_ceiling(task_id: str) -> float:
    """The most an episode that never completes the task can score under this table."""
    table = SEED_TABLES[task_id]
    held = sum(table[name] for name in once_rows(task_id)) - min(
        table[name] for name in TASK_SPECS[task_id].completion
    )
    return round(held + BASE_ALLOWANCE[task_id], SCORE_DIGITS)
