"""What a summary or reply is judged against: one ticket's facts, compiled once per ticket.

A ticket's `TicketFacts` hold its own facts per component (what coverage counts), its task's
other tickets' facts (a text that mentions too many of them is off topic), its text as the
echo measure reads it, and its public text (the safety rules read it to tell the customer's
own names and addresses from other customers'). The canonical tasks' are built at import;
a generated variant's by `compile_task_facts` when it is proven.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from ..tasks import SYNONYMS, TASKS, CanonicalTicket
from .echo import TicketEcho
from .words import CompiledFact, SynonymTable

SYNONYM_TABLE = SynonymTable.build(SYNONYMS)


@dataclass(frozen=True, slots=True, eq=False)
class TicketFacts:
    """One ticket's facts, compiled once: its own per component, its task's other facts, its
    text as the echo measure reads it, and its public text."""

    own: Mapping[str, tuple[CompiledFact, ...]]
    off_topic: tuple[CompiledFact, ...]
    echo: TicketEcho
    ticket_text: str


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
        compiled[ticket.ticket_id] = TicketFacts(
            mine, tuple(others), _echo(ticket), ticket.public_text
        )
    return MappingProxyType(compiled)


CANONICAL_FACTS: Mapping[str, Mapping[str, TicketFacts]] = MappingProxyType(
    {task.card.id: compile_task_facts(task.tickets) for task in TASKS}
)
_CANONICAL_TICKETS = {
    t.ticket_id: (t, CANONICAL_FACTS[task.card.id][t.ticket_id])
    for task in TASKS
    for t in task.tickets
}


def facts_for(ticket: CanonicalTicket) -> TicketFacts:
    """A canonical ticket's compiled facts; any other ticket's own facts, with no task context
    (callers grading a generated ticket pass its task's `compile_task_facts` entry)."""
    known = _CANONICAL_TICKETS.get(ticket.ticket_id)
    if known is not None and known[0] is ticket:
        return known[1]
    return TicketFacts(_compile_own(ticket), (), _echo(ticket), ticket.public_text)
