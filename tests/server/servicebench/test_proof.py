"""The proof that admits a variant, the registry that serves them, and cross-process determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest
from server_process import CHILD_TIMEOUT

from servicebench_support_queue.mock_services import to_cents
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.grading import outcome
from servicebench_support_queue.server.servicebench.proof import _graded_wrong, play_oracle, prove
from servicebench_support_queue.server.servicebench.refund_readings import Readings
from servicebench_support_queue.server.servicebench.variants import (
    Variant,
    build_variant,
    canonical_variant,
)
from servicebench_support_queue.server.tasks.variants import (
    MAX_ATTEMPTS,
    VariantCache,
    VariantRejected,
    VariantUnavailable,
)


def proven(variant: Variant):
    return prove(variant, ServiceBenchEnvironment)


def first_variant(task_id: str, family: str) -> Variant:
    return next(
        v for v in (build_variant(task_id, seed) for seed in range(1, 200)) if v.family == family
    )


# ------------------------------------------------------------------------- the proof


@pytest.mark.parametrize(
    "family",
    [
        "coupon_added_percent_of_list",
        "coupon_added_flat",
        "coupon_added_percent_of_sale",
        "stale_price",
    ],
)
def test_proof_returns_the_oracles_refund(family):
    variant = first_variant("billing_discrepancy", family)
    assert (
        to_cents(proven(variant))
        == variant.readings.correct
        == to_cents(variant.spec.refund_amount)
    )


def test_proof_rejects_a_grader_amount_that_disagrees_with_the_data():
    variant = first_variant("billing_discrepancy", "stale_price")
    wrong_spec = replace(variant.spec, refund_amount=variant.spec.refund_amount + 1)
    with pytest.raises(VariantRejected, match="oracle never completed|disagree|not 1.0"):
        proven(replace(variant, spec=wrong_spec))


@pytest.mark.parametrize("damaged, quantity", [(1, 2), (2, 3), (3, 3)])
def test_several_units_the_prompt_counts_are_refunded_and_every_other_count_is_wrong(
    damaged, quantity
):
    variant = next(
        v
        for v in (
            ServiceBenchEnvironment.variants.get("return_and_refund", seed)
            for seed in range(1, 300)
        )
        if f"{damaged} of the {quantity} units" in v.spec.card.description
    )
    order = variant.world.tables["orders"][variant.spec.order_id]
    unit = next(
        to_cents(item["unit_price"])
        for item in order["items"]
        if item["sku"] == variant.spec.item_sku
    )
    assert to_cents(proven(variant)) == damaged * unit == variant.readings.correct
    wrong = variant.readings.wrong
    assert (wrong.get("one_unit_charged") == unit) is (damaged > 1)
    assert (wrong.get("whole_line") == quantity * unit) is (damaged < quantity)
    run = play_oracle(variant, ServiceBenchEnvironment())
    for count in range(1, quantity + 1):  # every other count of units is graded wrong
        assert _graded_wrong(run.before_refund, run.refund, count * unit / 100) is (
            count != damaged
        )
    one_unit_spec = replace(variant.spec, refund_amount=unit / 100)
    if damaged > 1:
        with pytest.raises(VariantRejected):
            proven(replace(variant, spec=one_unit_spec))


def test_proof_rejects_a_second_correct_amount():
    variant = first_variant("return_and_refund", "damaged_item")
    correct = variant.readings.correct
    twin = Readings(correct, {**variant.readings.wrong, "lookalike": correct + 1})
    with pytest.raises(VariantRejected, match="lookalike .* is also correct"):
        proven(replace(variant, readings=twin))


def test_only_the_right_amount_is_graded_right_from_the_point_before_the_refund():
    variant = first_variant("billing_discrepancy", "coupon_added_flat")
    run = play_oracle(variant, ServiceBenchEnvironment())
    assert run.refund is not None and run.history[-1].cumulative_reward == 1.0
    assert not _graded_wrong(run.before_refund, run.refund, variant.readings.correct / 100)
    for amount in variant.readings.wrong.values():
        assert _graded_wrong(run.before_refund, run.refund, amount / 100)
    assert run.before_refund.score < 1.0  # the forks left the oracle's snapshot untouched


@pytest.mark.parametrize(
    "task_id, family",
    [
        ("return_and_refund", "damaged_item"),
        ("billing_discrepancy", "coupon_added_flat"),
        ("billing_discrepancy", "stale_price"),
    ],
)
def test_a_cent_over_or_under_the_answer_is_graded_wrong(task_id, family):
    """Refunds are graded in exact cents: the proof issues both and every variant passes."""
    variant = first_variant(task_id, family)
    run = play_oracle(variant, ServiceBenchEnvironment())
    correct = variant.readings.correct
    for cents in (correct - 1, correct + 1):
        assert _graded_wrong(run.before_refund, run.refund, cents / 100)
    assert not _graded_wrong(run.before_refund, run.refund, correct / 100)


def test_proof_rejects_a_grader_that_lets_a_cent_pass(monkeypatch):
    """The old tolerance (a cent either way) is what the proof's near-miss check catches."""
    monkeypatch.setattr(outcome, "REFUND_TOLERANCE_CENTS", 1)
    variant = first_variant("billing_discrepancy", "coupon_added_percent_of_sale")
    with pytest.raises(VariantRejected, match="a cent off the right"):
        proven(variant)


