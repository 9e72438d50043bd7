"""The ServiceBench environment: the seed's optimal paths, observations, budget, state."""

from __future__ import annotations

import copy
import json
import re
import tracemalloc
from decimal import Decimal
from typing import Any

import pytest

from servicebench_support_queue.mock_services import SEED_CATALOGUE
from servicebench_support_queue.models import ServiceBenchAction, ServiceBenchObservation
from servicebench_support_queue.server.lifecycle.episode import (
    EpisodeFinishedError,
    EpisodeNotStartedError,
    UnknownTaskError,
)
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment


def act(service: str, endpoint: str, method: str = "GET", **params: Any) -> ServiceBenchAction:
    return ServiceBenchAction(service=service, endpoint=endpoint, method=method, params=params)


OPTIMAL_PATHS = {
    "order_status_lookup": [
        (act("user", "/users/lookup", email="jane.doe@example.com"), 0.15 + 0.30),
        (act("order", "/orders/lookup", order_id="ORD-1005"), 0.45 + 0.10),
    ],
    "return_and_refund": [
        (act("user", "/users/lookup", email="jane.doe@example.com"), 0.05),
        (act("order", "/orders/lookup", order_id="ORD-1005"), 0.15 + 0.15),
        (act("inventory", "/inventory/lookup", sku="SKU-445"), 0.10),
        (
            act(
                "order",
                "/orders/process-refund",
                "POST",
                order_id="ORD-1005",
                amount=49.99,
                reason="Item arrived damaged",
            ),
            0.25,
        ),
        (
            act(
                "order", "/orders/update-status", "POST", order_id="ORD-1005", new_status="returned"
            ),
            0.20 + 0.10,
        ),
    ],
    "billing_discrepancy": [
        (act("user", "/users/lookup", user_id="USR-003"), 0.05),
        (act("order", "/orders/lookup", order_id="ORD-1009"), 0.10),
        (act("inventory", "/inventory/lookup", sku="SKU-555"), 0.10 + 0.25),
        (
            act(
                "order",
                "/orders/process-refund",
                "POST",
                order_id="ORD-1009",
                amount=99.00,
                reason="SAVE20 was added to the total instead of deducted",
            ),
            0.30 + 0.10 + 0.10,
        ),
    ],
}


@pytest.fixture
def env() -> ServiceBenchEnvironment:
    return ServiceBenchEnvironment()


@pytest.mark.parametrize("task_id", list(OPTIMAL_PATHS))
def test_optimal_paths_score_exactly_one(env, task_id):
    env.reset(task_id=task_id)
    path = OPTIMAL_PATHS[task_id]
    for index, (action, expected_reward) in enumerate(path, start=1):
        observation = env.step(action)
        assert observation.success and observation.reward == pytest.approx(expected_reward)
        assert observation.done is (index == len(path))
    assert observation.task_completed and observation.cumulative_reward == 1.0 and env.score == 1.0
    state = env.state
    assert state.done and state.task_completed and state.cumulative_reward == 1.0
    assert sum(record.reward for record in state.call_history) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "alias, task_id",
    [(1, "order_status_lookup"), ("2", "return_and_refund"), (3, "billing_discrepancy")],
)
def test_integer_aliases_start_the_task(env, alias, task_id):
    observation = env.reset(task_id=alias)
    assert observation.task_id == task_id and env.task is not None and env.task.alias == int(alias)
    with pytest.raises(UnknownTaskError):
        env.reset(task_id=10)


def test_first_observation(env):
    observation = env.reset(task_id="billing_discrepancy")
    assert observation.api_response == {} and observation.success and not observation.done
    assert observation.task_description.startswith("Customer USR-003 reports being charged $247.50")
    assert observation.available_endpoints == list(SEED_CATALOGUE)
    assert observation.cumulative_reward == 0 and observation.info["max_steps"] == 15


