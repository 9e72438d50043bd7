"""The Support Queue tasks and tickets, loaded once from data/support_tickets.json.

Everything here is immutable and shared by every episode: an episode only keeps
a task id and a cursor into `SupportTask.tickets`. The gold labels, facts and
gold texts stay on `CanonicalTicket`; the agent only ever sees `public_ticket`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ... import DATA_DIR
from ...models import DISPOSITIONS, PRIORITIES, QUEUES, TaskCard, Ticket

DATA_PATH = DATA_DIR / "support_tickets.json"
ENV_NAME = "support_queue"

Fact = tuple[str, ...]
"""One fact a text must mention: its acceptable phrasings, the first one naming it."""


@dataclass(frozen=True, slots=True)
class GoldLabels:
    priority: str
    queue: str
    disposition: str
    rationale: str


@dataclass(frozen=True, slots=True)
class UnsafeNote:
    """What would make a reply unsafe for this ticket, tied to a grader rule name."""

    rule: str
    note: str


@dataclass(frozen=True, slots=True)
class CanonicalTicket:
    """One ticket with everything the grader needs; never sent to the agent as is."""

    ticket_id: str
    subject: str
    body: str
    customer_tier: str
    product_area: str
    sla_hours: float
    recent_events: tuple[str, ...]
    gold: GoldLabels
    summary_facts: tuple[Fact, ...]
    response_facts: tuple[Fact, ...]
    unsafe: tuple[UnsafeNote, ...]
    gold_summary: str
    gold_response: str

    def public_ticket(self) -> Ticket:
        """The payload the agent sees: a fresh model, so callers cannot alter shared data."""
        return Ticket(
            ticket_id=self.ticket_id,
            subject=self.subject,
            body=self.body,
            customer_tier=self.customer_tier,
            product_area=self.product_area,
            sla_hours=self.sla_hours,
            recent_events=list(self.recent_events),
        )

    @property
    def public_text(self) -> str:
        """All the text the agent was shown (used to tell its own data from others')."""
        return "\n".join((self.subject, self.body, *self.recent_events))


@dataclass(frozen=True, slots=True)
class SupportTask:
    card: TaskCard
    instructions: str
    tickets: tuple[CanonicalTicket, ...]


def _facts(raw: list[list[str]], where: str) -> tuple[Fact, ...]:
    facts = tuple(tuple(str(p) for p in phrasings) for phrasings in raw)
    if not facts or any(not fact or not all(p.strip() for p in fact) for fact in facts):
        raise ValueError(f"{where}: every fact needs at least one non-empty phrasing")
    return facts


def _ticket(raw: Mapping[str, Any]) -> CanonicalTicket:
    tid = raw["ticket_id"]
    gold = GoldLabels(**raw["gold"])
    if (
        gold.priority not in PRIORITIES
        or gold.queue not in QUEUES
        or gold.disposition not in DISPOSITIONS
    ):
        raise ValueError(f"{tid}: gold labels outside the allowed values: {gold}")
    return CanonicalTicket(
        ticket_id=tid,
        subject=raw["subject"],
        body=raw["body"],
        customer_tier=raw["customer_tier"],
        product_area=raw["product_area"],
        sla_hours=float(raw["sla_hours"]),
        recent_events=tuple(raw["recent_events"]),
        gold=gold,
        summary_facts=_facts(raw["summary_facts"], f"{tid} summary_facts"),
        response_facts=_facts(raw["response_facts"], f"{tid} response_facts"),
        unsafe=tuple(UnsafeNote(**note) for note in raw["unsafe"]),
        gold_summary=raw["gold_summary"],
        gold_response=raw["gold_response"],
    )


def _task(raw: Mapping[str, Any], rules: str) -> SupportTask:
    tickets = tuple(_ticket(t) for t in raw["tickets"])
    card = TaskCard(
        id=raw["id"],
        env=ENV_NAME,
        title=raw["title"],
        difficulty=raw["difficulty"],
        description=raw["description"],
        max_steps=len(tickets),
    )
    return SupportTask(card=card, instructions=f"{raw['guidance']}\n\n{rules}", tickets=tickets)


Loaded = tuple[tuple[SupportTask, ...], Mapping[str, tuple[str, ...]], tuple[str, ...]]


def _load(path: Path) -> Loaded:
    """(tasks, synonym table, the product's own e-mail domains)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    rules = "\n".join(raw["triage_rules"])
    tasks = tuple(_task(t, rules) for t in raw["tasks"])
    ids = [t.ticket_id for task in tasks for t in task.tickets]
    if len(ids) != len(set(ids)) or len({task.card.id for task in tasks}) != len(tasks):
        raise ValueError(f"{path}: task and ticket ids must be unique")
    synonyms = MappingProxyType(
        {canon: tuple(variants) for canon, variants in raw["synonyms"]["table"].items()}
    )
    return tasks, synonyms, tuple(raw["product"]["domains"])


TASKS, SYNONYMS, PRODUCT_DOMAINS = _load(DATA_PATH)
TASK_CARDS: tuple[TaskCard, ...] = tuple(task.card for task in TASKS)
_BY_ID: Mapping[str, SupportTask] = MappingProxyType({task.card.id: task for task in TASKS})


def get_task(task_id: str) -> SupportTask:
    """The task with this id (KeyError if unknown; the environment resolves ids first)."""
    return _BY_ID[task_id]
