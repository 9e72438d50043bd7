"""Coverage is the agent's own words: a summary or reply that echoes the ticket earns none."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from servicebench_support_queue.models import DISPOSITIONS, PRIORITIES, QUEUES, SupportQueueAction
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.grader import grade, score_text
from servicebench_support_queue.server.support_queue.tasks import TASKS, CanonicalTicket
from servicebench_support_queue.server.support_queue.text import (
    ECHO_LIMITS,
    WORD_CAPS,
    canonical_text,
    count_words,
    facts_for,
)
from servicebench_support_queue.server.support_queue.text.echo import (
    Echo,
    TicketEcho,
    content_tokens,
    identifiers_in,
    measure,
)

variant_for = (
    SupportQueueEnvironment.variant_for
)  # the canonical task, or the seed's proven variant

ALL_TICKETS = [t for task in TASKS for t in task.tickets]
BY_ID = {t.ticket_id: t for t in ALL_TICKETS}
FILLER = (
    "Thanks so much for reaching out to our team today. We really appreciate your patience "
    "and understanding while we look into everything carefully. Our specialists are reviewing "
    "the details now and will follow up with next steps as soon as possible. Have a great day."
)
SWEEP_SEEDS = (*range(1, 61), *range(100_000, 100_060))


def capped(text: str, component: str) -> str:
    """The text cut to the component's word cap, as the grader counts words."""
    words = text.split()[: WORD_CAPS[component]]
    while count_words(" ".join(words)) > WORD_CAPS[component]:
        words.pop()
    return " ".join(words)


def edited(text: str, rate: float, seed: int) -> str:
    """Light edits: drop a word, add one, or change one, at `rate` of the words."""
    rng, out = random.Random(seed), []
    for word in text.split():
        roll = rng.random()
        if roll < rate / 3:
            continue
        out += ["really", word] if roll < 2 * rate / 3 else ["thing"] if roll < rate else [word]
    return " ".join(out)


def reordered(text: str) -> str:
    """The ticket's lines and sentences, last first."""
    pieces = [p for line in text.splitlines() for p in line.split(". ") if p.strip()]
    return ". ".join(reversed(pieces))


ECHOES = {
    "the whole ticket": lambda t, c: t.public_text,
    "body and events": lambda t, c: t.body + "\n" + "\n".join(t.recent_events),
    "the events only": lambda t, c: "Here is what we can see: " + "; ".join(t.recent_events),
    "sentences reordered": lambda t, c: reordered(t.public_text),
    "15% of words edited": lambda t, c: edited(t.public_text, 0.15, 1),
    "30% of words edited": lambda t, c: edited(t.public_text, 0.30, 2),
    "half pasted, half filler": lambda t, c: (
        " ".join(t.public_text.split()[: WORD_CAPS[c] // 2]) + " " + FILLER
    ),
}


# ------------------------------------------------------------------ echoes earn nothing


@pytest.mark.parametrize("how", sorted(ECHOES))
@pytest.mark.parametrize("ticket", ALL_TICKETS, ids=lambda t: t.ticket_id)
def test_a_reply_that_echoes_the_ticket_earns_no_coverage(
    ticket: CanonicalTicket, how: str
) -> None:
    reply = capped(ECHOES[how](ticket, "response"), "response")
    result = score_text(reply, ticket, "response")
    assert "echoes_ticket" in result.flags and result.coverage == 0.0 and result.earned == 0.0


@pytest.mark.parametrize("how", ["the whole ticket", "body and events", "15% of words edited"])
@pytest.mark.parametrize("ticket", ALL_TICKETS, ids=lambda t: t.ticket_id)
def test_a_summary_pasted_from_the_ticket_earns_no_coverage(
    ticket: CanonicalTicket, how: str
) -> None:
    result = score_text(capped(ECHOES[how](ticket, "summary"), "summary"), ticket, "summary")
    assert "echoes_ticket" in result.flags and result.coverage == 0.0


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.card.id)
def test_echoes_earn_nothing_on_seeded_variants(task) -> None:
    for seed in SWEEP_SEEDS[::4]:
        variant = variant_for(task.card.id, seed)
        for ticket in variant.task.tickets:
            facts = variant.facts[ticket.ticket_id]
            for how in (
                "the whole ticket",
                "the events only",
                "15% of words edited",
                "half pasted, half filler",
            ):
                reply = capped(ECHOES[how](ticket, "response"), "response")
                assert score_text(reply, ticket, "response", facts).earned == 0.0, (seed, how)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.card.id)
