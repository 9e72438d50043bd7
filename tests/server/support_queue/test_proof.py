"""Support Queue variants: the best constant action, the proof's rejections, the bounded cache."""

from __future__ import annotations

import dataclasses
import itertools
from functools import partial

import pytest

from servicebench_support_queue.models import DISPOSITIONS, PRIORITIES, QUEUES, SupportQueueAction
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.grader import grade, score_text
from servicebench_support_queue.server.support_queue.proof import prove
from servicebench_support_queue.server.support_queue.tasks import TASKS
from servicebench_support_queue.server.support_queue.text import WORD_CAPS, compile_task_facts
from servicebench_support_queue.server.support_queue.variants import Variant, build_variant
from servicebench_support_queue.server.tasks.seeds import HELD_OUT, TRAIN
from servicebench_support_queue.server.tasks.variants import VariantCache, VariantRejected

TASK_IDS = [task.card.id for task in TASKS]
variant_for = (
    SupportQueueEnvironment.variant_for
)  # the canonical task, or the seed's proven variant
CONSTANT_SEEDS = range(TRAIN.start + 1000, TRAIN.start + 1050)
TRIPLES = list(itertools.product(PRIORITIES, QUEUES, DISPOSITIONS))


def candidate_texts(tickets) -> list[str]:
    """Constant texts worth trying: generic ones, keyword unions, every ticket's gold text."""
    facts = [f for t in tickets for f in (*t.summary_facts, *t.response_facts)]
    return [
        "",
        "Thanks for reaching out. We are looking into this and will get back to you shortly.",
        "Customer reports an issue. Reviewed the account and the recent events; next step noted.",
        "SLA breached. I'm sorry for the delay. I've escalated this to the right team; could you "
        "send the invoice number and which workspace is affected? We will keep you updated.",
        ", ".join(min(f, key=len) for f in facts),
        ". ".join(f[0] for f in facts),
        "; ".join(f[0] for t in tickets for f in t.summary_facts[:2]),
        *(t.gold_summary for t in tickets),
        *(t.gold_response for t in tickets),
    ]


def capped(text: str, component: str) -> str:
    return " ".join(text.split()[: WORD_CAPS[component]])


def labels_score(variant, triple: tuple[str, str, str]) -> float:
    """The mean reward of one constant label triple, on labels alone."""
    p, q, d = triple
    tickets = variant.task.tickets
    return sum(
        0.30 * (p == t.gold.priority)
        + 0.25 * (q == t.gold.queue)
        + 0.20 * (d == t.gold.disposition)
        for t in tickets
    ) / len(tickets)


def summary_score(variant, text: str) -> float:
    """The mean summary coverage one constant summary earns."""
    tickets = variant.task.tickets
    return sum(
        score_text(text, t, "summary", variant.facts[t.ticket_id]).earned for t in tickets
    ) / len(tickets)


def episode_score(variant, action: SupportQueueAction) -> float:
    """The episode score of playing one constant action on every ticket."""
    tickets = variant.task.tickets
    return sum(grade(t, action, variant.facts[t.ticket_id]).reward for t in tickets) / len(tickets)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_best_constant_action_scores_below_0_6(task_id: str) -> None:
    """Search all 80 triples and the candidate texts on 50 seeds; every variant stays < 0.6.

    Labels and summary add independently to the reward, so the best triple and the best
    summary are searched separately; each candidate reply is then graded in full with
    them (an unsafe reply costs its penalty). The worst seed's action is replayed through
    a real episode to confirm its score.
    """
    worst = (0.0, 0, SupportQueueAction(priority="P1", queue="billing", disposition="close"))
    for seed in CONSTANT_SEEDS:
        variant = variant_for(task_id, seed)
        texts = candidate_texts(variant.task.tickets)
        p, q, d = max(TRIPLES, key=partial(labels_score, variant))
        summary = max((capped(t, "summary") for t in texts), key=partial(summary_score, variant))
        replies = (
            SupportQueueAction(
                priority=p, queue=q, disposition=d, summary=summary, response=capped(t, "response")
            )
            for t in texts
        )
        episode = partial(episode_score, variant)
        score, action = max(((episode(action), action) for action in replies), key=lambda r: r[0])
        assert score < 0.6, (seed, action, score)
        if score > worst[0]:
            worst = (score, seed, action)
    score, seed, action = worst
    env = SupportQueueEnvironment()
    obs = env.reset(task_id=task_id, seed=seed)
    while not obs.done:
        obs = env.step(action)
    assert env.score == pytest.approx(score, abs=1e-6)


# ------------------------------------------------------------------ the proof can fail


def tamper(variant: Variant, index: int = 0, **changes) -> Variant:
    tickets = list(variant.task.tickets)
    tickets[index] = dataclasses.replace(tickets[index], **changes)
    return dataclasses.replace(
        variant, task=dataclasses.replace(variant.task, tickets=tuple(tickets))
    )


