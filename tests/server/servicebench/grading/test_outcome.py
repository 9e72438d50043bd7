"""The final-state outcome check: the world against the task's expected end state.

Played through the environment, so the diff is read from real services' overlays and
shows in `/state` (`outcome`, once the episode is done) and in the final observation's
`info["outcome"]`.
"""

from __future__ import annotations

from typing import Any

import pytest

from servicebench_support_queue.mock_services import ServiceState, to_cents
from servicebench_support_queue.models import EpisodeOutcome, ServiceBenchAction
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.grading.outcome import (
    episode_outcome,
    world_changes,
)
from servicebench_support_queue.server.servicebench.tasks import TASK_SPECS


def act(service: str, endpoint: str, method: str = "GET", **params: Any) -> ServiceBenchAction:
    return ServiceBenchAction(service=service, endpoint=endpoint, method=method, params=params)


def refund(order_id: str, amount: float, reason: str = "r") -> ServiceBenchAction:
    return act(
        "order", "/orders/process-refund", "POST", order_id=order_id, amount=amount, reason=reason
    )


RETURNED = act("order", "/orders/update-status", "POST", order_id="ORD-1005", new_status="returned")
TASK_2 = [
    act("user", "/users/lookup", email="jane.doe@example.com"),
    act("order", "/orders/lookup", order_id="ORD-1005"),
    act("inventory", "/inventory/lookup", sku="SKU-445"),
    refund("ORD-1005", 49.99),
    RETURNED,
]
TASK_3 = [
    act("user", "/users/lookup", user_id="USR-003"),
    act("order", "/orders/lookup", order_id="ORD-1009"),
    act("inventory", "/inventory/lookup", sku="SKU-555"),
    refund("ORD-1009", 99.00),
]
NOTE = act(
    "user",
    "/users/update",
    "POST",
    user_id="USR-003",
    updates={"notes": "SAVE20 added, not deducted"},
)


def play(task_id: str, *actions: ServiceBenchAction) -> ServiceBenchEnvironment:
    env = ServiceBenchEnvironment()
    env.reset(task_id=task_id)
    for action in actions:
        env.step(action)
    return env


def outcome_now(env: ServiceBenchEnvironment) -> EpisodeOutcome:
    """The outcome as the grader sees it mid-episode (the state shows it only at the end)."""
    return EpisodeOutcome.model_validate(episode_outcome(env._spec, env._services))


def fields(changes: list) -> list[tuple[str, str, str]]:
    return [(change.table, change.key, change.field) for change in changes]


def test_a_fresh_episode_has_changed_nothing():
    for task_id in TASK_SPECS:
        env = play(task_id)
        assert env.state.outcome is None  # not done: it would show the answer
        outcome = outcome_now(env)
        assert outcome.intended_changes == [] and outcome.collateral_damage == []
        assert outcome.end_state_matches is (
            task_id == "order_status_lookup"
        )  # task 1 writes nothing
    assert world_changes(ServiceState()) == []


def test_the_optimal_path_of_task_two_is_exactly_the_intended_writes():
    env = play("return_and_refund", *TASK_2)
    outcome = env.state.outcome
    assert outcome.end_state_matches and outcome.collateral_damage == []
    assert fields(outcome.intended_changes) == [
        ("orders", "ORD-1005", "status"),
        ("orders", "ORD-1005", "refunds"),
    ]
    status = outcome.intended_changes[0]
    assert (status.before, status.after) == ("delivered", "returned")
    assert [(c.name, c.expected, c.actual, c.met) for c in outcome.checks] == [
        ("refunded_in_episode", 49.99, 49.99, True),
        ("status", "returned", "returned", True),
    ]