def test_a_policy_that_pastes_each_ticket_earns_only_its_labels(task) -> None:
    """The best constant labels, with each ticket's own text pasted as summary and reply: the
    texts earn nothing (and a pasted ticket that repeats a hack claim costs the penalty)."""
    tickets = task.tickets
    triples = list(itertools.product(PRIORITIES, QUEUES, DISPOSITIONS))

    def labels(triple: tuple[str, str, str]) -> float:
        p, q, d = triple
        return sum(
            grade(t, SupportQueueAction(priority=p, queue=q, disposition=d)).reward for t in tickets
        ) / len(tickets)

    best = max(triples, key=labels)
    env = SupportQueueEnvironment()
    obs = env.reset(task_id=task.card.id)
    while not obs.done:
        text = (
            obs.ticket.subject + "\n" + obs.ticket.body + "\n" + "\n".join(obs.ticket.recent_events)
        )
        obs = env.step(
            SupportQueueAction(
                priority=best[0],
                queue=best[1],
                disposition=best[2],
                summary=capped(text, "summary"),
                response=capped(text, "response"),
            )
        )
        assert (
            obs.last_feedback["summary"]["earned"] == obs.last_feedback["response"]["earned"] == 0
        )
    assert env.score <= labels(best) + 1e-9


# ------------------------------------------------------------------ genuine texts keep it


GENUINE = {
    "SQ-2002": "Sorry for the slow reply. Your webhook deliveries fail because an admin on your side "
    "rotated the signing secret yesterday, so your endpoint rejects our signatures. Update "
    "the secret on your endpoint with the new one from Settings > Webhooks; Orbitdesk "
    "redelivers anything that failed automatically for three days.",
    "SQ-1001": "Hi Marta, the lock on your account lifts by itself after half an hour, well before "
    "your 3pm demo. If you'd rather not wait, use Forgot password to set a new one now.",
    "SQ-3003": "Hello Priya. We cannot see a discount recorded on your account for INV-31877. "
    "Please send us the order form you signed and your rep's name; the invoice is not "
    "due until July 1.",
}


@pytest.mark.parametrize("ticket_id", sorted(GENUINE))
def test_a_genuine_reply_reusing_some_ticket_words_keeps_its_coverage(ticket_id: str) -> None:
    ticket = BY_ID[ticket_id]
    echo = facts_for(ticket).echo
    shared = set(echo.tokens(canonical_text(GENUINE[ticket_id]))) & echo.vocabulary
    assert len(shared) >= 5  # it does reuse the ticket's words: "webhook", "demo", "inv.31877"...
    result = score_text(GENUINE[ticket_id], ticket, "response")
    assert result.flags == [] and result.coverage == 1.0
    assert result.echo_share < ECHO_LIMITS["response"].share


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.card.id)
def test_gold_texts_of_canonical_and_seeded_tickets_never_echo(task) -> None:
    for seed in (None, *SWEEP_SEEDS):
        variant = variant_for(task.card.id, seed)
        for ticket in variant.task.tickets:
            result = grade(
                ticket,
                SupportQueueAction(
                    priority=ticket.gold.priority,
                    queue=ticket.gold.queue,
                    disposition=ticket.gold.disposition,
                    summary=ticket.gold_summary,
                    response=ticket.gold_response,
                ),
                variant.facts[ticket.ticket_id],
            )
            assert result.reward == 1.0 and result.summary.flags == result.response.flags == []


