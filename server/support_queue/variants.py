"""Seeded Support Queue variants: tickets generated from the scenario families, as pure data.

`build_variant(task_id, seed, attempt)` draws every choice from
`random.Random(f"support_queue:{task_id}:{seed}:{attempt}")`: a string seed is
hashed with SHA-512, so the same arguments give the same variant in every process
whatever PYTHONHASHSEED is, and nothing here iterates a set. For each slot of the
task's composition it drafts a situation, its options, a tier and SLA, whether the
SLA is already breached and whether an executive presses; it keeps the first draft
whose gold labels are diverse enough for the task, then renders each ticket from
the situation's templates with a company, people and values of its own, and
shuffles the tickets so that position says nothing about the labels.

The gold labels are worked out here the way a labeller would: the situation's
stated labels, one priority level up for an Enterprise tier or a breached SLA.
Each ticket also records its generating `Factors`; the documented rules
(server/support_queue/rules.py) derive the labels from those independently, and
server/support_queue/proof.py serves a variant only when both agree.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from ...models import TaskCard
from ..tasks.variants import Draw, VariantRejected
from .family_tasks import FAMILY_TASKS
from .scenarios import (
    COMPOSITIONS,
    MODIFIERS,
    POOLS,
    Composition,
    Option,
    Situation,
    Witness,
)
from .tasks import (
    CanonicalTicket,
    Fact,
    GoldLabels,
    SupportTask,
    UnsafeNote,
    get_task,
)

MAX_DRAFTS = 64
YEAR = 2024


@dataclass(frozen=True, slots=True)
class Factors:
    """What generated one ticket: everything the labelling rules read, and the pressure they ignore."""

    family: str
    situation: str
    tier: str
    sla_breached: bool
    exec_pressure: bool
    impact: str
    topic: str
    resolved: bool
    missing_detail: str | None
    needs_authority: str | None


@dataclass(frozen=True, slots=True)
class Variant(Draw):
    """One generated task; `factors` and `witnesses` line up with `task.tickets`."""

    task: SupportTask
    factors: tuple[Factors, ...]
    witnesses: tuple[Witness, ...]


@dataclass(frozen=True, slots=True)
class _Draft:
    situation: Situation
    options: tuple[Option, ...]
    tier: str
    sla: int
    breached: bool
    pressure: bool

    @property
    def labels(self) -> tuple[str, str, str]:
        level = int(_base_priority(self)[1])
        if self.tier == "enterprise" or self.breached:
            level = max(1, level - 1)
        return f"P{level}", self.situation.queue, self.situation.disposition

    def factors(self) -> Factors:
        merged = dict(self.situation.factors)
        for option in self.options:
            merged.update(option.factors)
        return Factors(
            family=self.situation.family,
            situation=self.situation.key,
            tier=self.tier,
            sla_breached=self.breached,
            exec_pressure=self.pressure,
            impact=merged["impact"],
            topic=self.situation.topic,
            resolved=bool(merged["resolved"]),
            missing_detail=merged["missing_detail"],
            needs_authority=merged["needs_authority"],
        )


def _base_priority(draft: _Draft) -> str:
    """The situation's stated priority, as its options amend it, before tier and SLA."""
    priority = draft.situation.priority
    for option in draft.options:
        priority = option.gold.get("priority", priority)
    return priority


def _draft(rng: random.Random, situation: Situation, plan: Composition) -> _Draft:
    options = tuple(rng.choice(group) for group in situation.options)
    tier = rng.choice(situation.tiers or tuple(POOLS["tiers"]))
    sla = rng.choice(POOLS["tiers"][tier])
    breached = situation.breach_allowed and rng.random() < plan.breach_chance
    pressure = rng.random() < plan.pressure_chance
    return _Draft(situation, options, tier, sla, breached, pressure)


def _diverse(drafts: list[_Draft], plan: Composition) -> bool:
    if len({d.situation.family for d in drafts}) < len(drafts):
        return False
    labels = [d.labels for d in drafts]
    return all(
        len({triple[i] for triple in labels}) >= plan.min_distinct[dimension]
        for i, dimension in enumerate(("priority", "queue", "disposition"))
    )


def _clock(rng: random.Random, low: int, high: int) -> str:
    return f"{rng.randint(low, high):02d}:{rng.randint(0, 59):02d}"


