"""server/servicebench/faults/oracle.py and the proof through faults: the oracle scores
exactly 1.0 and leaves the expected end state at every fault level, on every family.

A moderate sample here (CI time); `scripts/servicebench_faults_sweep.py` plays the big one.
"""

from __future__ import annotations

import pytest
from servicebench_faults_support import blind_resender, oracle_policy, play

from servicebench_support_queue.server.servicebench import proof
from servicebench_support_queue.server.servicebench.catalogue import families_of_task
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.faults.oracle import KEY, is_fault
from servicebench_support_queue.server.servicebench.faults.schedule import LEVELS
from servicebench_support_queue.server.servicebench.tasks import TASK_CARDS
from servicebench_support_queue.server.tasks.variants import VariantRejected

FAMILIES = [(card.id, info.name) for card in TASK_CARDS for info in families_of_task(card.id)] or [
    (card.id, None) for card in TASK_CARDS
]
SEEDS = (11, 12, 13)


@pytest.mark.parametrize("level", LEVELS[1:])
@pytest.mark.parametrize(("task_id", "family"), FAMILIES)
def test_the_oracle_scores_one_through_faults_on_every_family(level, task_id, family):
    for seed in SEEDS:
        env, history = play(oracle_policy, task_id, seed=seed, family=family, faults=level)
        last = history[-1]
        assert last.done and last.task_completed and last.cumulative_reward == 1.0, (
            seed,
            [(r.step, r.endpoint, r.status_code, r.signals) for r in env.state.call_history],
        )
        assert last.info["outcome"]["end_state_matches"]
        writes = [r for r in env.state.call_history if r.method != "GET"]
        assert all(KEY in record.params for record in writes)


def test_the_sample_meets_every_kind_of_fault():
    kinds = set()
    for task_id, family in FAMILIES:
        for seed in SEEDS:
            env, _ = play(oracle_policy, task_id, seed=seed, family=family, faults="heavy")
            kinds |= {record.kind for record in env.state.faults}
    assert kinds >= {"unavailable", "rate_limited", "timeout"}


def test_the_oracle_waits_out_a_rate_limit_by_retrying():
    """Each retry while the service waits is answered 429 again: a fault, free, and its
    step given back to the budget."""
    for task_id, family in FAMILIES:
        for seed in SEEDS:
            env, history = play(oracle_policy, task_id, seed=seed, family=family, faults="heavy")
            waits = [o for o in history[1:] if o.api_response.get("retry_after_steps", 0) > 1]
            if waits:
                assert history[-1].cumulative_reward == 1.0
                assert all(o.reward == 0.0 and is_fault(o) for o in waits)
                return
    pytest.fail("no rate limit with a wait in the sample")


def test_the_proof_plays_every_fault_level():
    """A variant is served only if the oracle plays it through its faults: an oracle that
    never checks nor keys its writes gets variants rejected."""
    env_cls = ServiceBenchEnvironment
    variants = [
        env_cls.draw_variant(card.id, seed, 0) for card in TASK_CARDS[:3] for seed in range(1, 30)
    ]
    for variant in variants:
        proof.prove(variant, env_cls)
    original = proof.next_action
    try:
        proof.next_action = blind_resender  # type: ignore[assignment]
        rejected = 0
        for variant in variants:
            try:
                proof.prove(variant, env_cls)
            except VariantRejected as rejection:
                rejected += 1
                assert "with faults" in str(rejection)
        assert rejected
    finally:
        proof.next_action = original  # type: ignore[assignment]
