"""Coverage of a ticket's facts and the flags that zero it (text/coverage.py)."""

from __future__ import annotations

import pytest

from servicebench_support_queue.server.support_queue.grader import score_text
from servicebench_support_queue.server.support_queue.tasks import TASKS, CanonicalTicket
from servicebench_support_queue.server.support_queue.text import (
    MAX_OFF_TOPIC_FACTS,
    WORD_CAPS,
    count_words,
)

ALL_TICKETS = [t for task in TASKS for t in task.tickets]
BY_ID = {t.ticket_id: t for t in ALL_TICKETS}


@pytest.mark.parametrize(
    "ticket_id, component, text",
    [
        (
            "SQ-1001",
            "response",
            "Hello Marta, the lock on your account expires by itself after half "
            "an hour, so you'll be able to log in before the demo. Or click 'Forgot password' to set a "
            "new one right away.",
        ),
        (
            "SQ-2002",
            "response",
            "Apologies for the slow reply! An admin on your side rotated the "
            "webhook signing secret yesterday at 13:58, which is why your server now rejects our "
            "signatures. Update your endpoint with the new secret from Settings > Webhooks; anything "
            "that failed is redelivered automatically for three days.",
        ),
        (
            "SQ-3003",
            "response",
            "Hello Priya. We cannot see a discount recorded on your account. "
            "Please send us the order form you signed and your rep's name. Invoice INV-31877 isn't due "
            "until July 1, before any charge is taken.",
        ),
        (
            "SQ-2001",
            "summary",
            "Phishing campaign abusing our document-share invitation emails from a "
            "rogue workspace called HR Payroll Team: 63 Kestrel employees received it. Trust and Safety "
            "must suspend it.",
        ),
    ],
)
def test_genuine_paraphrase_earns_full_coverage(ticket_id: str, component: str, text: str) -> None:
    result = score_text(text, BY_ID[ticket_id], component)  # type: ignore[arg-type]
    assert result.coverage == 1.0 and result.flags == []


def task_of(ticket: CanonicalTicket):
    return next(task for task in TASKS if ticket in task.tickets)


def foreign_phrases(ticket: CanonicalTicket) -> list[str]:
    """The first phrasing of every fact of the other tickets of its task."""
    others = [t for t in task_of(ticket).tickets if t is not ticket]
    return [f[0] for t in others for f in (*t.summary_facts, *t.response_facts)]


@pytest.mark.parametrize("component", ["summary", "response"])
def test_text_over_the_word_cap_earns_nothing(component: str) -> None:
    ticket = BY_ID["SQ-2002"]
    genuine = ticket.gold_summary if component == "summary" else ticket.gold_response
    filler = " ".join(f"ref{i}" for i in range(WORD_CAPS[component] - count_words(genuine)))
    at_cap = score_text(f"{genuine} {filler}", ticket, component)  # type: ignore[arg-type]
    over_cap = score_text(f"{genuine} {filler} end", ticket, component)  # type: ignore[arg-type]
    assert at_cap.word_count == WORD_CAPS[component] and at_cap.coverage == 1.0
    assert over_cap.flags == ["over_word_cap"] and over_cap.coverage == 0.0


@pytest.mark.parametrize("ticket", ALL_TICKETS, ids=lambda t: t.ticket_id)
def test_padding_with_other_tickets_facts_earns_nothing(ticket: CanonicalTicket) -> None:
    """Add the task's other facts one by one: full credit up to the limit, none past it."""
    added: list[str] = []
    for phrase in foreign_phrases(ticket):
        added.append(phrase)
        result = score_text(f"{ticket.gold_summary} Also: {'; '.join(added)}.", ticket, "summary")
        if len(result.off_topic) <= MAX_OFF_TOPIC_FACTS:
            assert result.coverage == 1.0 and result.flags == []
        else:
            assert result.flags == ["off_topic_facts"] and result.coverage == 0.0
            return
    pytest.fail("the other tickets' facts never exceeded the off-topic limit")


def test_word_count_is_not_fooled_by_missing_spaces() -> None:
    """Words are runs of letters and digits: punctuation joins nothing, whatever it is."""
    assert count_words("sign-in INV-20417 13:58 j.kim@fernway-outdoor.example") == 11
    assert count_words("locked,out,failed,login") == count_words("locked out failed login") == 4
    for glue in "-.:/@'_":
        assert count_words(glue.join(["lock", "out", "failed", "login"])) == 4
    packed = ",".join(["lockout"] * (WORD_CAPS["summary"] + 1))
    assert "over_word_cap" in score_text(packed, BY_ID["SQ-1001"], "summary").flags


def test_repeating_keywords_earns_nothing() -> None:
    ticket = BY_ID["SQ-1001"]
    spam = "locked out locked out locked locked failed login 30 minutes usual device lock lock"
    result = score_text(spam, ticket, "summary")
    assert "repeated_keywords" in result.flags and result.coverage == 0.0
    concise = score_text(
        "Locked out after failed logins from her usual device; "
        "the 30-minute lock lifts on its own.",
        ticket,
        "summary",
    )
    assert concise.coverage == 1.0


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.card.id)
def test_keyword_union_never_beats_a_genuine_text(task) -> None:
    phrases = [f[0] for t in task.tickets for f in (*t.summary_facts, *t.response_facts)]
    for component in ("summary", "response"):
        union = " ".join(", ".join(phrases).split()[: WORD_CAPS[component]])
        for ticket in task.tickets:
            genuine = ticket.gold_summary if component == "summary" else ticket.gold_response
            stuffed = score_text(union, ticket, component)  # type: ignore[arg-type]
            assert stuffed.earned <= score_text(genuine, ticket, component).earned  # type: ignore[arg-type]
            assert stuffed.earned == 0.0