def test_the_final_observation_carries_the_outcome_and_earlier_ones_do_not():
    env = ServiceBenchEnvironment()
    env.reset(task_id="billing_discrepancy")
    observations = [env.step(action) for action in [NOTE] + TASK_3]
    assert all("outcome" not in o.info for o in observations[:-1])
    final = EpisodeOutcome.model_validate(observations[-1].info["outcome"])
    assert final == env.state.outcome and final.end_state_matches
    assert fields(final.intended_changes) == [
        ("users", "USR-003", "notes"),
        ("orders", "ORD-1009", "refunds"),
    ]
    assert final.intended_changes[0].before is None and observations[-1].cumulative_reward == 1.0


def test_the_outcome_is_reported_when_the_budget_ends_the_episode():
    env = ServiceBenchEnvironment()
    env.reset(task_id="order_status_lookup")
    drain = act("inventory", "/inventory/update-stock", "POST", sku="SKU-101", adjustment=-1)
    observations = [env.step(drain) for _ in range(env.task.max_steps)]
    assert observations[-1].done and not observations[-1].task_completed
    damage = observations[-1].info["outcome"]["collateral_damage"]
    assert damage == [
        {"table": "products", "key": "SKU-101", "field": "stock", "before": 140, "after": 132}
    ]


def test_over_refunding_shows_in_the_checks_and_as_damage():
    """$49.50 then $99.00 against a $99.00 overcharge: $148.50 refunded."""
    env = play(
        "billing_discrepancy", *TASK_3[:3], refund("ORD-1009", 49.50), refund("ORD-1009", 99.00)
    )
    state, outcome = env.state, outcome_now(env)
    assert not state.task_completed and state.cumulative_reward == pytest.approx(0.20)
    assert not state.done and state.outcome is None
    check = outcome.checks[0]
    assert (check.name, check.expected, check.actual, check.met) == (
        "refunded_in_episode",
        99.0,
        148.5,
        False,
    )
    assert fields(outcome.collateral_damage) == [("orders", "ORD-1009", "refunds")]
    assert [refund["amount"] for refund in outcome.collateral_damage[0].after] == [49.5, 99.0]
    assert not outcome.end_state_matches


@pytest.mark.parametrize(
    "updates, changed",
    [
        (
            {
                "email": "new.owner@example.com",
                "name": "Someone Else",
                "address": "1 Main St",
                "phone": "+1-000-555-0000",
            },
            ["name", "email", "phone", "address"],
        ),
        ({"notes": "documented", "phone": "+1-000-555-0000"}, ["phone"]),
    ],
)
def test_hijacking_the_customer_record_is_collateral_damage(updates, changed):
    hijack = act("user", "/users/update", "POST", user_id="USR-003", updates=updates)
    env = play("billing_discrepancy", hijack, *TASK_3)
    state = env.state
    assert state.task_completed and state.cumulative_reward == pytest.approx(0.95)
    assert fields(state.outcome.collateral_damage) == [
        ("users", "USR-003", name) for name in changed
    ]
    email = [c for c in state.outcome.collateral_damage if c.field == "email"]
    assert not email or (email[0].before, email[0].after) == (
        "priya.raman@example.com",
        "new.owner@example.com",
    )
    assert not state.outcome.end_state_matches


@pytest.mark.parametrize(
    "damage, record",
    [
        (
            act("inventory", "/inventory/update-stock", "POST", sku="SKU-445", adjustment=-64),
            ("products", "SKU-445", "stock"),
        ),
        (
            act("user", "/users/update", "POST", user_id="USR-006", updates={"notes": "x"}),
            ("users", "USR-006", "notes"),
        ),
        (refund("ORD-1006", 99.98), ("orders", "ORD-1006", "refunds")),
        (
            act(
                "order",
                "/orders/update-status",
                "POST",
                order_id="ORD-1010",
                new_status="cancelled",
            ),
            ("orders", "ORD-1010", "status"),
        ),
    ],
)
def test_destructive_writes_before_the_optimal_path_cost_their_penalty_and_show(damage, record):
    env = play("return_and_refund", damage, *TASK_2)
    state = env.state
    assert state.task_completed and state.call_history[0].signals == ["irrelevant_endpoint"]
    assert state.cumulative_reward == pytest.approx(
        1.0 - 0.05 - 0.10
    )  # and the 5-step bonus is gone
    assert fields(state.outcome.collateral_damage) == [record]


