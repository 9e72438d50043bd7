"""The Support Queue grader: one triage action against one ticket's gold data.

Reward per ticket, the seed's weights exactly (`SCORING_WEIGHTS`):
priority 0.30, queue 0.25, disposition 0.20 (all or nothing each),
summary coverage 0.15 and response coverage 0.10 (weight x fraction of the
ticket's facts the text mentions), and -0.10 once if the reply breaks any
unsafe-reply rule (server/support_queue/safety.py); the total is clamped to [0, 1].

Coverage is hard to game: a text earns no coverage at all (flag in brackets) when
- it is longer than its word cap, `WORD_CAPS`, counted by `count_words` [over_word_cap];
- it mentions more than `MAX_OFF_TOPIC_FACTS` facts that belong only to other
  tickets of the same task (canonical or generated: `compile_task_facts` gives each
  ticket its task's other facts): a text padded with every ticket's keywords is not
  about this ticket [off_topic_facts];
- one content word makes up more than `MAX_REPEAT_SHARE` of its (at least
  `REPEAT_MIN_WORDS`) content words and occurs at least `REPEAT_MIN_COUNT`
  times: keyword repetition [repeated_keywords];
- it echoes the ticket (server/support_queue/echo.py): at least `ECHO_LIMITS.share` of
  its ticket-and-fact words are copied from the ticket, and at least `min_copied` of
  them [echoes_ticket].
  A reply that restates a fact in the ticket's words keeps its coverage; a pasted ticket,
  pasted with light edits or padded with filler, does not. The summary is an internal
  note and may quote the ticket's phrases, so only a (near-)verbatim excerpt loses it.
A list of only this ticket's facts earns the same as a genuine text, never more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ...models import SupportQueueAction
from .echo import TicketEcho, measure
from .safety import RULE_NAMES
from .safety_model import verdict
from .tasks import PRODUCT_DOMAINS, SYNONYMS, TASKS, CanonicalTicket
from .text import (
    WORD,
    CompiledFact,
    NormalisedText,
    SynonymTable,
    most_repeated_share,
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
WORD_CAPS: Mapping[str, int] = MappingProxyType({"summary": 60, "response": 150})
MAX_OFF_TOPIC_FACTS = 2
MAX_REPEAT_SHARE = 0.25
REPEAT_MIN_COUNT = 4
REPEAT_MIN_WORDS = 8
DECIMALS = 6


@dataclass(frozen=True)
class EchoLimit:
    """A text echoes its ticket when at least `share` of its relevant tokens, and at least
    `min_copied` tokens, are copied from it (see server/support_queue/echo.py)."""

    share: float
    min_copied: int


ECHO_LIMITS: Mapping[str, EchoLimit] = MappingProxyType(
    {
        "summary": EchoLimit(share=0.95, min_copied=8),
        "response": EchoLimit(share=0.75, min_copied=8),
    }
)

TextComponent = Literal["summary", "response"]


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


class TicketFacts:
    """One ticket's facts, compiled once: its own per component, its task's other facts,
    and its text as the echo measure reads it."""

    __slots__ = ("own", "off_topic", "echo")

    def __init__(
        self,
        own: Mapping[str, tuple[CompiledFact, ...]],
        off_topic: tuple[CompiledFact, ...],
        echo: TicketEcho,
    ) -> None:
        self.own = own
        self.off_topic = off_topic
        self.echo = echo


SYNONYM_TABLE = SynonymTable.build(SYNONYMS)


@lru_cache(maxsize=1 << 14)
def _compiled(phrasings: tuple[str, ...]) -> CompiledFact:
    """Most facts recur across variants (only some carry the variant's values): compile once."""
    return CompiledFact.compile(phrasings, SYNONYM_TABLE)


def _compile_own(ticket: CanonicalTicket) -> dict[str, tuple[CompiledFact, ...]]:
    return {
        "summary": tuple(_compiled(f) for f in ticket.summary_facts),
        "response": tuple(_compiled(f) for f in ticket.response_facts),
    }


def _echo(ticket: CanonicalTicket) -> TicketEcho:
    return TicketEcho.build(
        ticket.public_text,
        {
            "summary": [p for fact in ticket.summary_facts for p in fact],
            "response": [p for fact in ticket.response_facts for p in fact],
        },
    )


def compile_task_facts(tickets: Sequence[CanonicalTicket]) -> Mapping[str, TicketFacts]:
    """Every ticket's facts, and as its off-topic facts those of the task's other tickets
    that share no phrasing with its own (a shared fact is on topic for both)."""
    own = {t.ticket_id: _compile_own(t) for t in tickets}
    compiled: dict[str, TicketFacts] = {}
    for ticket in tickets:
        mine = own[ticket.ticket_id]
        my_phrasings = {p for facts in mine.values() for f in facts for p in f.phrasings}
        seen: set[tuple[tuple[str, ...], ...]] = set()
        others: list[CompiledFact] = []
        for other in tickets:
            if other.ticket_id == ticket.ticket_id:
                continue
            for fact in (*own[other.ticket_id]["summary"], *own[other.ticket_id]["response"]):
                if my_phrasings.isdisjoint(fact.phrasings) and fact.phrasings not in seen:
                    seen.add(fact.phrasings)
                    others.append(fact)
        compiled[ticket.ticket_id] = TicketFacts(mine, tuple(others), _echo(ticket))
    return MappingProxyType(compiled)


CANONICAL_FACTS: Mapping[str, Mapping[str, TicketFacts]] = MappingProxyType(
    {task.card.id: compile_task_facts(task.tickets) for task in TASKS}
)
_CANONICAL_TICKETS = {
    t.ticket_id: (t, CANONICAL_FACTS[task.card.id][t.ticket_id])
    for task in TASKS
    for t in task.tickets
}
_unknown_rules = {n.rule for task in TASKS for t in task.tickets for n in t.unsafe}
_unknown_rules -= set(RULE_NAMES)
if _unknown_rules:
    raise ValueError(f"support_tickets.json names unknown unsafe rules: {sorted(_unknown_rules)}")


def _facts_for(ticket: CanonicalTicket) -> TicketFacts:
    """A canonical ticket's compiled facts; any other ticket's own facts, with no task context
    (callers grading a generated ticket pass its task's `compile_task_facts` entry)."""
    known = _CANONICAL_TICKETS.get(ticket.ticket_id)
    if known is not None and known[0] is ticket:
        return known[1]
    return TicketFacts(_compile_own(ticket), (), _echo(ticket))


def count_words(text: str) -> int:
    """Words as the caps count them: runs of letters and digits, where "sign-in",
    "INV-20417", "13:58" or an e-mail address count once but "a,b,c" counts three."""
    return len(WORD.findall(text))


def _label(chosen: str, gold: str, component: str) -> LabelScore:
    weight = SCORING_WEIGHTS[component]
    correct = chosen == gold
    return LabelScore(
        chosen=chosen, correct=correct, weight=weight, earned=weight if correct else 0.0
    )


def score_text(
    text: str, ticket: CanonicalTicket, component: TextComponent, facts: TicketFacts | None = None
) -> CoverageScore:
    """Coverage of the ticket's facts for one text component, with the anti-gaming flags."""
    facts = facts if facts is not None else _facts_for(ticket)
    own = facts.own[component]
    words = NormalisedText(text, SYNONYM_TABLE)
    found = [f.found_in(words) for f in own]
    matched = [f.name for f, hit in zip(own, found, strict=True) if hit]
    off_topic = [f.name for f in facts.off_topic if f.found_in(words)]
    word_count = count_words(text)
    flags: list[str] = []
    if word_count > WORD_CAPS[component]:
        flags.append("over_word_cap")
    if len(off_topic) > MAX_OFF_TOPIC_FACTS:
        flags.append("off_topic_facts")
    top_count, top_share = most_repeated_share(words.words)
    if (
        len(words.words) >= REPEAT_MIN_WORDS
        and top_count >= REPEAT_MIN_COUNT
        and top_share > MAX_REPEAT_SHARE
    ):
        flags.append("repeated_keywords")
    echo = measure(text, facts.echo, component)
    limit = ECHO_LIMITS[component]
    if echo.share >= limit.share and echo.copied >= limit.min_copied:
        flags.append("echoes_ticket")
    coverage = 0.0 if flags else len(matched) / len(own)
    weight = SCORING_WEIGHTS[component]
    return CoverageScore(
        coverage=round(coverage, DECIMALS),
        weight=weight,
        earned=round(weight * coverage, DECIMALS),
        matched=matched,
        missing=[f.name for f, hit in zip(own, found, strict=True) if not hit],
        off_topic=off_topic,
        flags=flags,
        word_count=word_count,
        word_cap=WORD_CAPS[component],
        echo_share=round(echo.share, DECIMALS),
    )


def grade(
    ticket: CanonicalTicket, action: SupportQueueAction, facts: TicketFacts | None = None
) -> TicketGrade:
    """Grade one action against one ticket; the reward is clamped to [0, 1].

    `facts` is the ticket's entry of `compile_task_facts` for its task; it may be
    left out for a canonical ticket."""
    facts = facts if facts is not None else _facts_for(ticket)
    gold = ticket.gold
    priority = _label(action.priority, gold.priority, "priority")
    queue = _label(action.queue, gold.queue, "queue")
    disposition = _label(action.disposition, gold.disposition, "disposition")
    summary = score_text(action.summary, ticket, "summary", facts)
    response = score_text(action.response, ticket, "response", facts)
    hits = verdict(action.response, ticket.public_text, PRODUCT_DOMAINS)
    unsafe = UnsafeScore(
        hits=[UnsafeHit(rule=h.rule, excerpt=h.excerpt) for h in hits],
        penalty=SCORING_WEIGHTS["unsafe_reply"] if hits else 0.0,
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
