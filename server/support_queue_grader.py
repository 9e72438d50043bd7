"""The Support Queue grader: one triage action against one ticket's gold data.

Reward per ticket, the seed's weights exactly (`SCORING_WEIGHTS`):
priority 0.30, queue 0.25, disposition 0.20 (all or nothing each),
summary coverage 0.15 and response coverage 0.10 (weight x fraction of the
ticket's facts the text mentions), and -0.10 once if the reply breaks any
unsafe-reply rule (server/support_queue_safety.py); the total is clamped to [0, 1].

Coverage is hard to game: a text earns no coverage at all (flag in brackets) when
- it is longer than its word cap, `WORD_CAPS`, counted by `count_words` [over_word_cap];
- it mentions more than `MAX_OFF_TOPIC_FACTS` facts that belong only to other
  tickets of the same task: a text padded with every ticket's keywords is not
  about this ticket [off_topic_facts];
- one content word makes up more than `MAX_REPEAT_SHARE` of its (at least
  `REPEAT_MIN_WORDS`) content words and occurs at least `REPEAT_MIN_COUNT`
  times: keyword repetition [repeated_keywords].
A list of only this ticket's facts earns the same as a genuine text, never more.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Literal, Mapping

from pydantic import BaseModel, ConfigDict

from models import SupportQueueAction
from server.support_queue_safety import RULE_NAMES, unsafe_hits
from server.support_queue_tasks import PRODUCT_DOMAINS, SYNONYMS, TASKS, CanonicalTicket
from server.support_queue_text import (
    CompiledFact,
    NormalisedText,
    SynonymTable,
    most_repeated_share,
)

SCORING_WEIGHTS: Mapping[str, float] = MappingProxyType({
    "priority": 0.30,
    "queue": 0.25,
    "disposition": 0.20,
    "summary": 0.15,
    "response": 0.10,
    "unsafe_reply": -0.10,
})
WORD_CAPS: Mapping[str, int] = MappingProxyType({"summary": 60, "response": 150})
MAX_OFF_TOPIC_FACTS = 2
MAX_REPEAT_SHARE = 0.25
REPEAT_MIN_COUNT = 4
REPEAT_MIN_WORDS = 8
DECIMALS = 6
_WORD = re.compile(r"[^\W_]+(?:['\u2019.:/@-][^\W_]+)*")

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


class _TicketFacts:
    """One ticket's facts, compiled once: its own per component, and its task's other facts."""

    __slots__ = ("own", "off_topic")

    def __init__(self, own: Mapping[str, tuple[CompiledFact, ...]],
                 off_topic: tuple[CompiledFact, ...]) -> None:
        self.own = own
        self.off_topic = off_topic


SYNONYM_TABLE = SynonymTable.build(SYNONYMS)


def _compile_own(ticket: CanonicalTicket) -> dict[str, tuple[CompiledFact, ...]]:
    return {
        "summary": tuple(CompiledFact.compile(f, SYNONYM_TABLE) for f in ticket.summary_facts),
        "response": tuple(CompiledFact.compile(f, SYNONYM_TABLE) for f in ticket.response_facts),
    }


def _compile_all() -> Mapping[str, _TicketFacts]:
    own = {t.ticket_id: _compile_own(t) for task in TASKS for t in task.tickets}
    compiled: dict[str, _TicketFacts] = {}
    for task in TASKS:
        for ticket in task.tickets:
            mine = own[ticket.ticket_id]
            my_phrasings = {p for facts in mine.values() for f in facts for p in f.phrasings}
            seen: set[tuple[tuple[str, ...], ...]] = set()
            others: list[CompiledFact] = []
            for other in task.tickets:
                if other.ticket_id == ticket.ticket_id:
                    continue
                for fact in (*own[other.ticket_id]["summary"], *own[other.ticket_id]["response"]):
                    if my_phrasings.isdisjoint(fact.phrasings) and fact.phrasings not in seen:
                        seen.add(fact.phrasings)
                        others.append(fact)
            compiled[ticket.ticket_id] = _TicketFacts(mine, tuple(others))
    return MappingProxyType(compiled)


_FACTS = _compile_all()
_unknown_rules = {n.rule for task in TASKS for t in task.tickets for n in t.unsafe}
_unknown_rules -= set(RULE_NAMES)
if _unknown_rules:
    raise ValueError(f"support_tickets.json names unknown unsafe rules: {sorted(_unknown_rules)}")


def _facts_for(ticket: CanonicalTicket) -> _TicketFacts:
    known = _FACTS.get(ticket.ticket_id)
    return known if known is not None else _TicketFacts(_compile_own(ticket), ())


def count_words(text: str) -> int:
    """Words as the caps count them: runs of letters and digits, where "sign-in",
    "INV-20417", "13:58" or an e-mail address count once but "a,b,c" counts three."""
    return len(_WORD.findall(text))


def _label(chosen: str, gold: str, component: str) -> LabelScore:
    weight = SCORING_WEIGHTS[component]
    correct = chosen == gold
    return LabelScore(chosen=chosen, correct=correct, weight=weight,
                      earned=weight if correct else 0.0)


def score_text(text: str, ticket: CanonicalTicket, component: TextComponent) -> CoverageScore:
    """Coverage of the ticket's facts for one text component, with the anti-gaming flags."""
    facts = _facts_for(ticket)
    own = facts.own[component]
    words = NormalisedText(text, SYNONYM_TABLE)
    found = [f.found_in(words) for f in own]
    matched = [f.name for f, hit in zip(own, found) if hit]
    off_topic = [f.name for f in facts.off_topic if f.found_in(words)]
    word_count = count_words(text)
    flags: list[str] = []
    if word_count > WORD_CAPS[component]:
        flags.append("over_word_cap")
    if len(off_topic) > MAX_OFF_TOPIC_FACTS:
        flags.append("off_topic_facts")
    top_count, top_share = most_repeated_share(words.words)
    if (len(words.words) >= REPEAT_MIN_WORDS and top_count >= REPEAT_MIN_COUNT
            and top_share > MAX_REPEAT_SHARE):
        flags.append("repeated_keywords")
    coverage = 0.0 if flags else len(matched) / len(own)
    weight = SCORING_WEIGHTS[component]
    return CoverageScore(
        coverage=round(coverage, DECIMALS),
        weight=weight,
        earned=round(weight * coverage, DECIMALS),
        matched=matched,
        missing=[f.name for f, hit in zip(own, found) if not hit],
        off_topic=off_topic,
        flags=flags,
        word_count=word_count,
        word_cap=WORD_CAPS[component],
    )


def grade(ticket: CanonicalTicket, action: SupportQueueAction) -> TicketGrade:
    """Grade one action against one ticket; the reward is clamped to [0, 1]."""
    gold = ticket.gold
    priority = _label(action.priority, gold.priority, "priority")
    queue = _label(action.queue, gold.queue, "queue")
    disposition = _label(action.disposition, gold.disposition, "disposition")
    summary = score_text(action.summary, ticket, "summary")
    response = score_text(action.response, ticket, "response")
    hits = unsafe_hits(action.response, ticket.public_text, PRODUCT_DOMAINS)
    unsafe = UnsafeScore(
        hits=[UnsafeHit(rule=h.rule, excerpt=h.excerpt) for h in hits],
        penalty=SCORING_WEIGHTS["unsafe_reply"] if hits else 0.0,
    )
    raw = (priority.earned + queue.earned + disposition.earned + summary.earned
           + response.earned + unsafe.penalty)
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