# ------------------------------------------------------------------ the measure


def echo_of(text: str, ticket: TicketEcho, component: str) -> Echo:
    return measure(canonical_text(text), ticket, component)


TICKET = TicketEcho.build(
    "Since 13:57 UTC every delivery to wms.acme.example fails: the TLS certificate expired.",
    {"response": ["renew the certificate"], "summary": []},
)


def test_tokens_keep_the_tickets_identifiers_whole_and_drop_stop_words() -> None:
    text = canonical_text("Since 13:57 UTC, the INV-20417 to wms.acme.example was paid")
    assert TICKET.tokens(text) == [
        "sinc",
        "13.57",
        "utc",
        "inv",
        "20417",
        "wms.acme.example",
        "paid",
    ]
    assert content_tokens(text, identifiers_in([])) == [
        *("sinc", "13", "57", "utc", "inv", "20417", "wms", "acm", "exampl", "paid")
    ]


def test_a_ticket_identifier_is_one_token_however_it_is_joined() -> None:
    """Its words in its order are the identifier, so a paste with other glue reads the same."""
    for glue in ("wms.acme.example", "wms-acme-example", "wms acme example", "WMS/acme/example"):
        assert TICKET.tokens(canonical_text(f"to {glue} now")) == ["wms.acme.example", "now"]


def test_a_restated_fact_is_a_short_copy_and_filler_is_not_counted() -> None:
    own = echo_of("Please renew the certificate on your server.", TICKET, "response")
    assert own.copied == 0 and own.share == 0.0
    quoted = echo_of(
        "The TLS certificate expired, so please renew the certificate.", TICKET, "response"
    )
    assert quoted.copied == 0  # three tokens in a row, below MIN_RUN
    pasted = echo_of(
        "Every delivery to wms.acme.example fails: the TLS certificate expired.", TICKET, "response"
    )
    diluted = echo_of(
        "Every delivery to wms.acme.example fails: the TLS certificate expired. " + FILLER,
        TICKET,
        "response",
    )
    assert pasted.share == diluted.share == 1.0 and pasted.copied == diluted.copied == 7


def test_a_run_bridges_one_changed_word() -> None:
    echo = echo_of(
        "Since 13:57 UTC every single delivery to wms.acme.example fails", TICKET, "response"
    )
    assert echo.copied == 7 and echo.share == 1.0  # "single" is new: neither copied nor relevant


def test_filler_woven_between_the_tickets_words_does_not_break_a_copy() -> None:
    """A word of filler after each of the ticket's words breaks every gram, but with the
    filler set aside each clause is a piece of the ticket (`_verbatim`), and so is the text."""
    pasted = "Every delivery to wms.acme.example fails: the TLS certificate expired."
    fillers = itertools.cycle(("lorem", "velvet", "ipsum", "copper"))
    woven = " ".join(f"{word} {next(fillers)}" for word in pasted.split(" "))
    limit = ECHO_LIMITS["response"]
    echo = measure(canonical_text(woven), TICKET, "response", limit)
    assert echo.share == 1.0 and echo.copied == 7
    assert echo.dense_share == 1.0 and echo.dense_copied == 7
    assert measure(canonical_text(woven), TICKET, "response").dense_share == 0.0  # no limit


