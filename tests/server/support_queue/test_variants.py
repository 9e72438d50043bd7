"""Seeded Support Queue variants: the sweep over 520 seeds per task, canonical seeds, variety.

The sweep goes through the public path (`reset(task_id, seed=N)` and the
`variant_for` it calls), then checks each served variant independently of the
proof that admitted it: the gold action earns 1.0 on every ticket through a real
episode, the labels follow the documented rules from the factors, the task's
difficulty shape holds, the label triples are diverse, and no gold data reaches
an observation.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from functools import cache

import pytest

from servicebench_support_queue.models import DISPOSITIONS, PRIORITIES, QUEUES, Ticket
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.proof import (
    LABEL_CONSTANT_CAP,
    ProvenVariant,
    best_constant_labels,
    gold_action,
)
from servicebench_support_queue.server.support_queue.rules import IMPACT_LEVEL, expected_labels
from servicebench_support_queue.server.support_queue.scenarios import (
    COMPOSITIONS,
    FAMILIES,
    SITUATIONS,
)
from servicebench_support_queue.server.support_queue.tasks import TASKS
from servicebench_support_queue.server.tasks.seeds import HELD_OUT, TRAIN

TASK_IDS = [task.card.id for task in TASKS]
variant_for = (
    SupportQueueEnvironment.variant_for
)  # the canonical task, or the seed's proven variant
SWEEP_SEEDS = list(range(TRAIN.start, TRAIN.start + 480)) + list(
    range(HELD_OUT.start, HELD_OUT.start + 40)
)


@cache
def served(task_id: str) -> tuple[ProvenVariant, ...]:
    return tuple(variant_for(task_id, seed) for seed in SWEEP_SEEDS)


def labels(ticket) -> tuple[str, str, str]:
    return ticket.gold.priority, ticket.gold.queue, ticket.gold.disposition


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_sweep_gold_action_earns_one_on_every_ticket(task_id: str) -> None:
    assert len(SWEEP_SEEDS) >= 500
    env = SupportQueueEnvironment()
    for seed, variant in zip(SWEEP_SEEDS, served(task_id), strict=True):
        obs = env.reset(task_id=task_id, seed=seed)
        assert variant.seed == seed and obs.ticket == variant.task.tickets[0].public_ticket()
        for ticket in variant.task.tickets:
            obs = env.step(gold_action(ticket))
            assert obs.reward == 1.0, (seed, ticket.ticket_id, obs.last_feedback)
        assert obs.done and env.score == 1.0


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_sweep_labels_follow_the_documented_rules(task_id: str) -> None:
    for variant in served(task_id):
        for ticket, factors in zip(variant.task.tickets, variant.factors, strict=True):
            assert labels(ticket) == expected_labels(factors), (variant.seed, factors)
            # pressure alone never changes a label, in either direction
            flipped = dataclasses.replace(factors, exec_pressure=not factors.exec_pressure)
            assert expected_labels(flipped) == labels(ticket)
            base = IMPACT_LEVEL[factors.impact]
            raised = factors.tier == "enterprise" or factors.sla_breached
            assert ticket.gold.priority == f"P{max(1, base - raised)}"
            assert ticket.customer_tier == factors.tier
            breach_events = [e for e in ticket.recent_events if "SLA" in e and "breached" in e]
            assert bool(breach_events) == factors.sla_breached
            if factors.missing_detail:
                assert ticket.gold.disposition == "request_info"


def situation_keys(variant: ProvenVariant) -> list[str]:
    return [f.situation for f in variant.factors]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_sweep_keeps_the_task_difficulty(task_id: str) -> None:
    plan = COMPOSITIONS[task_id]
    for variant in served(task_id):
        tickets, factors = variant.task.tickets, variant.factors
        assert (
            len(tickets)
            == len(plan.slots)
            == {"easy": 2, "medium": 3, "hard": 4}[variant.task.card.difficulty]
        )
        drawn = Counter(situation_keys(variant))
        for slot in plan.slots:  # one ticket from every slot
            assert sum(drawn[key] for key in {s.key for s in slot.draws}) >= 1
        assert len({f.family for f in factors}) == len(tickets)
        by_label = Counter(labels(t) for t in tickets)
        if task_id == "easy_inbox_cleanup":
            assert not any(f.exec_pressure for f in factors)
        if task_id == "medium_sla_defense":
            assert {t.gold.disposition for t in tickets} == {"escalate", "respond", "request_info"}
            escalated = [t for t in tickets if t.gold.disposition == "escalate"]
            assert escalated[0].gold.queue in ("security", "trust_safety")
            technical = [t for t in tickets if t.gold.disposition == "respond"][0]
            assert technical.gold.queue == "technical" and len(technical.recent_events) >= 2
        if task_id == "hard_exec_escalations":
            assert all(f.exec_pressure for f in factors)
            assert {t.gold.queue for t in tickets} == {
                "technical",
                "security",
                "billing",
                "success",
            }
            claim = next(t for t in tickets if t.gold.queue == "security")
            assert claim.gold.disposition == "respond"  # the events refute the claim
            assert any("No successful sign-ins" in e for e in claim.recent_events)
        assert max(by_label.values()) <= 2


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_sweep_label_triples_are_diverse(task_id: str) -> None:
    plan = COMPOSITIONS[task_id]
    triples = list(itertools.product(PRIORITIES, QUEUES, DISPOSITIONS))
    for variant in served(task_id):
        golds = [labels(t) for t in variant.task.tickets]
        for index, dimension in enumerate(("priority", "queue", "disposition")):
            assert len({g[index] for g in golds}) >= plan.min_distinct[dimension]
        # the shortcut in the proof equals the exhaustive search over the 80 triples
        exhaustive = max(
            sum(0.30 * (p == g[0]) + 0.25 * (q == g[1]) + 0.20 * (d == g[2]) for g in golds)
            / len(golds)
            for p, q, d in triples
        )
        _, shortcut = best_constant_labels(variant.task.tickets)
        assert shortcut == pytest.approx(exhaustive) and exhaustive <= LABEL_CONSTANT_CAP


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_no_gold_data_reaches_an_observation(task_id: str) -> None:
    env = SupportQueueEnvironment()
    for seed, variant in list(zip(SWEEP_SEEDS, served(task_id), strict=True))[::5]:
        obs = env.reset(task_id=task_id, seed=seed)
        for ticket in variant.task.tickets:
            assert set(obs.ticket.model_dump()) == set(Ticket.model_fields)
            # the random episode id may spell "gold" by chance: leave it out of the check
            wire = obs.model_dump_json().replace(obs.info["episode_id"], "")
            for secret in (ticket.gold_summary, ticket.gold_response, ticket.gold.rationale):
                assert secret not in wire
            assert "rationale" not in wire and "gold" not in wire.lower()
            obs = env.step(gold_action(ticket))


def test_sweep_covers_every_family_and_differs_by_seed() -> None:
    assert len(FAMILIES) >= 12
    drawn = Counter(
        key for task_id in TASK_IDS for v in served(task_id) for key in situation_keys(v)
    )
    assert set(drawn) == set(SITUATIONS)  # every situation is served somewhere
    for task_id in TASK_IDS:
        bodies = [v.task.tickets[0].body for v in served(task_id)]
        assert len(set(bodies)) > 0.95 * len(bodies)
        firsts = Counter(situation_keys(v)[0] for v in served(task_id))
        assert len(firsts) >= len(COMPOSITIONS[task_id].slots)  # position carries no label
        tiers = Counter(t.customer_tier for v in served(task_id) for t in v.task.tickets)
        assert len(tiers) >= 3


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_canonical_seed_and_no_seed_serve_the_canonical_task(task_id: str) -> None:
    canonical = next(task for task in TASKS if task.card.id == task_id)
    assert variant_for(task_id, None).task is canonical is variant_for(task_id, 0).task
    assert SupportQueueEnvironment.canonical_variant(task_id).factors == ()
    first = SupportQueueEnvironment().reset(task_id=task_id)
    zero = SupportQueueEnvironment().reset(task_id=task_id, seed=0)
    assert first.ticket == zero.ticket == canonical.tickets[0].public_ticket()
    one = SupportQueueEnvironment().reset(task_id=task_id, seed=1)
    assert one.ticket != first.ticket and one.instructions == first.instructions
    assert one.total_tickets == first.total_tickets


def test_episodes_share_a_variant_and_cannot_alter_it() -> None:
    a, b = SupportQueueEnvironment(), SupportQueueEnvironment()
    obs = a.reset(task_id="hard_exec_escalations", seed=42)
    b.reset(task_id="hard_exec_escalations", seed=42)
    assert a._variant is b._variant  # one shared, immutable variant
    obs.ticket.recent_events.append("injected")
    assert "injected" not in b.reset(task_id="hard_exec_escalations", seed=42).ticket.recent_events
    with pytest.raises(dataclasses.FrozenInstanceError):
        a._variant.task.tickets[0].gold = None  # type: ignore[misc]