def _after(clock: str, minutes: int) -> str:
    hours, mins = clock.split(":")
    total = (int(hours) * 60 + int(mins) + minutes) % (24 * 60)
    return f"{total // 60:02d}:{total % 60:02d}"


class _People:
    """Draws people for one variant, never the same first name twice."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: set[str] = set()

    def draw(self) -> tuple[str, str]:
        first = self._rng.choice(POOLS["first_names"])
        while first in self._used:
            first = self._rng.choice(POOLS["first_names"])
        self._used.add(first)
        return first, self._rng.choice(POOLS["last_names"])


def _draw(
    rng: random.Random, name: str, spec: Any, values: dict[str, str], people: _People
) -> None:
    """Draw one value spec into `values` (the kinds: "value_specs" in support_scenarios.json)."""
    if isinstance(spec, str):
        values[name] = spec
        return
    if isinstance(spec, list):
        choice = rng.choice(spec)
        values.update(choice if isinstance(choice, Mapping) else {name: str(choice)})
        return
    kind, args = next(iter(spec.items()))
    if kind == "range":
        values[name] = str(rng.randint(args[0], args[1]))
    elif kind == "money":
        values[name] = f"{rng.randrange(args[0], args[1] + 1, args[2]):,}"
    elif kind == "clock":
        values[name] = _clock(rng, args[0], args[1])
    elif kind == "after":
        values[name] = _after(values[args[0]], rng.randint(args[1], args[2]))
    elif kind == "date":
        values[name] = date(YEAR, rng.randint(args[0], args[1]), rng.randint(1, 28)).isoformat()
    elif kind == "date_after":
        later = date.fromisoformat(values[args[0]]) + timedelta(days=rng.randint(args[1], args[2]))
        values[name] = later.isoformat()
    elif kind == "person":
        first, last = people.draw()
        values.update(
            {
                name: f"{first} {last}",
                f"{name}_first": first,
                f"{name}_email": f"{first.lower()}@{values['domain']}",
            }
        )
    else:
        raise ValueError(f"unknown value spec {kind!r} for {name!r}")


def _values(
    rng: random.Random, draft: _Draft, company: tuple[str, str], people: _People
) -> dict[str, str]:
    first, last = people.draw()
    roles = POOLS["roles"]["exec" if draft.pressure else draft.situation.roles]
    values = {
        "first": first,
        "last": last,
        "company": company[0],
        "domain": company[1],
        "company_short": company[0].split()[0],
        "email": f"{first.lower()}@{company[1]}",
        "role": rng.choice(roles),
        "tier": draft.tier,
        "tier_title": draft.tier.title(),
        "sla": str(draft.sla),
        "open_hours": str(draft.sla + rng.randint(2, 18)),
        "customer_since": str(rng.randint(2018, 2023)),
        "past_tickets": str(rng.randint(1, 12)),
    }
    specs = [*draft.situation.values, *(item for o in draft.options for item in o.values)]
    for name, spec in specs:
        _draw(rng, name, spec, values, people)
    for name in [n for n, v in values.items() if "{" in v]:
        values[name] = values[name].format_map(values)
    return values


def _facts(templates: tuple[Fact, ...], values: Mapping[str, str]) -> tuple[Fact, ...]:
    return tuple(tuple(p.format_map(values) for p in fact) for fact in templates)


def _render(
    rng: random.Random, draft: _Draft, values: Mapping[str, str], ticket_id: str
) -> CanonicalTicket:
    s, breach, pressure = draft.situation, MODIFIERS["sla_breach"], MODIFIERS["pressure"]
    subject = rng.choice(s.subjects).format_map(values)
    paragraphs = [rng.choice(s.bodies).format_map(values)]
    signoff = rng.choice(POOLS["signoffs"]).format_map(values)
    events = [e.format_map(values) for e in s.events]
    background = MODIFIERS["background"]
    if rng.random() < background["chance"]:
        events.insert(
            rng.randint(0, len(events)), rng.choice(background["events"]).format_map(values)
        )
    summary_facts = _facts(
        s.summary_facts + tuple(f for o in draft.options for f in o.summary_facts), values
    )
    response_facts = _facts(
        s.response_facts + tuple(f for o in draft.options for f in o.response_facts), values
    )
    gold_summary, opening = s.gold_summary.format_map(values), ""
    rationale = [s.rationale.format_map(values)]
    if draft.breached:
        paragraphs[0] += " " + rng.choice(breach["chase"]).format_map(values)
        events.append(breach["event"].format_map(values))
        summary_facts += (tuple(breach["summary_fact"]),)
        response_facts += (tuple(breach["response_fact"]),)
        gold_summary = f"{breach['summary_prefix'].format_map(values)} {gold_summary}"
        opening = breach["response_apology"] + " "
    rationale += _raise_note(draft)
    if draft.pressure:
        if not s.pressure_built_in:
            subject = rng.choice(pressure["subject_prefixes"]) + subject
            paragraphs.append(rng.choice(pressure["paragraphs"]).format_map(values))
        rationale.append(pressure["rationale"])
    priority, queue, disposition = draft.labels
    return CanonicalTicket(
        ticket_id=ticket_id,
        subject=subject,
        body="\n\n".join([*paragraphs, signoff]),
        customer_tier=draft.tier,
        product_area=rng.choice(s.product_areas),
        sla_hours=float(draft.sla),
        recent_events=tuple(events),
        gold=GoldLabels(priority, queue, disposition, " ".join(rationale)),
        summary_facts=summary_facts,
        response_facts=response_facts,
        unsafe=tuple(UnsafeNote(n.rule, n.note.format_map(values)) for n in s.unsafe),
        gold_summary=gold_summary,
        gold_response=(
            f"Hi {values['first']},\n\n{opening}{s.gold_response.format_map(values)}"
            "\n\nOrbitdesk Support"
        ),
    )


def _raise_note(draft: _Draft) -> list[str]:
    """Why the priority is one level above the situation's, or why it could not be."""
    reasons = ([MODIFIERS["enterprise"]["raise_reason"]] if draft.tier == "enterprise" else []) + (
        [MODIFIERS["sla_breach"]["raise_reason"]] if draft.breached else []
    )
    if not reasons:
        return []
    note = MODIFIERS["raise"]["capped" if _base_priority(draft) == "P1" else "raised"]
    return [note.format(reasons=" and ".join(reasons))]