@pytest.mark.parametrize("ticket", ALL_TICKETS, ids=lambda t: t.ticket_id)
def test_a_reply_of_the_tickets_words_woven_with_filler_earns_nothing(ticket) -> None:
    words = canonical_text(ticket.public_text).words
    fillers = itertools.cycle(FILLER.split())
    woven = " ".join(f"{w} {next(fillers)}" for w in words[: WORD_CAPS["response"] // 2])
    result = score_text(woven, ticket, "response")
    assert "echoes_ticket" in result.flags and result.coverage == 0.0
    genuine = score_text(ticket.gold_response.replace(". ", f". {FILLER} ", 1), ticket, "response")
    assert genuine.coverage == 1.0 or "over_word_cap" in genuine.flags
    assert "echoes_ticket" not in genuine.flags


def test_a_sentence_that_is_a_piece_of_the_ticket_is_copied_however_short() -> None:
    """Short pieces (a name line, a two-word clause) make no run of MIN_RUN, but a sentence
    whose relevant words all stand together, in order, in the ticket is the ticket's; a
    sentence that puts two of the ticket's words together in its own way is not."""
    limit = ECHO_LIMITS["summary"]
    pieces = "Certificate expired. Noted, lovely okay. Since 13:57. Okay, lovely."
    echo = measure(canonical_text(pieces), TICKET, "summary", limit)
    assert echo.share == 1.0 and echo.copied == echo.dense_copied == 4
    own = "Expired certificate. Noted, lovely okay. 13:57 since. Okay, lovely."
    assert measure(canonical_text(own), TICKET, "summary", limit).copied == 0


# ------------------------------------------------------------------ samples too short for order


def _sample(ticket: CanonicalTicket, size: int, seed: int) -> str:
    """`size` of the ticket's words in a random order."""
    words = re.findall(r"[^\W_]+", ticket.public_text)
    random.Random(f"{ticket.ticket_id}/{size}/{seed}").shuffle(words)
    return " ".join(words[:size])


def test_a_short_sample_of_the_tickets_words_earns_almost_nothing_with_or_without_filler() -> None:
    """Thirty of the ticket's words in a random order hold too few of its tokens for their
    order against the ticket to tell them from a paraphrase (the `sample_*` test), and by
    chance they can hold a fact's words; they are in no English order, so they are the
    ticket's words echoed (`salad_*`: fluency.py), alone, after a sentence of filler, or
    between two: no sample earns more than 0.25, the issue's bound for any ticket, and hardly
    any earns anything (without the salad test, 0.5 and more)."""
    filler = "Thanks so much for reaching out to our team today."
    found = []
    for ticket in ALL_TICKETS:
        for seed in range(20):
            sample = _sample(ticket, 30, seed)
            for component, text in (
                ("summary", sample),
                ("summary", f"{filler} {sample}"),
                ("response", f"{filler} {sample} {filler}"),
            ):
                found.append(score_text(text, ticket, component).coverage)  # type: ignore[arg-type]
    assert max(found) <= 0.25
    assert sum(c > 0 for c in found) <= 0.01 * len(found)


def test_the_salad_test_reads_english_order_not_the_words() -> None:
    """The same words as a terse note in an order of its own (far from the ticket's) keep
    their coverage; scrambled, they lose it."""
    ticket = BY_ID["SQ-1002"]
    note = "Card expired, so INV-20417 payment declined; owner updated card and invoice now paid."
    kept = score_text(note, ticket, "summary")
    assert kept.coverage > 0 and "echoes_ticket" not in kept.flags
    words = note.replace(",", "").replace(";", "").replace(".", "").split()
    random.Random(3).shuffle(words)
    scrambled = " ".join(words)
    limit, echo = ECHO_LIMITS["summary"], facts_for(ticket).echo
    assert measure(canonical_text(scrambled), echo, "summary").fluency < limit.salad_fluency
    assert measure(canonical_text(note), echo, "summary").fluency > limit.salad_fluency


# ------------------------------------------------------------------ excerpts of whole sentences


def _ticket_sentences(ticket: CanonicalTicket) -> list[str]:
    """The ticket's sentences and lines with at least three words, as written."""
    pieces = re.split(r"(?<=[.!?])\s+|\n", ticket.public_text)
    return [p.strip() for p in pieces if len(p.split()) >= 3]


def test_a_summary_of_the_tickets_own_sentences_in_any_order_earns_almost_nothing() -> None:
    """Three to five of the ticket's sentences, whole, in any order, with a word of one's own
    between them, are an excerpt of the ticket, not a note (`excerpt_*`): over the canonical
    tickets and 60 held-out seeds, none earns more than 0.25 and hardly any earns anything
    (without the excerpt test, 11 of 2,745 earned more than 0.25)."""
    found = []
    for task in TASKS:
        for seed in (None, *range(100_000, 100_060)):
            variant = variant_for(task.card.id, seed)
            for ticket in variant.task.tickets:
                sentences = _ticket_sentences(ticket)
                for k in range(5):
                    rng = random.Random(f"{ticket.ticket_id}/{seed}/{k}")
                    chosen = rng.sample(sentences, min(len(sentences), rng.randint(3, 5)))
                    text = capped(" Noted. ".join(s.rstrip(".") + "." for s in chosen), "summary")
                    facts = variant.facts[ticket.ticket_id]
                    found.append(score_text(text, ticket, "summary", facts).coverage)
    assert max(found) <= 0.25
    assert sum(c > 0 for c in found) <= 0.005 * len(found)


def test_a_note_that_quotes_two_event_lines_keeps_its_coverage() -> None:
    """Quoting the ticket's event lines is what a note does; with sentences of its own the
    note is no excerpt."""
    ticket = BY_ID["SQ-1002"]
    quoted = [e for e in ticket.recent_events if len(e.split()) >= 4][:2]
    note = (
        f"Cx confirms it's sorted. {quoted[0]}. {quoted[1]}. "
        "Expired card swapped by the owner; nothing left for us to do, close it."
    )
    result = score_text(note, ticket, "summary")
    assert "echoes_ticket" not in result.flags and result.coverage > 0


# ------------------------------------------------------------------ the ticket's lines held whole


def _glued_lines(ticket: CanonicalTicket, rng: random.Random) -> str:
    """Three to six of the ticket's lines, in any order, glued with no stop between them, or
    with one of the ticket's own words between them (so no sentence of the text is a piece)."""
    lines = _ticket_sentences(ticket)
    chosen = rng.sample(lines, min(len(lines), rng.randint(3, 6)))
    glue = rng.choice([" ", f" {rng.choice(ticket.public_text.split()).strip('.,;:!?')} "])
    return glue.join(line.rstrip(".") for line in chosen)


def test_the_tickets_lines_rearranged_and_glued_earn_almost_nothing() -> None:
    """The ticket's lines rearranged, however glued, are an excerpt (`lines_*`): over the
    canonical tickets and 60 held-out seeds, none earns more than 0.25 and hardly any earns
    anything (without the whole-lines test, 249 of 2,745 summaries earned more than 0.25)."""
    found = []
    for task in TASKS:
        for seed in (None, *range(100_000, 100_060)):
            variant = variant_for(task.card.id, seed)
            for ticket in variant.task.tickets:
                for k in range(5):
                    rng = random.Random(f"{ticket.ticket_id}/{seed}/glued/{k}")
                    text = capped(_glued_lines(ticket, rng), "summary")
                    facts = variant.facts[ticket.ticket_id]
                    found.append(score_text(text, ticket, "summary", facts).coverage)
    assert max(found) <= 0.25
    assert sum(c > 0 for c in found) <= 0.005 * len(found)


def test_whole_lines_are_found_in_the_relevant_tokens_whatever_joins_them() -> None:
    ticket = BY_ID["SQ-1002"]
    echo = facts_for(ticket).echo
    events = list(ticket.recent_events)
    glued = " payment ".join(reversed(events))  # no stops; the glue is one of the ticket's words
    held = measure(canonical_text(glued), echo, "summary")
    assert held.lines >= len(events) and held.lines_share > 0.8  # an event line's clauses count
    assert "lines" in ECHO_LIMITS["summary"].echoed_by(held)
    note = (
        f"Customer says it's sorted. {events[1]}. Owner swapped the expired card and the invoice "
        "shows as settled now, banner gone; nothing else needed, close it."
    )
    quoted = measure(canonical_text(note), echo, "summary")
    assert quoted.lines >= 1 and quoted.lines_share < ECHO_LIMITS["summary"].lines_share
    assert not ECHO_LIMITS["summary"].echoed_by(quoted)
