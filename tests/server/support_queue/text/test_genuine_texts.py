"""Genuine notes and replies keep their coverage (issue 20: "a genuine reply that restates facts
in the ticket's words keeps its coverage").

data/genuine_texts.jsonl holds a summary and a first reply for each of 36 tickets (the canonical
tasks and held-out seeds 100,007-100,009), written by someone who read neither the grader nor its
tests, in three styles, twelve tickets each: plain (reusing the ticket's phrases where they are
the right words), heavy paraphrase, and terse notes with a warm reply. Before the `lifted` test
was gated by word order, 30 of the 36 summaries and 5 of the replies were zeroed as echoes: a
note that names the customer, the company and the times carries the ticket's narrative share,
as a sample of its words does, but in an order of its own (echo.py `order`).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.grader import score_text
from servicebench_support_queue.server.support_queue.text import ECHO_LIMITS, canonical_text
from servicebench_support_queue.server.support_queue.text.echo import measure

GENUINE_PATH = Path(__file__).parent / "data" / "genuine_texts.jsonl"
FRESH_PATH = Path(__file__).parent / "data" / "genuine_texts_fresh.jsonl"
"""180 more (a summary and a first reply for tickets of validation seeds 110,000-110,039), by
six writers who saw neither the grader, its tests nor the other set, in four styles (plain,
paraphrase, terse, bullets), written to measure the salad and excerpt tests of echo.py."""
FRESH_FLAGGED = {"summary": 7, "response": 0}
"""Fresh genuine texts flagged `echoes_ticket`, as measured: notes in the plain and bullets
styles that copy 90-100% of their relevant words in the ticket's order (the `lifted` test with
its in-order share, or the in-order share itself); none by the salad or excerpt tests."""
COMPONENTS = ("summary", "response")
FLAGGED = {"summary": 1, "response": 0}
"""Genuine texts flagged `echoes_ticket`, as measured (a paraphrased note whose order score is
just under the gate)."""
MEAN_FLOOR = 0.55
"""Their mean coverage is at least this, per component (measured 0.594 and 0.587)."""


@cache
def graded(path: Path = GENUINE_PATH) -> list[tuple[dict, str, object, object]]:
    """(row, component, coverage score, echo measure) of every genuine text of the file."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    out = []
    for row in rows:
        variant = SupportQueueEnvironment.variant_for(row["task_id"], row["seed"])
        ticket = next(t for t in variant.task.tickets if t.ticket_id == row["ticket_id"])
        facts = variant.facts[ticket.ticket_id]
        for component in COMPONENTS:
            text = row[component]
            score = score_text(text, ticket, component, facts)  # type: ignore[arg-type]
            echo = measure(canonical_text(text), facts.echo, component, ECHO_LIMITS[component])
            out.append((row, component, score, echo))
    return out


def test_the_set_is_one_summary_and_reply_per_ticket_in_three_styles() -> None:
    rows = [row for row, component, _, _ in graded() if component == "summary"]
    assert len(rows) == 36 == len({(r["task_id"], r["seed"], r["ticket_id"]) for r in rows})
    assert Counter(r["style"] for r in rows) == {"plain": 12, "paraphrase": 12, "terse": 12}


@pytest.mark.parametrize("component", COMPONENTS)
def test_genuine_texts_are_not_echoes(component: str) -> None:
    flagged = [
        row["ticket_id"]
        for row, c, score, _ in graded()
        if c == component and "echoes_ticket" in score.flags
    ]
    assert len(flagged) <= FLAGGED[component], flagged
    mean = statistics.mean(score.coverage for _, c, score, _ in graded() if c == component)
    assert mean >= MEAN_FLOOR


def test_a_note_that_tells_the_story_in_its_own_order_keeps_its_coverage() -> None:
    """The texts the `lifted` test alone would zero (the ticket's narrative share or more) are
    told in an order far from chance, so they keep what their facts earn."""
    told = [
        (row["ticket_id"], c, score.flags)
        for row, c, score, echo in graded()
        if echo.lifted >= ECHO_LIMITS[c].lifted and echo.narrative >= ECHO_LIMITS[c].min_copied
    ]
    assert len(told) >= 30
    flagged = [t for t in told if "echoes_ticket" in t[2]]
    assert len(flagged) <= sum(FLAGGED.values()), flagged


def test_the_fresh_set_is_one_summary_and_reply_per_ticket_by_six_writers() -> None:
    rows = [row for row, component, _, _ in graded(FRESH_PATH) if component == "summary"]
    assert len(rows) == 180 == len({(r["task_id"], r["seed"], r["ticket_id"]) for r in rows})
    assert Counter(r["writer"] for r in rows) == {f"g{n}": 30 for n in range(1, 7)}
    assert all(110_000 <= r["seed"] < 110_040 for r in rows)


@pytest.mark.parametrize("component", COMPONENTS)
def test_fresh_genuine_texts_are_neither_samples_nor_excerpts(component: str) -> None:
    """No fresh genuine text reads as words in no English order and no order of the
    ticket's, or as an excerpt of the ticket's sentences; the echo flags on them are the
    measured ones, and their mean coverage stays high."""
    found = [(row, score, echo) for row, c, score, echo in graded(FRESH_PATH) if c == component]
    for row, _, echo in found:
        assert not {"salad", "excerpt"} & set(ECHO_LIMITS[component].echoed_by(echo)), row
    flagged = [row["ticket_id"] for row, score, _ in found if "echoes_ticket" in score.flags]
    assert len(flagged) <= FRESH_FLAGGED[component], flagged
    assert statistics.mean(score.coverage for _, score, _ in found) >= MEAN_FLOOR
