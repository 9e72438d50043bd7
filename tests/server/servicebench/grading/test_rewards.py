"""Reward shaping, one test per row of the seed's reward tables, plus call identity and the
base-progress allowance (outcome rows and the penalty carry: test_rewards_outcomes.py).

Calls go through real services (a fresh ServiceState) into the pure `score_call`.
"""

from __future__ import annotations

from dataclasses import replace

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

from servicebench_support_queue.server.servicebench.grading.reward_table import BASE_ALLOWANCE
from servicebench_support_queue.server.servicebench.tasks import TASK_SPECS

# ---------------------------------------------------------------- shared rows


def test_duplicate_call_costs_a_tenth_and_earns_nothing_else():
    outcome = last(T2, JANE, ORDER_1005, ORDER_1005)
    assert outcome.signals == ("duplicate_call",) and outcome.reward == pytest.approx(-0.10)
    failed_twice = last(T2, JANE, ORDER_1005, NOBODY, NOBODY)
    assert failed_twice.signals == ("duplicate_call",)


@pytest.mark.parametrize(
    "again",
    [
        ("order", "/orders/lookup", "GET", {"order_id": "ord-1005"}),
        ("order", "/orders/lookup", "GET", {"order_id": " ORD-1005 "}),
        ("Order", "orders/lookup", "get", {"order_id": "Ord-1005"}),
    ],
)
def test_the_same_record_under_another_spelling_is_a_duplicate(again):
    assert last(T2, JANE, ORDER_1005, again).signals == ("duplicate_call",)


def test_a_write_resent_with_new_wording_is_the_same_write():
    note = (
        "user",
        "/users/update",
        "POST",
        {"user_id": "USR-003", "updates": {"notes": "SAVE20 added"}},
    )
    reworded = (
        "user",
        "/users/update",
        "POST",
        {"user_id": "usr-003", "updates": {"notes": "coupon error"}},
    )
    assert [o.signals for o in play(T3, ORDER_1009, note, reworded)[1:]] == [
        ("base_progress",),
        ("duplicate_call",),
    ]
    outcomes = play(
        T2, JANE, ORDER_1005, refund("ORD-1005", 10, "first"), refund("ord-1005", "10.00", "again")
    )
    assert outcomes[-1].signals[0] == "duplicate_call"


def test_irrelevant_endpoint_costs_five_hundredths():
    outcome = last(T2, JANE, ORDER_1005, LIST_USERS)
    assert outcome.signals == ("irrelevant_endpoint",) and outcome.reward == pytest.approx(-0.05)
    assert last(T1, JANE, SKU_445).signals == ("irrelevant_endpoint",)
    unknown = ("order", "/orders/cancel", "POST", {"order_id": "ORD-1005"})
    assert last(T2, JANE, unknown).signals == ("irrelevant_endpoint",)


def test_writes_about_other_orders_or_statuses_are_irrelevant():
    assert last(T2, JANE, ORDER_1005, refund("ORD-1006", 49.99)).signals == ("irrelevant_endpoint",)
    shipped = (
        "order",
        "/orders/update-status",
        "POST",
        {"order_id": "ORD-1007", "new_status": "delivered"},
    )
    assert last(T2, JANE, ORDER_1005, shipped).signals == ("irrelevant_endpoint",)
    notes = ("user", "/users/update", "POST", {"user_id": "USR-002", "updates": {"notes": "x"}})
    assert last(T3, PRIYA, ORDER_1009, notes).signals == ("irrelevant_endpoint",)
    own_notes = (
        "user",
        "/users/update",
        "POST",
        {"user_id": "USR-003", "updates": {"notes": "SAVE20"}},
    )
    assert last(T3, ORDER_1009, own_notes).signals == ("base_progress",)
    assert last(T2, JANE, own_notes).signals == ("irrelevant_endpoint",)  # only task 3 documents


@pytest.mark.parametrize(
    "updates",
    [
        {"email": "someone.else@example.com"},
        {"name": "P. Raman"},
        {"phone": "+1-408-555-0000"},
        {"address": "1 Main St"},
        {"notes": "SAVE20 added", "email": "priya@example.org"},
    ],
)
def test_task_three_pays_the_customers_notes_only(updates):
    """Identity and contact fields are collateral damage, even with a note beside them."""
    hijack = ("user", "/users/update", "POST", {"user_id": "USR-003", "updates": updates})
    assert last(T3, ORDER_1009, hijack).signals == ("irrelevant_endpoint",)


def test_failed_or_off_target_reads_earn_nothing():
    assert last(T2, NOBODY).signals == () and last(T2, NOBODY).reward == 0
    assert last(T2, JANE, JOHN).signals == ()
    assert last(T2, JANE, ORDER_1006).signals == ()