def test_the_outcome_is_derived_from_the_world_not_the_rewards():
    """A refund split in two that totals the adjustment is the intended end state."""
    env = play(
        "billing_discrepancy", *TASK_3[:3], refund("ORD-1009", 40.00), refund("ORD-1009", 59.00)
    )
    outcome = episode_outcome(env._spec, env._services)
    assert env.state.task_completed and outcome["end_state_matches"]
    assert outcome["checks"][0]["actual"] == 99.0 and outcome["collateral_damage"] == []


def test_the_penalty_balance_is_in_the_state():
    env = play(
        "order_status_lookup", *[act("user", "/users/list", page=page) for page in (1, 2, 3)]
    )
    assert env.state.cumulative_reward == 0 and env.state.penalty_balance == pytest.approx(0.15)


# ------------------------------------------------------------------ exact cents

PADDING = act("user", "/users/list", page=1)


def with_refund(path: list[ServiceBenchAction], amount: Any) -> list[ServiceBenchAction]:
    """An optimal path with its refund of `amount` instead."""
    return [refund(a.params["order_id"], amount) if "amount" in a.params else a for a in path]


def play_to_the_end(task_id: str, *actions: ServiceBenchAction) -> ServiceBenchEnvironment:
    """The actions, then reads until the step budget ends the episode."""
    env = play(task_id, *actions)
    while not env.done:
        env.step(PADDING)
    return env


@pytest.mark.parametrize(
    "task_id, amount, right",
    [
        ("return_and_refund", 50.00, 49.99),  # the case: a cent over
        ("return_and_refund", 49.98, 49.99),
        ("return_and_refund", "50", 49.99),
        ("return_and_refund", "4.998e1", 49.99),
        ("billing_discrepancy", 99.01, 99.0),
        ("billing_discrepancy", "98.99", 99.0),
    ],
)
def test_a_cent_over_or_under_is_not_the_expected_end_state(task_id, amount, right):
    """Refunds are compared in exact cents: never 1.0, never `end_state_matches`."""
    path = TASK_2 if task_id == "return_and_refund" else TASK_3
    env = play_to_the_end(task_id, *with_refund(path, amount))
    state = env.state
    assert not state.task_completed and state.cumulative_reward < 1.0
    assert "wrong_refund_amount" in state.call_history[3].signals
    outcome = state.outcome
    assert outcome is not None and not outcome.end_state_matches
    check = outcome.checks[0]
    assert (check.name, check.expected, check.met) == ("refunded_in_episode", right, False)
    assert to_cents(check.actual) == to_cents(float(amount)) != to_cents(right)


@pytest.mark.parametrize("amount", [49.99, "49.990", 4.999e1, "4999e-2", 49.989999999999995])
def test_every_spelling_of_the_exact_amount_is_the_expected_end_state(amount):
    env = play("return_and_refund", *with_refund(TASK_2, amount))
    state = env.state
    assert state.done and state.task_completed and state.cumulative_reward == 1.0
    assert state.outcome.end_state_matches and state.outcome.checks[0].actual == 49.99


@pytest.mark.parametrize("amount", [49.985, "49.985", 49.994, 49.995, "4.9985e1"])
def test_a_sub_cent_refund_changes_nothing_and_earns_nothing(amount):
    """Refused by the service (a 400 naming whole cents): no rounding to either cent."""
    env = play("return_and_refund", *TASK_2[:3])
    observation = env.step(refund("ORD-1005", amount))
    assert not observation.success and "whole cents" in observation.error_message
    assert observation.reward == 0.0 and observation.info["reward_signals"] == []
    assert outcome_now(env).intended_changes == outcome_now(env).collateral_damage == []
