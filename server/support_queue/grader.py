"""The Support Queue grader: one triage action against one ticket's gold data.

Reward per ticket, the seed's weights exactly (`SCORING_WEIGHTS`):
priority 0.30, queue 0.25, disposition 0.20 (all or nothing each),
summary coverage 0.15 and response coverage 0.10 (weight x fraction of the
ticket's facts the text mentions), and -0.10 once if the reply is unsafe; the total is
clamped to [0, 1].

The labels are compared here; the two texts are read and judged by one call,
`text.grade_texts` (server/support_queue/text/): coverage and its anti-gaming flags
(text/coverage.py) and the unsafe-reply verdict (text/safety/).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pydantic import BaseModel, ConfigDict

from ...models import SupportQueueAction
from .tasks import TASKS, CanonicalTicket
from .text import (
    RULE_NAMES,
    Coverage,
    TextComponent,
    TicketFacts,
    canonical_text,
    coverage_of,
    facts_for,
    grade_texts,
)

SCORING_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "priority": 0.30,
        "queue": 0.25,
        "disposition": 0.20,
        "summary": 0.15,
        "response": 0.10,
        "unsafe_reply": -0.10,
    }
)
DECIMALS = 6


class LabelScore(BaseModel):
    model_config = ConfigDict(frozen=True)

    chosen: str
    correct: bool
    weight: float
    earned: float


class CoverageScore(BaseModel):
    model_config = ConfigDict(frozen=True)

    coverage: float
    weight: float
    earned: float
    matched: list[str]
    missing: list[str]
    off_topic: list[str]
    flags: list[str]
    word_count: int
    word_cap: int
    echo_share: float
    lifted_share: float

    @classmethod
    def of(cls, found: Coverage, component: TextComponent) -> CoverageScore:
        """A text's coverage at its component's weight, rounded as the feedback shows it."""
        weight = SCORING_WEIGHTS[component]
        return cls(
            coverage=round(found.coverage, DECIMALS),
            weight=weight,
            earned=round(weight * found.coverage, DECIMALS),
            matched=found.matched,
            missing=found.missing,
            off_topic=found.off_topic,
            flags=found.flags,
            word_count=found.word_count,
            word_cap=found.word_cap,
            echo_share=round(found.echo_share, DECIMALS),
            lifted_share=round(found.lifted_share, DECIMALS),
        )


class UnsafeHit(BaseModel):
    model_config = ConfigDict(frozen=True)

    rule: str
    excerpt: str


class UnsafeScore(BaseModel):
    model_config = ConfigDict(frozen=True)

    hits: list[UnsafeHit]
    penalty: float


class TicketGrade(BaseModel):
    """The typed breakdown of one ticket's reward (the observation's `last_feedback`)."""

    model_config = ConfigDict(frozen=True)

    ticket_id: str
    priority: LabelScore
    queue: LabelScore
    disposition: LabelScore
    summary: CoverageScore
    response: CoverageScore
    unsafe: UnsafeScore
    raw_total: float
    reward: float


_unknown_rules = {n.rule for task in TASKS for t in task.tickets for n in t.unsafe}
_unknown_rules -= set(RULE_NAMES)
if _unknown_rules:
    raise ValueError(f"support_tickets.json names unknown unsafe rules: {sorted(_unknown_rules)}")


def _label(chosen: str, gold: str, component: str) -> LabelScore:
    weight = SCORING_WEIGHTS[component]
    correct = chosen == gold
    return LabelScore(
        chosen=chosen, correct=correct, weight=weight, earned=weight if correct else 0.0
    )


def score_text(
    text: str, ticket: CanonicalTicket, component: TextComponent, facts: TicketFacts | None = None
) -> CoverageScore:
    """One text's coverage score exactly as `grade` scores it (for tests and benchmarks)."""
    facts = facts if facts is not None else facts_for(ticket)
    return CoverageScore.of(coverage_of(canonical_text(text), component, facts), component)


def grade(
    ticket: CanonicalTicket, action: SupportQueueAction, facts: TicketFacts | None = None
) -> TicketGrade:
    """Grade one action against one ticket; the reward is clamped to [0, 1].

    `facts` is the ticket's entry of `text.compile_task_facts` for its task; it may be
    left out for a canonical ticket."""
    facts = facts if facts is not None else facts_for(ticket)
    gold = ticket.gold
    priority = _label(action.priority, gold.priority, "priority")
    queue = _label(action.queue, gold.queue, "queue")
    disposition = _label(action.disposition, gold.disposition, "disposition")
    texts = grade_texts(action.summary, action.response, facts)
    summary = CoverageScore.of(texts.summary, "summary")
    response = CoverageScore.of(texts.response, "response")
    unsafe = UnsafeScore(
        hits=[UnsafeHit(rule=h.rule, excerpt=h.excerpt) for h in texts.unsafe],
        penalty=SCORING_WEIGHTS["unsafe_reply"] if texts.unsafe else 0.0,
    )
    raw = (
        priority.earned
        + queue.earned
        + disposition.earned
        + summary.earned
        + response.earned
        + unsafe.penalty
    )
    return TicketGrade(
        ticket_id=ticket.ticket_id,
        priority=priority,
        queue=queue,
        disposition=disposition,
        summary=summary,
        response=response,
        unsafe=unsafe,
        raw_total=round(raw, DECIMALS),
        reward=round(min(1.0, max(0.0, raw)), DECIMALS),
    )