def test_first_correct_call_is_paid_once_in_task_one():
    first, second = play(T1, NOBODY, JANE)[0], play(T1, NOBODY, JANE)[1]
    assert first.signals == () and "first_correct_call" in second.signals
    assert second.reward == pytest.approx(0.15 + 0.30)
    assert "first_correct_call" not in last(T1, JANE, JANES_ORDERS).signals
    assert last(T1, JOHN).signals == ()
    assert "first_correct_call" not in last(T2, JANE).signals


def test_base_progress_for_unique_relevant_calls_without_milestone():
    assert last(T2, JANE).signals == ("base_progress",) and last(T2, JANE).reward == pytest.approx(
        0.05
    )
    assert last(T3, PRIYA).signals == ("base_progress",)
    assert last(T2, ORDER_1005, SKU_204).signals == ("base_progress",)
    assert last(T3, ORDER_1009, SKU_555, PRICES_555).signals == ("base_progress",)
    assert last(T1, JANE, JANES_ORDERS).signals == (
        "order_status_retrieved",
        "completed_within_2_steps",
    )


def test_base_progress_is_paid_from_the_tables_slack_once():
    """0.05 is what the optimal paths leave for calls that reach no milestone: one such call."""
    assert {task: BASE_ALLOWANCE[task] for task in (T1, T2, T3)} == {T1: 0.0, T2: 0.05, T3: 0.05}
    outcomes = play(
        T2,
        JANE,
        JANES_ORDERS,
        SKU_204,
        ("inventory", "/inventory/price-history", "GET", {"sku": "SKU-445"}),
    )
    assert [o.signals for o in outcomes] == [("base_progress",), (), (), ()]
    assert outcomes[-1].progress.score == pytest.approx(0.05)


# --------------------------------------------------------------------- task 1


def test_user_id_retrieved():
    outcome = last(T1, JANE)
    assert outcome.signals == ("user_id_retrieved", "first_correct_call")
    assert "user_id_retrieved" not in last(T1, JANE, JANE_BY_ID).signals


@pytest.mark.parametrize("order_call", [ORDER_1005, JANES_ORDERS])
def test_order_status_retrieved_by_lookup_or_by_user(order_call):
    outcome = last(T1, JANE, order_call)
    assert outcome.signals == ("order_status_retrieved", "completed_within_2_steps")
    assert outcome.reward == pytest.approx(0.45 + 0.10) and outcome.progress.completed


def test_task_one_bonus_depends_on_steps():
    three = play(T1, NOBODY, JANE, ORDER_1005)
    assert three[-1].signals == ("order_status_retrieved", "completed_in_3_steps")
    assert three[-1].progress.score == pytest.approx(0.15 + 0.30 + 0.45 + 0.05)
    four = last(T1, NOBODY, JANE, LIST_USERS, ORDER_1005)
    assert four.signals == ("order_status_retrieved",) and four.progress.score == pytest.approx(
        0.85
    )
    direct = last(T1, ORDER_1005)
    assert direct.signals == (
        "order_status_retrieved",
        "first_correct_call",
        "completed_within_2_steps",
    )


# --------------------------------------------------------------------- task 2


def test_eligibility_and_item_presence_from_the_order_lookup():
    outcome = last(T2, JANE, ORDER_1005)
    assert outcome.signals == ("return_eligibility_confirmed", "item_presence_verified")
    assert outcome.reward == pytest.approx(0.30)


def test_eligibility_and_item_presence_are_separate_conditions():
    missing_item = replace(TASK_SPECS[T2], item_sku="SKU-999")
    assert last(missing_item, JANE, ORDER_1005).signals == ("return_eligibility_confirmed",)
    not_eligible = replace(TASK_SPECS[T2], order_id="ORD-1001", item_sku="SKU-101")
    order_1001 = ("order", "/orders/lookup", "GET", {"order_id": "ORD-1001"})
    assert last(not_eligible, JANE, order_1001).signals == ("item_presence_verified",)


def test_inventory_checked():
    outcome = last(T2, JANE, ORDER_1005, SKU_445)
    assert outcome.signals == ("inventory_checked",) and outcome.reward == pytest.approx(0.10)


@pytest.mark.parametrize("amount", [49.99, "49.99", "49.990", 4.999e1, " 4999e-2 "])
def test_correct_refund_issued_in_exact_cents(amount):
    outcome = last(T2, JANE, ORDER_1005, SKU_445, refund("ORD-1005", amount))
    assert outcome.signals == ("correct_refund_issued",) and outcome.reward == pytest.approx(0.25)