def test_an_untouched_variant_passes() -> None:
    variant = build_variant("medium_sla_defense", 11)
    assert prove(variant).task is variant.task


@pytest.mark.parametrize(
    "change, problem",
    [
        (
            lambda t: {
                "gold": dataclasses.replace(
                    t.gold, priority="P4" if t.gold.priority != "P4" else "P1"
                )
            },
            "break the rules",
        ),
        (
            lambda t: {
                "gold": dataclasses.replace(
                    t.gold, queue="success" if t.gold.queue != "success" else "billing"
                )
            },
            "break the rules",
        ),
        (lambda t: {"gold_response": "Hi, thanks, we are on it."}, "gold text misses"),
        (lambda t: {"gold_response": t.gold_response + " Please send us your password."}, "unsafe"),
        (
            lambda t: {
                "customer_tier": "enterprise" if t.customer_tier != "enterprise" else "starter"
            },
            "tier field",
        ),
        (
            lambda t: {"recent_events": tuple(e for e in t.recent_events if "SLA" in e)},
            "events do not show",
        ),
        (lambda t: {"body": t.body + "\nSee " + t.gold_summary}, "leaks"),
    ],
)
def test_the_proof_rejects_a_broken_ticket(change, problem: str) -> None:
    variant = build_variant("hard_exec_escalations", 5)
    index = next(i for i, f in enumerate(variant.factors) if f.family == "breach_claim")
    ticket = variant.task.tickets[index]
    with pytest.raises(VariantRejected, match=problem):
        prove(tamper(variant, index, **change(ticket)))


def test_the_proof_rejects_a_request_info_ticket_that_gives_the_detail() -> None:
    for seed in range(1, 50):
        variant = build_variant("medium_sla_defense", seed)
        index = next(
            i for i, t in enumerate(variant.task.tickets) if t.gold.disposition == "request_info"
        )
        if variant.factors[index].situation == "invoice_question/bill_increase":
            ticket = variant.task.tickets[index]
            with pytest.raises(VariantRejected, match="the detail it must omit"):
                prove(tamper(variant, index, body="About INV-40211: " + ticket.body))
            return
    pytest.fail("no bill_increase ticket drawn")


def test_the_proof_rejects_labels_that_are_not_diverse() -> None:
    variant = build_variant("easy_inbox_cleanup", 3)
    first = variant.task.tickets[0]
    copied = tamper(variant, 1, gold=first.gold)
    with pytest.raises(VariantRejected):
        prove(copied)


def test_every_grade_of_a_variant_uses_its_own_task_context() -> None:
    """A note padded with the other tickets' facts is caught only with the task's context."""
    variant = variant_for("hard_exec_escalations", 77)
    facts = compile_task_facts(variant.task.tickets)
    for ticket in variant.task.tickets:
        others = [t for t in variant.task.tickets if t is not ticket]
        padded = "; ".join(
            [*(f[0] for f in ticket.summary_facts), *(t.summary_facts[0][0] for t in others)]
        )
        in_context = score_text(padded, ticket, "summary", facts[ticket.ticket_id])
        assert in_context.flags == ["off_topic_facts"] and in_context.earned == 0.0
        assert score_text(padded, ticket, "summary").coverage == 1.0  # no context: not caught


# ------------------------------------------------------------------ the cache


def test_the_cache_is_bounded_and_rebuilds_identically() -> None:
    cache = VariantCache(build_variant, prove, capacity=3)
    first = cache.get("hard_exec_escalations", 1)
    for seed in range(2, 6):
        cache.get("hard_exec_escalations", seed)
    assert len(cache) == 3
    again = cache.get("hard_exec_escalations", 1)  # evicted, so rebuilt
    assert again is not first and again.task == first.task and again.factors == first.factors
    assert cache.get("hard_exec_escalations", 1) is again


def test_the_registry_serves_the_first_attempt_that_passes() -> None:
    def build(task_id: str, seed: int, attempt: int) -> Variant:
        variant = build_variant(task_id, seed, attempt)
        if attempt < 2:  # break the first two attempts
            return tamper(variant, 0, gold_response="nothing useful")
        return variant

    cache = VariantCache(build, prove)
    served = cache.get("easy_inbox_cleanup", 9)
    assert served.attempt == 2 and cache.rejections == 2
    assert served.task == build_variant("easy_inbox_cleanup", 9, 2).task


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_the_first_attempt_of_every_seed_passes_the_proof(task_id: str) -> None:
    """The gold texts the generator writes pass every grader check (the echo rule, the unsafe
    rules) at once: a rejection would make the seed serve its next attempt, so a change to the
    grader would silently change which variants the training and held-out seeds play."""
    for seed in (*range(1, 201), *range(HELD_OUT.start, HELD_OUT.start + 200)):
        assert variant_for(task_id, seed).attempt == 0, seed
