"""The documented labelling rules: gold labels derived from a generated ticket's factors.

These are the rules data/support_scenarios.json states ("labelling_rules") and the
triage rules the agent reads, written as code. They are deliberately independent of
the generator, which works its labels out from each situation's stated labels: the
proof (server/support_queue/proof.py) serves a variant only when both agree.

* Priority: the impact class sets the base level; one level up, once, never above
  P1, for an Enterprise tier or an already breached first-response SLA. Executive
  pressure is not an input: it can never change a label.
* Queue: the team that owns the topic.
* Disposition: the first that applies of close (resolved, and the events confirm
  it), request_info (a detail needed to act is missing), escalate (the next step
  needs an authority frontline support lacks), respond.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .scenarios import SITUATIONS
from .variants import Factors

IMPACT_LEVEL: Mapping[str, int] = MappingProxyType(
    {
        "production_down": 1,  # production down or failing for many users
        "active_incident_many": 1,  # an active security or abuse incident hitting many people
        "core_workflow_blocked": 2,  # a core workflow broken with no workaround
        "security_one_account": 2,  # a security-sensitive report about one account
        "one_user": 3,  # one user affected
        "workaround": 3,  # a workaround exists
        "routine": 3,  # routine billing, account or commercial question
        "no_impact": 4,  # how-to, feature request, nothing left to do, no breakage
    }
)
TOPIC_QUEUE: Mapping[str, str] = MappingProxyType(
    {
        "access": "security",
        "payments": "billing",
        "product": "technical",
        "commercial": "success",
        "abuse": "trust_safety",
    }
)
AUTHORITIES = frozenset(("incident", "takedown", "refund", "retention"))
RAISING_TIER = "enterprise"


def expected_priority(factors: Factors) -> str:
    level = IMPACT_LEVEL[factors.impact]
    if factors.tier == RAISING_TIER or factors.sla_breached:
        level -= 1
    return f"P{max(1, level)}"


def expected_queue(factors: Factors) -> str:
    return TOPIC_QUEUE[factors.topic]


def expected_disposition(factors: Factors) -> str:
    if factors.resolved:
        return "close"
    if factors.missing_detail:
        return "request_info"
    if factors.needs_authority:
        if factors.needs_authority not in AUTHORITIES:
            raise ValueError(f"unknown authority {factors.needs_authority!r}")
        return "escalate"
    return "respond"


def expected_labels(factors: Factors) -> tuple[str, str, str]:
    """(priority, queue, disposition) by the documented rules."""
    return expected_priority(factors), expected_queue(factors), expected_disposition(factors)


def _check_vocabulary() -> None:
    """Every impact class and topic the scenarios use has a rule (checked at import)."""
    for situation in SITUATIONS.values():
        impacts = {situation.factors["impact"]}
        impacts |= {
            o.factors["impact"]
            for group in situation.options
            for o in group
            if "impact" in o.factors
        }
        unknown = sorted(impacts - set(IMPACT_LEVEL)) + (
            [situation.topic] if situation.topic not in TOPIC_QUEUE else []
        )
        if unknown:
            raise ValueError(f"{situation.key}: no labelling rule for {unknown}")


_check_vocabulary()
