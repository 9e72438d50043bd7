"""ServiceBench's reward tables, as data, and the bounds they imply.

The seed's three tasks keep the seed's rows and values (`SEED_TABLES`, `BONUS_RULES`);
every other family has a table of its own (`FAMILY_TABLES`), built from
data/servicebench_families.json: the penalty rows, the family's evidence (read
milestones) and writes (outcome rows, with their values), and two bonuses: finishing
within two calls of the optimum, and finishing with no policy violation (no write the
task does not intend, no wrong amount, no write before the requester and the order
were checked). A table's id is its task's (seed tasks) or its family's name.
Two things are derived from the tables here, so that the rules in
server/servicebench/grading/rewards.py stay free of numbers:

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

from ..catalogue import FAMILY_DATA
from ..tasks import TASK_SPECS

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


FAMILY_PENALTIES = (
    "duplicate_call",
    "irrelevant_endpoint",
    "unintended_write",
    "wrong_amount",
    "write_before_verification",
)
FAMILY_BONUSES = ("completed_efficiently", "policy_followed")
VERIFICATION_ROWS = ("requester_verified", "order_checked")
"""Read milestones a family's write must follow (those in its table)."""


def _family_table(row: Mapping[str, object]) -> Mapping[str, float]:
    values = FAMILY_DATA["rows"]
    names = FAMILY_PENALTIES + tuple(row["evidence"]) + FAMILY_BONUSES  # type: ignore[operator]
    table = {name: values[name] for name in names}
    table.update(row["writes"])  # type: ignore[call-overload]
    return MappingProxyType(table)


FAMILY_TABLES: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {row["name"]: _family_table(row) for row in FAMILY_DATA["families"] if "writes" in row}
)
"""The reward table of each family that is not one of the seed's tasks, by family name."""
FAMILY_COMPLETION: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {row["name"]: tuple(row["writes"]) for row in FAMILY_DATA["families"] if "writes" in row}
)
"""A family's completion rows: every write it intends."""


@dataclass(frozen=True)
class BonusRule:
    """A completion bonus: paid if completion came within the step range (and cleanly).

    `slack`: the range ends that many calls past the variant's optimum (a family's
    optimum varies with its variant, e.g. one restock per order line)."""

    signal: str
    min_steps: int = 1
    max_steps: int | None = None
    needs_no_wrong_refund: bool = False
    slack: int | None = None
    needs_no_violation: bool = False


FAMILY_BONUS_RULES = (
    BonusRule("completed_efficiently", slack=2),
    BonusRule("policy_followed", needs_no_violation=True),
)
BONUS_RULES: Mapping[str, tuple[BonusRule, ...]] = MappingProxyType(
    {
        **dict.fromkeys(FAMILY_TABLES, FAMILY_BONUS_RULES),
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
).union(*FAMILY_COMPLETION.values())
"""Rows paid for a state of the world the task's writes create (see the rewards module)."""
PENALTY_ROWS: frozenset[str] = frozenset(
    {"duplicate_call", "irrelevant_endpoint", "refund_before_eligibility", "wrong_refund_amount"}
).union(FAMILY_PENALTIES)
TABLES: Mapping[str, Mapping[str, float]] = MappingProxyType({**SEED_TABLES, **FAMILY_TABLES})
"""Every table, by id: a seed task's id or a family's name."""
COMPLETION: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {**{task_id: TASK_SPECS[task_id].completion for task_id in SEED_TABLES}, **FAMILY_COMPLETION}
)


def _with_undone_rows(rows: Mapping[str, float]) -> Mapping[str, float]:
    table = dict(rows)
    table.update({name + UNDONE: -value for name, value in rows.items() if name in OUTCOME_ROWS})
    return MappingProxyType(table)


REWARD_TABLE: Mapping[str, Mapping[str, float]] = MappingProxyType(
    {table_id: _with_undone_rows(rows) for table_id, rows in TABLES.items()}
)


def once_rows(table_id: str) -> tuple[str, ...]:
    """The rows an episode can hold at most once: milestones and the first correct call."""
    bonuses = {rule.signal for rule in BONUS_RULES[table_id]}
    return tuple(
        name
        for name in TABLES[table_id]
        if name not in PENALTY_ROWS and name not in bonuses and name != "base_progress"
    )


def best_bonus(table_id: str) -> float:
    """The largest total of bonuses one completion can earn (some exclude each other by steps;
    a rule with a slack reaches past any optimum, so it never excludes another)."""
    rules = BONUS_RULES[table_id]
    table = TABLES[table_id]
    free = sum(table[rule.signal] for rule in rules if rule.max_steps is None)
    ranged = [rule for rule in rules if rule.max_steps is not None]
    if not ranged:
        return free
    horizon = 1 + max(max(rule.min_steps, rule.max_steps or 0) for rule in ranged)
    return free + max(
        sum(
            table[rule.signal]
            for rule in ranged
            if rule.min_steps <= steps <= (rule.max_steps or 0)
        )
        for steps in range(1, horizon + 1)
    )


def _allowance(table_id: str) -> float:
    slack = round(
        1.0 - sum(TABLES[table_id][name] for name in once_rows(table_id)) - best_bonus(table_id),
        SCORE_DIGITS,
    )
    if slack < 0:
        raise ValueError(f"{table_id}: the table pays more than 1.0 on its own")
    if "base_progress" not in TABLES[table_id]:
        if slack:
            raise ValueError(f"{table_id}: its rows sum to {1.0 - slack}, not 1.0")
        return 0.0
    return slack


BASE_ALLOWANCE: Mapping[str, float] = MappingProxyType(
    {table_id: _allowance(table_id) for table_id in TABLES}
)


def non_completing_ceiling(table_id: str) -> float:
    """The most an episode that never completes the task can score under this table."""
    table = TABLES[table_id]
    held = sum(table[name] for name in once_rows(table_id)) - min(
        table[name] for name in COMPLETION[table_id]
    )
    return round(held + BASE_ALLOWANCE[table_id], SCORE_DIGITS)


def reads_ceiling(table_id: str) -> float:
    """The most reads alone can score: every read milestone and the base allowance (a write
    pays nothing here; only a lookup task completes by reading)."""
    table = TABLES[table_id]
    reads = sum(table[name] for name in once_rows(table_id) if name not in OUTCOME_ROWS)
    return round(reads + BASE_ALLOWANCE[table_id], SCORE_DIGITS)
