"""The Support Queue scenario families, loaded once from data/support_scenarios.json.

A family (account lockout, duplicate charge, phishing report...) is a topic with
one or more situations; a situation is everything needed to write one ticket of
that kind: its gold labels as a labeller states them, its generating factors, the
value pools it draws from, several subject and body templates in the customer's
voice, its recent events, the facts a good summary and reply mention, its unsafe
notes and the templates of a gold summary and reply. Options are choices within a
situation that change its values and, sometimes, its impact (a manual workaround
or none). A composition says how a task draws its tickets from the situations.

All of it is immutable and shared; server/support_queue/variants.py draws from it.
Templates are checked at import: every placeholder must be a value the situation defines.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ... import DATA_DIR
from ...models import DISPOSITIONS, PRIORITIES, QUEUES
from ...read_only_json import read_only
from .tasks import Fact, UnsafeNote

SCENARIOS_PATH = DATA_DIR / "support_scenarios.json"
BASE_KEYS = frozenset(
    (
        "first",
        "last",
        "email",
        "company",
        "company_short",
        "domain",
        "role",
        "tier",
        "tier_title",
        "sla",
        "open_hours",
        "customer_since",
        "past_tickets",
    )
)
"""Values every ticket has, besides the ones its situation draws."""


@dataclass(frozen=True, slots=True)
class Witness:
    """Regular expressions the public ticket must (not) match for the factors to hold."""

    events_show: tuple[str, ...] = ()
    body_shows: tuple[str, ...] = ()
    body_lacks: tuple[str, ...] = ()

    def merged(self, other: Witness) -> Witness:
        return Witness(
            self.events_show + other.events_show,
            self.body_shows + other.body_shows,
            self.body_lacks + other.body_lacks,
        )


@dataclass(frozen=True, slots=True)
class Option:
    """One choice of an option group: extra values, facts, evidence and label overrides."""

    gold: Mapping[str, str]
    factors: Mapping[str, Any]
    values: tuple[tuple[str, Any], ...]
    summary_facts: tuple[Fact, ...]
    response_facts: tuple[Fact, ...]
    witness: Witness


@dataclass(frozen=True, slots=True)
class Situation:
    key: str
    family: str
    queue: str
    topic: str
    roles: str
    product_areas: tuple[str, ...]
    tiers: tuple[str, ...] | None
    breach_allowed: bool
    pressure_built_in: bool
    priority: str
    disposition: str
    factors: Mapping[str, Any]
    values: tuple[tuple[str, Any], ...]
    options: tuple[tuple[Option, ...], ...]
    subjects: tuple[str, ...]
    bodies: tuple[str, ...]
    events: tuple[str, ...]
    summary_facts: tuple[Fact, ...]
    response_facts: tuple[Fact, ...]
    unsafe: tuple[UnsafeNote, ...]
    gold_summary: str
    gold_response: str
    rationale: str
    witness: Witness


@dataclass(frozen=True, slots=True)
class Slot:
    role: str
    draws: tuple[Situation, ...]


@dataclass(frozen=True, slots=True)
class Composition:
    task_id: str
    breach_chance: float
    pressure_chance: float
    min_distinct: Mapping[str, int]
    slots: tuple[Slot, ...]


def _witness(raw: Mapping[str, Any] | None) -> Witness:
    raw = raw or {}
    return Witness(
        tuple(raw.get("events_show", ())),
        tuple(raw.get("body_shows", ())),
        tuple(raw.get("body_lacks", ())),
    )


def _facts(raw: Iterable[Iterable[str]]) -> tuple[Fact, ...]:
    return tuple(tuple(phrasings) for phrasings in raw)


def _option(raw: Mapping[str, Any]) -> Option:
    return Option(
        gold=read_only(raw.get("gold", {})),
        factors=read_only(raw.get("factors", {})),
        values=tuple(read_only(raw.get("values", {})).items()),
        summary_facts=_facts(raw.get("summary_facts", ())),
        response_facts=_facts(raw.get("response_facts", ())),
        witness=_witness(raw.get("witness")),
    )


def _situation(
    family_name: str, family: Mapping[str, Any], name: str, raw: Mapping[str, Any]
) -> Situation:
    groups = {**family.get("options", {}), **raw.get("options", {})}
    factors = {"resolved": False, "missing_detail": None, "needs_authority": None, **raw["factors"]}
    tiers = raw.get("tiers", family.get("tiers"))
    return Situation(
        key=f"{family_name}/{name}",
        family=family_name,
        queue=family["queue"],
        topic=family["topic"],
        roles=family["roles"],
        product_areas=tuple(family["product_areas"]),
        tiers=tuple(tiers) if tiers else None,
        breach_allowed=raw.get("breach", True),
        pressure_built_in=raw.get("pressure_built_in", False),
        priority=raw["gold"]["priority"],
        disposition=raw["gold"]["disposition"],
        factors=read_only(factors),
        values=tuple(read_only({**family.get("values", {}), **raw.get("values", {})}).items()),
        options=tuple(tuple(_option(o) for o in group) for group in groups.values()),
        subjects=tuple(raw["subjects"]),
        bodies=tuple(raw["bodies"]),
        events=tuple(raw["events"]),
        summary_facts=_facts(raw["summary_facts"]),
        response_facts=_facts(raw["response_facts"]),
        unsafe=tuple(UnsafeNote(**note) for note in raw["unsafe"]),
        gold_summary=raw["gold_summary"],
        gold_response=raw["gold_response"],
        rationale=raw["rationale"],
        witness=_witness(raw.get("witness")),
    )


def value_keys(name: str, spec: Any) -> set[str]:
    """The placeholders one value spec defines."""
    if isinstance(spec, list) and spec and isinstance(spec[0], Mapping):
        return {key for choice in spec for key in choice}
    if isinstance(spec, Mapping) and "person" in spec:
        return {name, f"{name}_first", f"{name}_email"}
    return {name}


def _placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def _check_templates(situation: Situation) -> None:
    """Every placeholder of every template is a value the situation defines."""
    keys = set(BASE_KEYS)
    for name, spec in situation.values:
        keys |= value_keys(name, spec)
    for group in situation.options:
        for option in group:
            keys |= {k for name, spec in option.values for k in value_keys(name, spec)}
    templates = [
        *situation.subjects,
        *situation.bodies,
        *situation.events,
        situation.gold_summary,
        situation.gold_response,
        situation.rationale,
        *(p for fact in situation.summary_facts for p in fact),
        *(p for fact in situation.response_facts for p in fact),
    ]
    templates += [str(v) for _, spec in situation.values for v in _strings(spec)]
    for group in situation.options:
        for option in group:
            templates += [str(v) for _, spec in option.values for v in _strings(spec)]
    unknown = set().union(*(_placeholders(t) for t in templates)) - keys
    if unknown:
        raise ValueError(f"{situation.key}: unknown placeholders {sorted(unknown)}")
    gold_priority = {o.gold.get("priority") for g in situation.options for o in g} - {None}
    if (
        not {situation.priority, *gold_priority} <= set(PRIORITIES)
        or situation.disposition not in DISPOSITIONS
        or situation.queue not in QUEUES
    ):
        raise ValueError(f"{situation.key}: gold labels outside the allowed values")


def _strings(spec: Any) -> Iterable[str]:
    if isinstance(spec, str):
        yield spec
    elif isinstance(spec, list):
        for item in spec:
            yield from _strings(item)
    elif isinstance(spec, Mapping) and not (
        {"range", "money", "clock", "after", "date", "date_after", "person"} & set(spec)
    ):
        for item in spec.values():
            yield from _strings(item)


def _load(
    path: Path,
) -> tuple[Mapping[str, Any], Mapping[str, Situation], Mapping[str, Composition]]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    situations: dict[str, Situation] = {}
    for file_name in raw["family_files"]:
        families = json.loads((path.parent / file_name).read_text(encoding="utf-8"))["families"]
        for family_name, family in families.items():
            for name, situation_raw in family["situations"].items():
                situation = _situation(family_name, family, name, situation_raw)
                _check_templates(situation)
                situations[situation.key] = situation
    compositions = {
        task_id: Composition(
            task_id=task_id,
            breach_chance=float(c["breach_chance"]),
            pressure_chance=float(c["pressure_chance"]),
            min_distinct=read_only(c["min_distinct"]),
            slots=tuple(
                Slot(s["role"], tuple(situations[k] for k in s["draws"])) for s in c["slots"]
            ),
        )
        for task_id, c in raw["compositions"].items()
    }
    setting = read_only({key: raw[key] for key in ("pools", "modifiers", "labelling_rules")})
    return setting, MappingProxyType(situations), MappingProxyType(compositions)


SETTING, SITUATIONS, COMPOSITIONS = _load(SCENARIOS_PATH)
POOLS: Mapping[str, Any] = SETTING["pools"]
MODIFIERS: Mapping[str, Any] = SETTING["modifiers"]
LABELLING_RULES: Sequence[str] = SETTING["labelling_rules"]
FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(s.family for s in SITUATIONS.values()))