def test_status_updated_to_returned_completes_with_bonus():
    outcome = last(T2, JANE, ORDER_1005, SKU_445, refund("ORD-1005", 49.99), RETURNED)
    assert outcome.signals == ("status_updated_to_returned", "completed_within_5_steps")
    assert outcome.progress.score == 1.0


def test_refund_before_eligibility_is_penalised():
    outcome = last(T2, JANE, SKU_445, refund("ORD-1005", 49.99))
    assert outcome.signals == ("refund_before_eligibility", "correct_refund_issued")
    assert outcome.reward == pytest.approx(0.25 - 0.15)


@pytest.mark.parametrize("amount", [49.98, 50.00, "50", 49.97, 40.00, 89.98])
def test_wrong_refund_amount_task_two(amount):
    """A cent over or under is a wrong amount: refunds are graded in exact cents."""
    outcome = last(T2, JANE, ORDER_1005, SKU_445, refund("ORD-1005", amount))
    assert outcome.signals == ("wrong_refund_amount",) and outcome.reward == pytest.approx(-0.10)


def test_task_two_bonus_needs_five_steps_or_fewer():
    outcomes = play(T2, JANE, ORDER_1005, SKU_445, SKU_204, refund("ORD-1005", 49.99), RETURNED)
    assert outcomes[3].signals == () and outcomes[-1].signals == ("status_updated_to_returned",)
    assert outcomes[-1].progress.score == pytest.approx(0.90)


# --------------------------------------------------------------------- task 3


def test_order_data_retrieved():
    outcome = last(T3, PRIYA, ORDER_1009)
    assert outcome.signals == ("order_data_retrieved",) and outcome.reward == pytest.approx(0.10)
    no_coupon = replace(TASK_SPECS[T3], order_id="ORD-1004")
    order_1004 = ("order", "/orders/lookup", "GET", {"order_id": "ORD-1004"})
    assert last(no_coupon, order_1004).signals == ("base_progress",)


@pytest.mark.parametrize("inventory_call", [SKU_555, SKU_118])
def test_inventory_prices_verified_for_any_sku_of_the_order(inventory_call):
    assert last(T3, PRIYA, inventory_call).signals == ("inventory_prices_verified",)
    assert (
        last(T3, PRIYA, ("inventory", "/inventory/lookup", "GET", {"sku": "SKU-445"})).signals == ()
    )


def test_evidence_rows_follow_the_spec_for_a_stale_price_error():
    """A stale price needs the order's items (no coupon) and the price history, not a list price."""
    stale = replace(
        TASK_SPECS[T3],
        order_id="ORD-1004",
        order_skus=("SKU-310", "SKU-808"),
        order_evidence=("items",),
        price_evidence=("/inventory/price-history",),
    )
    order_1004 = ("order", "/orders/lookup", "GET", {"order_id": "ORD-1004"})
    lookup_310 = ("inventory", "/inventory/lookup", "GET", {"sku": "SKU-310"})
    history_310 = ("inventory", "/inventory/price-history", "GET", {"sku": "SKU-310"})
    outcomes = play(stale, PRIYA, order_1004, lookup_310, history_310)
    assert [o.signals for o in outcomes[1:]] == [
        ("order_data_retrieved",),
        (),
        ("inventory_prices_verified", "root_cause_identified"),
    ]
    assert last(T3, ORDER_1009, PRICES_555).signals == ("base_progress",)  # canonical: lookup only


@pytest.mark.parametrize("calls", [(ORDER_1009, SKU_555), (SKU_555, ORDER_1009)])
def test_root_cause_fires_when_both_checks_are_done_in_either_order(calls):
    first, second = play(T3, PRIYA, *calls)[1:]
    assert "root_cause_identified" not in first.signals
    assert second.signals[-1] == "root_cause_identified"
    assert second.reward == pytest.approx(0.10 + 0.25)


@pytest.mark.parametrize("amount", [99.00, 99, "99.00", 9.9e1])
def test_correct_adjustment_completes_with_both_bonuses(amount):
    outcome = last(T3, PRIYA, ORDER_1009, SKU_555, refund("ORD-1009", amount))
    assert outcome.signals == (
        "correct_adjustment_issued",
        "completed_within_6_steps",
        "precision_no_wrong_refund",
    )
    assert outcome.reward == pytest.approx(0.50) and outcome.progress.score == 1.0


def test_task_three_efficiency_bonus_needs_six_steps_or_fewer():
    outcome = last(
        T3, PRIYA, ORDER_1009, SKU_555, SKU_118, PRICES_555, JANE, refund("ORD-1009", 99.00)
    )
    assert outcome.signals == ("correct_adjustment_issued", "precision_no_wrong_refund")
    assert outcome.progress.score == pytest.approx(0.90)