def test_success_and_error_observation_shapes(env):
    env.reset(task_id=1)
    ok = env.step(act("user", "/users/lookup", email="jane.doe@example.com"))
    assert ok.api_response["status_code"] == 200 and ok.api_response["data"]["user_id"] == "USR-001"
    assert ok.error_message is None and ok.available_endpoints == list(SEED_CATALOGUE)
    missing = env.step(act("order", "/orders/lookup", order_id="ORD-0000"))
    assert not missing.success and missing.api_response == {
        "status_code": 404,
        "error": missing.error_message,
    }
    assert "ORD-0000" in missing.error_message
    bad = env.step(act("order", "/orders/lookup"))
    assert bad.api_response["status_code"] == 400 and "order_id" in bad.error_message
    wrong_service = env.step(act("payments", "/charges", "GET"))
    assert (
        wrong_service.api_response["status_code"] == 404
        and "user, order, inventory" in wrong_service.error_message
    )
    assert wrong_service.reward == pytest.approx(-0.05)
    assert wrong_service.info["reward_signals"] == ["irrelevant_endpoint"]


def test_step_budget_ends_the_episode(env):
    env.reset(task_id="order_status_lookup")
    budget = env.task.max_steps
    for step in range(1, budget + 1):
        observation = env.step(act("inventory", "/inventory/check-stock", sku=f"SKU-{step}"))
        assert observation.done is (step == budget)
    assert not observation.task_completed and env.state.step_count == budget
    with pytest.raises(EpisodeFinishedError):
        env.step(act("user", "/users/lookup", email="jane.doe@example.com"))


def test_step_after_completion_or_before_reset_raises(env):
    with pytest.raises(EpisodeNotStartedError):
        env.step(act("user", "/users/list"))
    env.reset(task_id=1)
    for action, _ in OPTIMAL_PATHS["order_status_lookup"]:
        env.step(action)
    with pytest.raises(EpisodeFinishedError):
        env.step(act("user", "/users/list"))


def _play(task_id: Any, seed: Any, actions: list[ServiceBenchAction]) -> list[dict]:
    env = ServiceBenchEnvironment()
    observations = [env.reset(task_id=task_id, seed=seed)] + [env.step(a) for a in actions]
    dumps = [observation.model_dump() for observation in observations]
    for dump in dumps:
        dump["info"].pop("episode_id")
    return dumps + [env.state.model_dump(exclude={"episode_id"})]


def test_same_task_and_seed_give_the_same_episode():
    prompt = ServiceBenchEnvironment().reset(task_id="return_and_refund", seed=7).task_description
    order_id = re.search(r"ORD-\d+", prompt).group(0)
    actions = [
        act("user", "/users/list", page=2),
        act("order", "/orders/lookup", order_id=order_id),
        act("order", "/orders/process-refund", "POST", order_id=order_id, amount=1.5, reason="r"),
        act("order", "/orders/lookup", order_id=order_id),
    ] + [action for action, _ in OPTIMAL_PATHS["return_and_refund"]]
    first = _play("return_and_refund", 7, actions)
    assert first == _play("return_and_refund", 7, actions)
    assert first[-1]["call_history"][2]["status_code"] == 200
    assert first[4]["api_response"]["data"]["refunded_total"] == 1.5


def test_writes_persist_within_an_episode_and_reset_restores(env):
    env.reset(task_id=2)
    env.step(
        act(
            "order",
            "/orders/process-refund",
            "POST",
            order_id="ORD-1005",
            amount=10,
            reason="partial",
        )
    )
    env.step(
        act("order", "/orders/update-status", "POST", order_id="ORD-1005", new_status="returned")
    )
    order = env.step(act("order", "/orders/lookup", order_id="ORD-1005")).api_response["data"]
    assert order["status"] == "returned" and order["refunded_total"] == 10
    env.reset(task_id=2)
    order = env.step(act("order", "/orders/lookup", order_id="ORD-1005")).api_response["data"]
    assert (
        order["status"] == "delivered"
        and order["refunds"] == []
        and env.state.call_history[0].step == 1
    )


def test_interleaved_episodes_are_isolated():
    first, second = ServiceBenchEnvironment(), ServiceBenchEnvironment()
    first.reset(task_id=3)
    second.reset(task_id=3)
    first.step(
        act("order", "/orders/process-refund", "POST", order_id="ORD-1009", amount=99, reason="r")
    )
    seen = second.step(act("order", "/orders/lookup", order_id="ORD-1009")).api_response["data"]
    assert seen["refunds"] == [] and second.score == pytest.approx(0.10)
    assert first.score == pytest.approx(0.30 + 0.10 + 0.10) and first.done and not second.done


