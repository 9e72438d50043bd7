"""The written support policy: in every observation, its values read back, the canonical tasks
kept as they were, and the request oracle deciding by the served text alone."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from servicebench_support_queue.mock_services import SEED_CATALOGUE
from servicebench_support_queue.models import ServiceBenchAction
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.servicebench.policy import (
    CANONICAL_POLICY,
    DRAWS,
    Policy,
    draw_policy,
    read_policy,
)
from servicebench_support_queue.server.servicebench.tasks import SEED_TASK_IDS

SEED_PROMPTS = {
    "order_status_lookup": "Find the current delivery status of order ORD-1005 for customer "
    "jane.doe@example.com. Report the order status.",
    "return_and_refund": "Customer jane.doe@example.com reports that item SKU-445 from order "
    "ORD-1005 arrived damaged. Verify the order is eligible for return, check the item was in the "
    "order, process the refund for the damaged item, and update the order status to 'returned'.",
    "billing_discrepancy": "Customer USR-003 reports being charged $247.50 for order ORD-1009, but "
    "believes the total should be lower. Investigate the discrepancy across all services, identify "
    "the root cause, apply the correct adjustment, and document what happened.",
}


def test_every_drawn_policy_reads_back_from_its_own_text():
    rng = random.Random(1)
    for _ in range(50):
        policy = draw_policy(rng)
        assert read_policy(policy.text()) == policy
    assert read_policy(CANONICAL_POLICY.text()) == CANONICAL_POLICY
    assert {policy.refund_limit for policy in (draw_policy(rng) for _ in range(200))} == set(
        DRAWS["refund_limit"]
    )


def test_the_text_states_each_value_and_what_to_verify_escalate_and_decline():
    text = Policy(21, 150, 10).text()
    for phrase in (
        "honoured within 21 days of the order date",
        "at most $150.00 per request",
        "within 10 days after the order date",
        "Verify before any write",
        "'escalation'",
        "'declined'",
        "'verification_failed'",
    ):
        assert phrase in text


@pytest.mark.parametrize("task_id", SEED_TASK_IDS)
def test_the_canonical_tasks_keep_their_prompts_endpoints_and_scores_and_gain_the_policy(task_id):
    env = ServiceBenchEnvironment()
    history = [env.reset(task_id=task_id)]
    assert history[0].task_description == SEED_PROMPTS[task_id]
    assert history[0].available_endpoints == list(SEED_CATALOGUE) and len(SEED_CATALOGUE) == 11
    while (action := next_action(history)) is not None:
        history.append(env.step(action))
        assert history[-1].policy == CANONICAL_POLICY.text(), "every observation carries it"
    assert env.score == 1.0 and env.state.outcome.end_state_matches
    assert history[0].policy == CANONICAL_POLICY.text()


def test_the_canonical_answers_are_right_under_the_canonical_policy():
    """ORD-1005 is 9 days old (window 45), $49.99 and $99.00 are under the $200 limit."""
    assert CANONICAL_POLICY.return_window_days >= 9 and CANONICAL_POLICY.refund_limit_cents > 9900


def _served(task_id: str, seed: int, family: str, policy: Policy):
    """The first observation of the family's variant as if `policy` had been served."""
    first = ServiceBenchEnvironment().reset(task_id=task_id, seed=seed, family=family)
    return first.model_copy(update={"policy": policy.text()})


def _decision(history) -> ServiceBenchAction:
    """The oracle's first write, given the lookups it asks for (answered by the episode)."""
    env = ServiceBenchEnvironment()
    first = history[0]
    env.reset(task_id=first.task_id, seed=SEED, family=FAMILY)
    while (action := next_action(history)) is not None and action.method == "GET":
        history.append(env.step(action))
    assert action is not None
    return action


SEED, FAMILY = 4, "damage_refund"


def test_the_request_oracle_decides_by_the_served_limit_and_window():
    served = ServiceBenchEnvironment().reset(task_id="damage_claim", seed=SEED, family=FAMILY)
    policy = read_policy(served.policy)
    refund = _decision([served])
    assert refund.endpoint == "/orders/process-refund"
    cents = round(refund.params["amount"] * 100)
    lower = replace(policy, refund_limit=cents // 100 - 1)
    escalate = _decision([_served("damage_claim", SEED, FAMILY, lower)])
    assert escalate.endpoint == "/cases/open" and escalate.params["category"] == "escalation"
    assert round(escalate.params["amount"] * 100) == cents
    shorter = replace(policy, return_window_days=1)
    decline = _decision([_served("damage_claim", SEED, FAMILY, shorter)])
    assert decline.endpoint == "/cases/open" and decline.params["category"] == "declined"
