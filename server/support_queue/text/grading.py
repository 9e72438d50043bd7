"""The one entry point for judging an action's texts: `grade_texts`.

Both texts are read once, into their canonical form (canonical.py), and only that is judged:
the summary and the reply for coverage of the ticket's facts (coverage.py, with echo.py), the
reply for safety (safety/verdict.py: the rules and the model read the canonical reply too).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tasks import PRODUCT_DOMAINS
from .canonical import canonical_text
from .coverage import Coverage, coverage_of
from .facts import TicketFacts
from .safety.rules import Hit
from .safety.verdict import verdict


@dataclass(frozen=True, slots=True)
class TextGrade:
    """What the texts of one action earn and cost, before any weight is applied."""

    summary: Coverage
    response: Coverage
    unsafe: tuple[Hit, ...]


def grade_texts(summary: str, response: str, facts: TicketFacts) -> TextGrade:
    """Coverage of the summary and the reply, and the reply's unsafe hits, against one
    ticket (`facts`: its entry of `compile_task_facts`, or `facts_for(ticket)`)."""
    summary_text, response_text = canonical_text(summary), canonical_text(response)
    return TextGrade(
        summary=coverage_of(summary_text, "summary", facts),
        response=coverage_of(response_text, "response", facts),
        unsafe=tuple(verdict(response_text.text, facts.ticket_text, PRODUCT_DOMAINS)),
    )
