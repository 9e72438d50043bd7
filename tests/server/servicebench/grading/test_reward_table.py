"""The reward tables as data, and the bounds derived from them."""

from __future__ import annotations

import pytest

from servicebench_support_queue.server.servicebench.grading.reward_table import (
    BASE_ALLOWANCE,
    FAMILY_TABLES,
    OUTCOME_ROWS,
    REWARD_TABLE,
    SEED_TABLES,
    TABLES,
    UNDONE,
    best_bonus,
    non_completing_ceiling,
    once_rows,
    reads_ceiling,
)


def test_the_seed_rows_are_unchanged_and_outcome_rows_can_be_taken_back():
    for task_id, seed_rows in SEED_TABLES.items():
        table = REWARD_TABLE[task_id]
        assert {name: table[name] for name in seed_rows} == dict(seed_rows)
        undone = {name for name in table if name.endswith(UNDONE)}
        assert undone == {name + UNDONE for name in seed_rows if name in OUTCOME_ROWS}
        assert all(table[name] == -table[name[: -len(UNDONE)]] for name in undone)


def test_the_base_progress_allowance_is_the_tables_slack():
    assert {task_id: BASE_ALLOWANCE[task_id] for task_id in SEED_TABLES} == {
        "order_status_lookup": 0.0,
        "return_and_refund": 0.05,
        "billing_discrepancy": 0.05,
    }
    assert all(BASE_ALLOWANCE[name] == 0.0 for name in FAMILY_TABLES)  # no spare call to pay
    assert (
        best_bonus("order_status_lookup") == 0.10
    )  # the 2-step and 3-step bonuses exclude each other
    assert best_bonus("billing_discrepancy") == pytest.approx(0.20)
    for table_id, rows in TABLES.items():
        gains = sum(rows[name] for name in once_rows(table_id)) + best_bonus(table_id)
        assert gains + BASE_ALLOWANCE[table_id] == pytest.approx(1.0, abs=1e-9)


def test_the_ceiling_of_a_policy_that_does_not_complete():
    """All but the cheapest completion row, plus the allowance: within the issue's 0.70 and 0.55."""
    assert non_completing_ceiling("order_status_lookup") == 0.45
    assert non_completing_ceiling("return_and_refund") == 0.70  # everything but the status update
    assert non_completing_ceiling("billing_discrepancy") == 0.50  # everything but the adjustment


def test_every_family_table_pays_reads_less_than_the_seeds_lowest_ceiling():
    """Reads alone never complete a family (each needs a write) and pay at most 0.45, the seed's
    lowest reads-only ceiling; a policy that does not complete stays at or under 0.70."""
    for name, rows in FAMILY_TABLES.items():
        assert reads_ceiling(name) <= 0.45, name
        assert non_completing_ceiling(name) <= 0.70, name
        assert rows["unintended_write"] < rows["irrelevant_endpoint"] < 0, name
        undone = {row for row in REWARD_TABLE[name] if row.endswith(UNDONE)}
        assert undone == {row + UNDONE for row in rows if row in OUTCOME_ROWS}