def test_proof_rejects_a_derived_amount_stated_outright():
    variant = first_variant("billing_discrepancy", "coupon_added_percent_of_list")
    charged = to_cents(variant.world.tables["orders"][variant.spec.order_id]["total_charged"])
    with pytest.raises(VariantRejected, match="stated outright"):
        proven(replace(variant, hidden_cents=variant.hidden_cents + (charged,)))


def test_proof_rejects_a_prompt_that_misses_its_identifiers():
    variant = build_variant("order_status_lookup", 5)
    with pytest.raises(VariantRejected, match="identifier"):
        proven(replace(variant, mentions=variant.mentions + ("ORD-0000",)))


def test_proof_rejects_a_task_the_oracle_cannot_finish():
    variant = build_variant("order_status_lookup", 5)
    other_user = next(
        uid for uid in variant.world.tables["users"] if uid != variant.spec.customer_id
    )
    with pytest.raises(VariantRejected, match="not 1.0|calls"):
        proven(replace(variant, spec=replace(variant.spec, customer_id=other_user)))


def test_canonical_tasks_pass_the_proof_except_task_twos_coincidence():
    assert proven(canonical_variant("order_status_lookup")) is None
    assert proven(canonical_variant("billing_discrepancy")) == 99.0
    # In the seed's task 2 the damaged item's list price equals the price charged, so reading
    # the catalogue gives the same refund: fine for the seed's task, refused for a variant.
    with pytest.raises(VariantRejected, match="list_price_now .* is also correct"):
        proven(canonical_variant("return_and_refund"))


# ---------------------------------------------------------------------- the registry


def test_registry_is_a_bounded_lru_and_serves_the_same_variant():
    registry = VariantCache(build_variant, ServiceBenchEnvironment.prove_variant, capacity=3)
    first = registry.get("return_and_refund", 1)
    assert registry.get("return_and_refund", 1) is first
    for seed in (2, 3):
        registry.get("return_and_refund", seed)
    registry.get("return_and_refund", 1)  # refresh seed 1: seed 2 is now the oldest
    registry.get("return_and_refund", 4)
    assert len(registry) == 3 and registry.get("return_and_refund", 1) is first
    rebuilt = registry.get("return_and_refund", 2)
    assert rebuilt == build_variant("return_and_refund", 2)


def test_registry_skips_rejected_attempts_deterministically():
    def reject_first_attempt(variant: Variant) -> Variant:
        if variant.attempt == 0:
            raise VariantRejected("attempt 0 refused")
        return ServiceBenchEnvironment.prove_variant(variant)

    served = VariantCache(build_variant, reject_first_attempt).get("billing_discrepancy", 9)
    assert served.attempt == 1 and served == build_variant("billing_discrepancy", 9, 1)
    assert (
        served.spec.card.description
        != build_variant("billing_discrepancy", 9, 0).spec.card.description
    )


def test_registry_gives_up_loudly_when_nothing_passes():
    def reject(variant: Variant) -> None:
        raise VariantRejected(f"attempt {variant.attempt} refused")

    with pytest.raises(VariantUnavailable, match=f"no valid variant in {MAX_ATTEMPTS} attempts"):
        VariantCache(build_variant, reject).get("order_status_lookup", 3)


def test_the_environment_serves_the_registrys_proven_variants():
    env = ServiceBenchEnvironment()
    env.reset(task_id="return_and_refund", seed=12345)
    assert env._spec is ServiceBenchEnvironment.variants.get("return_and_refund", 12345).spec
    assert env.state.seed == 12345 and env.state.task.description == env._spec.card.description


# ------------------------------------------------------------------- determinism

EPISODES_SCRIPT = r"""
import json, re, sys
from servicebench_support_queue.models import ServiceBenchAction
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment

def record(observations, env):
    for observation in observations:
        dump = observation.model_dump()
        dump["info"].pop("episode_id")
        print(json.dumps(dump))
    state = env.state.model_dump()
    state.pop("episode_id")
    print(json.dumps(state))

for task in ("order_status_lookup", "return_and_refund", "billing_discrepancy"):
    for seed in (1, 2, 77, 100003):
        env = ServiceBenchEnvironment()
        history = [env.reset(task_id=task, seed=seed)]
        while (action := next_action(history)) is not None:
            history.append(env.step(action))
        record(history, env)
        first = env.reset(task_id=task, seed=seed)
        order_id = re.search(r"ORD-\d+", first.task_description).group(0)
        probes = [("user", "/users/list", "GET", {"page": 2}),
                  ("order", "/orders/process-refund", "POST",
                   {"order_id": order_id, "amount": 1, "reason": "x"}),
                  ("order", "/orders/lookup", "GET", {"order_id": order_id})]
        record([first] + [env.step(ServiceBenchAction(service=service, endpoint=endpoint, method=method,
                                                      params=params))
                          for service, endpoint, method, params in probes], env)
"""


def test_same_task_and_seed_are_byte_identical_across_processes_and_hash_seeds():
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", EPISODES_SCRIPT],
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        for hash_seed in ("0", "4242")
    ]  # run side by side: importing openenv is slow
    outputs = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=CHILD_TIMEOUT)
        assert process.returncode == 0, stderr[-2000:]
        outputs.append(stdout)
    assert outputs[0] == outputs[1]
    records = [json.loads(line) for line in outputs[0].splitlines()]
    assert len(records) > 50
    assert any(
        r.get("api_response", {}).get("data", {}).get("refunded_total") == 1.0 for r in records
    )