def build_variant(task_id: str, seed: int, attempt: int = 0) -> Variant:
    """The generated variant `attempt` of (task, seed); VariantRejected if no draft is diverse enough."""
    task = get_task(task_id)
    return _build(COMPOSITIONS[task_id], task.card, task.instructions, seed, attempt)


def build_family_variant(family: str, seed: int, attempt: int = 0) -> Variant:
    """Attempt `attempt` of one ticket of `family` on `seed` (server/support_queue/family_tasks.py);
    the variant's `task_id` is the family, its card the family task's."""
    task = FAMILY_TASKS[family]
    return _build(task.composition, task.card, task.instructions, seed, attempt)


def _build(
    plan: Composition, card: TaskCard, instructions: str, seed: int, attempt: int
) -> Variant:
    """Draw `plan` (seeded by its key, the task or family: `support_queue:{key}:{seed}:{attempt}`)."""
    task_id = plan.task_id
    rng = random.Random(f"support_queue:{task_id}:{seed}:{attempt}")
    for _ in range(MAX_DRAFTS):
        drafts = [_draft(rng, rng.choice(slot.draws), plan) for slot in plan.slots]
        if _diverse(drafts, plan):
            break
    else:
        raise VariantRejected(f"{task_id} seed {seed} attempt {attempt}: no diverse draft")
    people = _People(rng)
    companies = rng.sample(POOLS["companies"], len(drafts))
    ids: list[str] = []
    while len(ids) < len(drafts):
        candidate = f"SQ-{rng.randint(10000, 99999)}"
        ids += [] if candidate in ids else [candidate]
    rendered = [
        (_render(rng, d, _values(rng, d, c, people), i), d.factors(), _witness(d))
        for d, c, i in zip(drafts, companies, ids, strict=True)
    ]
    rng.shuffle(rendered)
    return Variant(
        task_id=task_id,
        seed=seed,
        attempt=attempt,
        task=SupportTask(
            card=card, instructions=instructions, tickets=tuple(t for t, _, _ in rendered)
        ),
        factors=tuple(f for _, f, _ in rendered),
        witnesses=tuple(w for _, _, w in rendered),
    )


def _witness(draft: _Draft) -> Witness:
    witness = draft.situation.witness
    for option in draft.options:
        witness = witness.merged(option.witness)
    return witness