def test_state_records_calls_and_milestones(env):
    prompt = env.reset(task_id="billing_discrepancy", seed=11).task_description
    customer = re.search(r"USR-\d+", prompt).group(0)
    env.step(act("user", "/users/lookup", user_id=customer))
    env.step(act("user", "/users/lookup", user_id=customer))
    state = env.state
    assert (
        state.seed == 11 and state.env == "servicebench" and state.task.id == "billing_discrepancy"
    )
    assert [(r.step, r.endpoint, r.status_code, r.signals) for r in state.call_history] == [
        (1, "/users/lookup", 200, ["base_progress"]),
        (2, "/users/lookup", 200, ["duplicate_call"]),
    ]
    assert state.milestones == [] and state.cumulative_reward == 0.0


def _numbers_and_text(value: Any) -> tuple[list[float], str]:
    """Every number in a JSON value, and all its text, to search for stated amounts."""
    if isinstance(value, dict):
        parts = [_numbers_and_text(item) for item in value.values()]
    elif isinstance(value, list):
        parts = [_numbers_and_text(item) for item in value]
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)], ""
    else:
        return [], str(value)
    return [n for numbers, _ in parts for n in numbers], " ".join(text for _, text in parts)


def test_billing_arithmetic_is_derivable_only_across_the_three_services(env):
    env.reset(task_id="billing_discrepancy")
    user = env.step(act("user", "/users/lookup", user_id="USR-003")).api_response["data"]
    order = env.step(act("order", "/orders/lookup", order_id="ORD-1009")).api_response["data"]
    coupon = order["coupon_applied"]
    assert order["user_id"] == user["user_id"] and coupon["code"] == "SAVE20"
    eligible = [item for item in order["items"] if item["sku"] in coupon["eligible_skus"]]
    assert len({item["sku"] for item in eligible}) == 1, "one inventory lookup must suffice"
    product = env.step(act("inventory", "/inventory/lookup", sku=eligible[0]["sku"])).api_response[
        "data"
    ]

    money = lambda value: Decimal(str(value)).quantize(Decimal("0.01"))  # noqa: E731
    list_total = sum(money(product["price"]) * item["quantity"] for item in eligible)
    coupon_value = (list_total * coupon["percent"] / 100).quantize(Decimal("0.01"))
    lines = sum(money(item["unit_price"]) * item["quantity"] for item in order["items"])
    charged = money(order["total_charged"])
    assert charged == lines + coupon_value == Decimal("247.50")
    assert coupon_value == Decimal("49.50") and lines - coupon_value == Decimal("148.50")
    assert charged - (lines - coupon_value) == Decimal("99.00")
    assert charged - (lines - lines * 20 / 100) != Decimal("99.00")  # the naive 20%-off reading

    for response in (user, order, product):
        numbers, text = _numbers_and_text(response)
        assert not {99.0, 148.5, 49.5} & set(numbers)
        assert not re.search(r"\b(99\.00?|148\.50?|49\.50?)\b", text)


def test_episodes_are_small():
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    envs = [ServiceBenchEnvironment() for _ in range(500)]
    for env in envs:
        env.reset(task_id=3)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    per_episode = sum(stat.size_diff for stat in after.compare_to(before, "filename")) / len(envs)
    assert per_episode < 1500, per_episode
    # speed is measured by bench/, never by a timed test


def test_observations_share_one_catalogue_that_refuses_changes(env):
    observation = env.reset(task_id=1)
    catalogue = observation.available_endpoints
    with pytest.raises(TypeError, match="read-only"):
        catalogue[0]["params"]["email"]["required"] = True
    with pytest.raises(TypeError, match="read-only"):
        catalogue[0]["params"].clear()
    with pytest.raises(TypeError, match="read-only"):
        catalogue.append({})
    following = env.step(act("user", "/users/list")).available_endpoints
    assert following is catalogue, "one shared catalogue, not a copy per observation"
    assert following == list(SEED_CATALOGUE)
    assert SEED_CATALOGUE[0]["params"]["email"]["required"] is False
    copied = copy.deepcopy(observation)
    assert copied.available_endpoints == catalogue


def test_a_changed_copy_of_the_catalogue_is_a_plain_list(env):
    catalogue = env.reset(task_id=1).available_endpoints
    mine = json.loads(json.dumps(catalogue))
    mine[0]["params"].clear()
    assert catalogue[0]["params"], "the shared catalogue is untouched"
    parsed = ServiceBenchObservation.model_validate_json(
        ServiceBenchObservation(available_endpoints=mine).model_dump_json()
    )
    assert parsed.available_endpoints == mine and type(parsed.available_endpoints) is list
