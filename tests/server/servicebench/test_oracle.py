"""The deterministic oracle policy: optimal on the three tasks, derived from responses."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from servicebench_support_queue.mock_services import ServiceState
from servicebench_support_queue.models import ServiceBenchAction, ServiceBenchObservation
from servicebench_support_queue.server.servicebench.environment import (
    ServiceBenchEnvironment,
    api_response,
)
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.servicebench.tasks import TASK_SPECS, render_prompt

OPTIMAL_CALLS = {"order_status_lookup": 2, "return_and_refund": 5, "billing_discrepancy": 4}


def run_episode(task_id: str, as_json: bool = False) -> tuple[ServiceBenchEnvironment, list]:
    env = ServiceBenchEnvironment()
    history: list = [env.reset(task_id=task_id)]
    while (
        action := next_action([o.model_dump() for o in history] if as_json else history)
    ) is not None:
        history.append(env.step(action))
        assert len(history) <= 20, "the oracle must terminate"
    return env, history


@pytest.mark.parametrize("task_id", list(OPTIMAL_CALLS))
@pytest.mark.parametrize("as_json", [False, True])
def test_oracle_scores_one_with_the_optimal_number_of_calls(task_id, as_json):
    env, history = run_episode(task_id, as_json)
    assert env.score == 1.0 and history[-1].task_completed and history[-1].done
    assert len(history) - 1 == OPTIMAL_CALLS[task_id]
    assert all(observation.success for observation in history)
    assert not any(
        "duplicate_call" in record.signals or "irrelevant_endpoint" in record.signals
        for record in env.state.call_history
    )


def test_oracle_is_deterministic():
    runs = [
        [o.model_dump(exclude={"info"}) for o in run_episode(task)[1]]
        for task in OPTIMAL_CALLS
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and runs[2] == runs[3] and runs[4] == runs[5]


def drive(task_id: str, description: str) -> list[ServiceBenchAction]:
    """Let the oracle act on fresh services for a task of its kind with another prompt."""
    services = ServiceState()
    history = [ServiceBenchObservation(task_id=task_id, task_description=description)]
    actions: list[ServiceBenchAction] = []
    while (action := next_action(history)) is not None and len(actions) < 10:
        status, body = services.dispatch(
            action.service, action.endpoint, action.method, action.params
        )
        history.append(
            ServiceBenchObservation(
                task_id=task_id,
                task_description=description,
                api_response=api_response(status, body),
                success=status < 400,
            )
        )
        actions.append(action)
    return actions


def test_oracle_reads_identifiers_and_amounts_instead_of_knowing_them():
    prompt = TASK_SPECS["return_and_refund"].card.description
    other = prompt.replace("jane.doe@example.com", "jane.doerr@example.com").replace(
        "ORD-1005", "ORD-1016"
    )
    actions = drive("return_and_refund", other)
    assert [a.endpoint for a in actions] == [
        "/users/lookup",
        "/orders/lookup",
        "/inventory/lookup",
        "/orders/process-refund",
        "/orders/update-status",
    ]
    assert actions[0].params == {"email": "jane.doerr@example.com"}
    assert actions[3].params["order_id"] == "ORD-1016" and actions[3].params["amount"] == 49.99


@pytest.mark.parametrize("damaged, amount", [(1, 49.99), (2, 99.98)])
def test_oracle_refunds_the_units_the_prompt_says_arrived_damaged(damaged, amount):
    """ORD-1006 holds two units of SKU-445: the refund is for the damaged ones only."""
    prompt = render_prompt(
        "return_and_refund_units",
        email="john.doe@example.com",
        damaged=str(damaged),
        quantity="2",
        sku="SKU-445",
        order_id="ORD-1006",
        unit_word="unit" if damaged == 1 else "units",
    )
    actions = drive("return_and_refund", prompt)
    assert [a.endpoint for a in actions][-2:] == ["/orders/process-refund", "/orders/update-status"]
    assert actions[-2].params["amount"] == amount and actions[-2].params["order_id"] == "ORD-1006"


def test_oracle_stops_when_the_order_is_not_the_customers_or_not_eligible():
    prompt = TASK_SPECS["return_and_refund"].card.description
    assert len(drive("return_and_refund", prompt.replace("ORD-1005", "ORD-1006"))) == 2
    not_eligible = prompt.replace("ORD-1005", "ORD-1001").replace("SKU-445", "SKU-101")
    assert len(drive("return_and_refund", not_eligible)) == 2


def test_oracle_does_not_refund_a_correctly_billed_order():
    prompt = TASK_SPECS["billing_discrepancy"].card.description
    correct = prompt.replace("USR-003", "USR-008").replace("ORD-1009", "ORD-1022")
    actions = drive("billing_discrepancy", correct)
    assert [a.endpoint for a in actions] == [
        "/users/lookup",
        "/orders/lookup",
        "/inventory/lookup",
        "/inventory/lookup",
    ]
    assert [a.params["sku"] for a in actions[2:]] == ["SKU-560", "SKU-512"]


def test_oracle_stops_when_its_call_is_refused_for_good():
    """A 404 naming what the next call is about: asking again cannot help."""
    prompt = TASK_SPECS["return_and_refund"].card.description
    assert len(drive("return_and_refund", prompt.replace("jane.doe@", "nobody@"))) == 1
    assert len(drive("return_and_refund", prompt.replace("ORD-1005", "ORD-99999"))) == 2
    assert next_action([]) is None


def test_oracle_accepts_partial_json_observations():
    """Agents may relay only the task and the api_response of each result."""
    env, history = run_episode("billing_discrepancy")
    relayed = [{"task_id": history[0].task_id, "task_description": history[0].task_description}]
    relayed += [{"api_response": o.api_response} for o in history[1:-1]]
    assert next_action(relayed) == next_action(history[:-1])
    assert next_action(relayed).endpoint == "/orders/process-refund"


# ------------------------------------------------------- resuming someone else's episode

SEEDS = [None, 1, 2, 7, 11, 100003]
"""Canonical, then variants of every billing family (flat, % of list, stale, % of sale), held-out."""


def call(service: str, endpoint: str, method: str = "GET", **params: Any) -> ServiceBenchAction:
    return ServiceBenchAction(service=service, endpoint=endpoint, method=method, params=params)


def scout(task_id: str, seed: int | None) -> list[ServiceBenchAction]:
    """Calls an agent exploring the variant might make: unrelated reads and writes, and failures.

    Their parameters come from a scratch episode of the same variant (another customer,
    that customer's order and its first SKU), so that the reads and writes succeed.
    """
    env = ServiceBenchEnvironment()
    description = env.reset(task_id=task_id, seed=seed).task_description
    order_id = re.search(r"ORD-\d+", description).group(0)
    listed = env.step(call("user", "/users/list", page=1)).api_response["data"]["users"]
    other = next(
        user["user_id"]
        for user in listed
        if user["user_id"] not in description and user["email"] not in description
    )
    their_orders = env.step(call("order", "/orders/by-user", user_id=other)).api_response["data"][
        "orders"
    ]
    their_order = their_orders[0]["order_id"]
    sku = env.step(call("order", "/orders/lookup", order_id=their_order)).api_response["data"][
        "items"
    ][0]["sku"]
    return [
        call("user", "/users/list", page=2),
        call("user", "/users/lookup"),  # 400: no parameter
        call("order", "/orders/lookup", order_id=their_order),
        call("order", "/orders/lookup", order_id="ORD-99999"),  # 404
        call("user", "/users/lookup", user_id=other),
        call(
            "order", "/orders/process-refund", "POST", order_id=order_id, amount=0, reason="x"
        ),  # 400
        call("inventory", "/inventory/price-history", sku=sku),
        call(
            "order", "/orders/update-status", "POST", order_id=order_id, new_status="pending"
        ),  # 409
        call("order", "/orders/by-user", user_id=other),
        call("billing", "/invoices"),  # 404: no such service
        call("user", "/users/update", "POST", user_id=other, updates={"notes": "called twice"}),
        call("order", "/orders/lookup", "POST", order_id=order_id),  # 405
        call("inventory", "/inventory/update-stock", "POST", sku=sku, adjustment=1),
        call("user", "/users/lookup", email="nobody@example.com"),  # 404
        call(
            "order", "/orders/process-refund", "POST", order_id=order_id, amount=10**6, reason="x"
        ),  # 400
        call("inventory", "/inventory/check-stock", sku=sku),
        call("order", "/orders/lookup", order_id=their_order),  # repeated calls, from here on
        call("order", "/orders/lookup", order_id="ORD-99999"),
    ]


def oracle_finishes(env: ServiceBenchEnvironment, history: list) -> list[ServiceBenchAction]:
    """Let the oracle play the rest of the episode; its calls (the same from the JSON form)."""
    actions = []
    while (action := next_action(history)) is not None:
        assert next_action([observation.model_dump() for observation in history]) == action
        actions.append(action)
        history.append(env.step(action))
        assert len(actions) <= 6, "the oracle must terminate"
    return actions


def optimal_path(task_id: str, seed: int | None) -> list[ServiceBenchAction]:
    env = ServiceBenchEnvironment()
    return oracle_finishes(env, [env.reset(task_id=task_id, seed=seed)])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task_id", list(OPTIMAL_CALLS))
def test_oracle_finishes_after_foreign_successful_and_failed_calls(task_id, seed):
    """Windows of the scouting calls, each starting at a different one, then the oracle."""
    foreign = scout(task_id, seed)
    optimal = optimal_path(task_id, seed)
    room = TASK_SPECS[task_id].card.max_steps - len(optimal)
    for start in range(len(foreign)):
        env = ServiceBenchEnvironment()
        history = [env.reset(task_id=task_id, seed=seed)]
        for offset in range(room):
            history.append(env.step(foreign[(start + offset) % len(foreign)]))
        assert not history[-1].done
        actions = oracle_finishes(env, history)
        assert history[-1].done and history[-1].task_completed, (start, env.state.call_history)
        assert actions == optimal  # nothing the foreign calls said replaces one of its steps
        own = env.state.call_history[room:]
        assert not any("duplicate_call" in record.signals for record in own)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task_id", list(OPTIMAL_CALLS))
def test_resuming_from_a_prefix_of_its_own_path_gives_the_rest_of_it(task_id, seed):
    optimal = optimal_path(task_id, seed)
    for done in range(len(optimal)):
        env = ServiceBenchEnvironment()
        history = [env.reset(task_id=task_id, seed=seed)]
        history += [env.step(action) for action in optimal[:done]]
        assert oracle_finishes(env, history) == optimal[done:]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("task_id", list(OPTIMAL_CALLS))
def test_steps_someone_else_took_in_any_order_are_not_repeated(task_id, seed):
    """Any of its steps but the last, made by another agent in reverse order, then the oracle."""
    optimal = optimal_path(task_id, seed)
    for count in range(len(optimal)):
        for taken in itertools.combinations(optimal[:-1], count):
            env = ServiceBenchEnvironment()
            history = [env.reset(task_id=task_id, seed=seed)]
            history += [env.step(action) for action in reversed(taken)]
            actions = oracle_finishes(env, history)
            assert actions == [action for action in optimal if action not in taken], taken
            assert history[-1].done and history[-1].task_completed


def test_oracle_does_not_try_a_refund_the_balance_cannot_cover():
    """Someone refunded nearly all of the order: the damaged item's refund would be refused."""
    env = ServiceBenchEnvironment()
    history = [env.reset(task_id="return_and_refund")]
    optimal = optimal_path("return_and_refund", None)
    history += [env.step(action) for action in optimal[:2]]
    charged = history[-1].api_response["data"]["total_charged"]
    history.append(
        env.step(
            call(
                "order",
                "/orders/process-refund",
                "POST",
                order_id="ORD-1005",
                amount=round(charged - 1, 2),
                reason="goodwill",
            )
        )
    )
    assert history[-1].success
    history.append(env.step(optimal[2]))
    assert next_action(history) is None  # 49.99 no longer fits in the remaining 1.00


def test_only_a_404_about_the_next_call_stops_the_oracle():
    """A failure about another thing, or of another kind, is someone else's: skipped."""
    env, scratch = ServiceBenchEnvironment(), ServiceBenchEnvironment()
    history = [env.reset(task_id="return_and_refund")]
    scratch.reset(task_id="return_and_refund")
    refusals = [
        scratch.step(action)
        for action in (
            call(
                "order", "/orders/update-status", "POST", order_id="ORD-1005", new_status="pending"
            ),  # 409
            call("order", "/orders/lookup", order_id="ORD-10050"),  # 404 about another order
            call("user", "/users/lookup", email="doe@example.com"),
        )
    ]  # and another customer
    assert not any(refusal.success for refusal in refusals)
    for action in optimal_path("return_and_refund", None):
        assert all(next_action(history + [refusal]) == action for refusal in refusals)
        history.append(env.step(action))
    assert history[-1].task_completed
