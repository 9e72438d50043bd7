"""Reward rows for the task's writes follow the world; penalties are carried below 0; sums.

Calls go through real services (a fresh ServiceState) into the pure `score_call`.
"""

from __future__ import annotations

import random

import pytest
from servicebench_rewards_support import (
    JANE,
    JANE_BY_ID,
    JANES_ORDERS,
    JOHN,
    LIST_USERS,
    NOBODY,
    ORDER_1005,
    ORDER_1006,
    ORDER_1009,
    PRICES_555,
    PRIYA,
    RETURNED,
    SKU_118,
    SKU_204,
    SKU_445,
    SKU_555,
    T1,
    T2,
    T3,
    last,
    play,
    refund,
)

from servicebench_support_queue.mock_services import ENDPOINT_CATALOGUE
from servicebench_support_queue.server.servicebench.grading.rewards import REWARD_TABLE


def test_a_second_refund_after_the_correct_one_takes_the_refund_back():
    outcomes = play(
        T2,
        JANE,
        ORDER_1005,
        SKU_445,
        refund("ORD-1005", 49.99),
        refund("ORD-1005", 1, "more"),
        RETURNED,
    )
    assert outcomes[4].signals == ("wrong_refund_amount", "correct_refund_issued_undone")
    assert outcomes[4].reward == pytest.approx(-0.10 - 0.25)
    assert (
        outcomes[5].signals == ("status_updated_to_returned",)
        and not outcomes[5].progress.completed
    )
    assert outcomes[5].progress.score == pytest.approx(0.05 + 0.30 + 0.10 - 0.10 + 0.20)


def test_undoing_the_status_takes_its_row_back():
    refunded = (
        "order",
        "/orders/update-status",
        "POST",
        {"order_id": "ORD-1005", "new_status": "refunded"},
    )
    outcomes = play(T2, JANE, ORDER_1005, RETURNED, refunded, refund("ORD-1005", 49.99))
    assert outcomes[3].signals == ("irrelevant_endpoint", "status_updated_to_returned_undone")
    assert outcomes[4].signals == ("correct_refund_issued",) and not outcomes[4].progress.completed
    assert outcomes[4].progress.score == pytest.approx(0.05 + 0.30 - 0.05 + 0.25)


@pytest.mark.parametrize("amount", [49.50, 39.60, 98.98, 99.02, 148.50])
def test_a_wrong_refund_then_the_right_amount_over_refunds_and_never_completes(amount):
    outcomes = play(
        T3, PRIYA, ORDER_1009, SKU_555, refund("ORD-1009", amount), refund("ORD-1009", 99.00)
    )
    assert outcomes[3].signals == ("wrong_refund_amount",) and outcomes[3].reward == pytest.approx(
        -0.15
    )
    assert outcomes[4].signals == ("wrong_refund_amount",) and not outcomes[4].progress.completed
    assert outcomes[4].progress.score == pytest.approx(0.05 + 0.45 - 0.30)
    assert outcomes[4].progress.effects[("refund", "ORD-1009")] == round(amount * 100) + 9900


def test_refunds_that_together_total_the_adjustment_complete_without_precision():
    outcomes = play(
        T3, PRIYA, ORDER_1009, SKU_555, refund("ORD-1009", 49.50), refund("ORD-1009", 49.50, "rest")
    )
    assert outcomes[3].signals == ("wrong_refund_amount",)
    assert outcomes[4].signals == (
        "duplicate_call",
        "correct_adjustment_issued",
        "completed_within_6_steps",
    )
    assert outcomes[4].progress.completed and outcomes[4].progress.score == pytest.approx(
        1.0 - 0.15 - 0.10 - 0.10
    )


def test_a_second_refund_after_the_correct_one_is_a_wrong_amount():
    outcomes = play(
        T3, PRIYA, ORDER_1009, SKU_555, refund("ORD-1009", 99.00), refund("ORD-1009", 1.00, "again")
    )
    assert outcomes[-1].signals == ("wrong_refund_amount", "correct_adjustment_issued_undone")


# ------------------------------------------------------- the penalty carry and sums


def test_penalties_at_zero_are_carried_and_repaid_first():
    low = play(T2, LIST_USERS, LIST_USERS)
    assert [o.reward for o in low] == [0, 0] and low[-1].progress.score == 0
    assert low[-1].progress.penalty_balance == pytest.approx(0.15)
    floor = last(T2, JANE, refund("ORD-1005", 40))
    assert floor.signals == ("wrong_refund_amount", "refund_before_eligibility")
    assert floor.reward == pytest.approx(-0.05) and floor.progress.score == 0
    assert floor.progress.penalty_balance == pytest.approx(0.20)
    stock = ("inventory", "/inventory/update-stock", "POST", {"sku": "SKU-101", "adjustment": -1})
    damaged_first = play(
        T3, stock, stock, *[call for call in (PRIYA, ORDER_1009, SKU_555, refund("ORD-1009", 99))]
    )
    assert [o.reward for o in damaged_first[:3]] == [0, 0, 0]
    assert damaged_first[-1].progress.completed and damaged_first[
        -1
    ].progress.score == pytest.approx(0.85)


def test_the_optimum_is_exactly_one_so_the_cap_never_binds():
    """Gains total 1.0 at most (servicebench_reward_table), so a penalty after the optimum still bites."""
    high = play(T3, PRIYA, ORDER_1009, SKU_555, SKU_118, PRICES_555, refund("ORD-1009", 99.00))
    assert high[-1].progress.score == high[-1].progress.balance == 1.0


@pytest.mark.parametrize("task", [T1, T2, T3])
def test_rewards_sum_to_the_final_score_on_random_episodes(task):
    rng = random.Random(task)
    pool = [
        JANE,
        JANE_BY_ID,
        JOHN,
        NOBODY,
        JANES_ORDERS,
        ORDER_1005,
        ORDER_1006,
        SKU_445,
        SKU_204,
        RETURNED,
        LIST_USERS,
        PRIYA,
        ORDER_1009,
        SKU_555,
        SKU_118,
        PRICES_555,
        refund("ORD-1005", 49.99),
        refund("ORD-1005", 10),
        refund("ORD-1009", 99.00),
        refund("ORD-1009", 49.50),
    ] + [(row["service"], row["endpoint"], row["method"], {}) for row in ENDPOINT_CATALOGUE]
    for _ in range(200):
        outcomes = play(task, *(rng.choice(pool) for _ in range(rng.randint(1, 15))))
        scores = [o.progress.score for o in outcomes]
        assert all(0.0 <= score <= 1.0 for score in scores)
        assert sum(o.reward for o in outcomes) == pytest.approx(scores[-1], abs=1e-9)
        table = REWARD_TABLE[task]
        total = sum(table[name] for o in outcomes for name in o.signals)
        assert scores[-1] == pytest.approx(max(0.0, total), abs=1e-9)
