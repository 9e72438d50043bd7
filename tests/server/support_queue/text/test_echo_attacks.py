"""Echo attacks that ignore order and glue, over the canonical tickets and 200 held-out seeds.

Each attack builds a summary or reply from the ticket's own words, cut to the component's word
cap: the whole ticket (subject, body, events) joined into one "word" by "-" or ".", word by
word backwards, shuffled, interleaved with filler, or shuffled and padded with filler (two
different fillers); the body alone or the events alone, shuffled; the ticket's sentences
reordered; half of its sentences with a word of one's own between them. The issue's bound is
a mean coverage of at most 0.10 and no ticket above 0.25, and every cell meets it: samples of
the ticket's words too short for their order against the ticket to say anything are read
against English word order instead (echo.py `salad_*`, fluency.py), a text of the ticket's own
sentences is an excerpt (`excerpt_*`), and so is one mostly of the ticket's lines held whole,
however glued or punctuated (`lines_*`: the ticket's unpunctuated lines glued together, or a
filler word that is one of the ticket's, "Noted." after "notes export").
"""

from __future__ import annotations

import random
import re
import statistics
from collections.abc import Callable
from functools import cache

import pytest

from servicebench_support_queue.models import SupportQueueAction
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.grader import score_text
from servicebench_support_queue.server.support_queue.heuristic import triage
from servicebench_support_queue.server.support_queue.tasks import TASKS, CanonicalTicket
from servicebench_support_queue.server.support_queue.text import WORD_CAPS
from servicebench_support_queue.server.tasks.seeds import HELD_OUT

SEEDS = (None, *range(HELD_OUT.start, HELD_OUT.start + 200))
COMPONENTS = ("summary", "response")
FILLER = re.findall(
    r"\S+",
    "Thanks so much for reaching out to our team today. We really appreciate your patience "
    "and understanding while we look into everything carefully.",
)

OTHER_FILLER = re.findall(
    r"\S+",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt "
    "ut labore et dolore magna aliqua; velvet lantern orbit meadow copper ribbon.",
)

Attack = Callable[[list[str], random.Random, int], str]


def _shuffled(words: list[str], rng: random.Random) -> list[str]:
    out = list(words)
    rng.shuffle(out)
    return out


ATTACKS: dict[str, Attack] = {
    "joined by -": lambda w, rng, cap: "-".join(w[:cap]),
    "joined by .": lambda w, rng, cap: ".".join(w[:cap]),
    "reversed": lambda w, rng, cap: " ".join(w[::-1][:cap]),
    "shuffled": lambda w, rng, cap: " ".join(_shuffled(w, rng)[:cap]),
    "interleaved": lambda w, rng, cap: " ".join(
        [x for pair in zip(w, FILLER * 20, strict=False) for x in pair][:cap]
    ),
    "padded": lambda w, rng, cap: " ".join(
        (FILLER[:10] + _shuffled(w, rng)[: cap // 2] + FILLER[10:])[:cap]
    ),
    "interleaved, other filler": lambda w, rng, cap: " ".join(
        [x for pair in zip(w, OTHER_FILLER * 20, strict=False) for x in pair][:cap]
    ),
    "padded, other filler": lambda w, rng, cap: " ".join(
        (OTHER_FILLER[:10] + _shuffled(w, rng)[: cap // 2] + OTHER_FILLER[10:])[:cap]
    ),
}
# Attacks on one part of the ticket, or on its sentences: they read the ticket itself.
PART_ATTACKS: dict[str, Callable[[CanonicalTicket, random.Random, int], str]] = {
    "body shuffled": lambda t, rng, cap: " ".join(_shuffled(_words(t.body), rng)[:cap]),
    "events shuffled": lambda t, rng, cap: " ".join(
        _shuffled(_words("\n".join(t.recent_events)), rng)[:cap]
    ),
    "sentences reordered": lambda t, rng, cap: " ".join(
        " ".join(_shuffled(_sentences(t.public_text), rng)).split()[:cap]
    ),
    "half the sentences, own words between": lambda t, rng, cap: " ".join(
        " Noted. ".join(
            rng.sample(_sentences(t.public_text), len(_sentences(t.public_text)) // 2)
        ).split()[:cap]
    ),
}
MEAN_BOUND = 0.10
"""The issue's bound: mean coverage <= 0.10, and no ticket above 0.25."""


def words_of(ticket: CanonicalTicket) -> list[str]:
    return _words(ticket.public_text)


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text)


def _sentences(text: str) -> list[str]:
    """The ticket's sentences and lines, as written."""
    return [s for s in re.split(r"(?<=[.!?])\s+|\n", text) if s.strip()]


@cache
def coverages() -> dict[tuple[str, str], list[float]]:
    """Every attack's coverage on every ticket, per (attack, component)."""
    found: dict[tuple[str, str], list[float]] = {}
    for task in TASKS:
        for seed in SEEDS:
            variant = SupportQueueEnvironment.variant_for(task.card.id, seed)
            for ticket in variant.task.tickets:
                words, facts = words_of(ticket), variant.facts[ticket.ticket_id]
                for component in COMPONENTS:
                    cap = WORD_CAPS[component]
                    texts = {name: (attack, words) for name, attack in ATTACKS.items()}
                    texts |= {name: (attack, ticket) for name, attack in PART_ATTACKS.items()}
                    for name, (attack, source) in texts.items():
                        rng = random.Random(f"{ticket.ticket_id}/{seed}/{component}/{name}")
                        text = attack(source, rng, cap)  # type: ignore[arg-type]
                        score = score_text(text, ticket, component, facts)  # type: ignore[arg-type]
                        found.setdefault((name, component), []).append(score.coverage)
    return found


@pytest.mark.parametrize("component", COMPONENTS)
@pytest.mark.parametrize("attack", sorted([*ATTACKS, *PART_ATTACKS]))
def test_an_echo_in_any_order_or_glue_earns_almost_no_coverage(attack: str, component: str):
    found = coverages()[(attack, component)]
    assert len(found) == len(SEEDS) * sum(len(t.tickets) for t in TASKS)
    assert statistics.mean(found) <= MEAN_BOUND
    above = [c for c in found if c > 0.25]
    assert not above, f"{len(above)} of {len(found)} tickets above 0.25"


def test_joined_and_reversed_echoes_are_flagged_on_every_canonical_ticket() -> None:
    for task in TASKS:
        for ticket in task.tickets:
            words = words_of(ticket)
            for component in COMPONENTS:
                cap = WORD_CAPS[component]
                for name in ("joined by -", "joined by .", "reversed"):
                    text = ATTACKS[name](words, random.Random(0), cap)
                    result = score_text(text, ticket, component)  # type: ignore[arg-type]
                    assert "echoes_ticket" in result.flags, (ticket.ticket_id, name, component)


@pytest.mark.parametrize("field", COMPONENTS)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_heuristic_labels_with_an_echo_never_beat_the_honest_heuristic(attack: str, field: str):
    """The honest heuristic, and the same with its summary (or reply) replaced by an echo of
    the ticket: the echo's mean episode score over the canonical task and 40 held-out seeds
    is no higher, per task (the issue measured +0.07 for the joined echo)."""
    env = SupportQueueEnvironment()
    for task in TASKS:
        echoed = []
        for seed in HEURISTIC_SEEDS:
            obs = env.reset(task_id=task.card.id, seed=seed)
            while not obs.done:
                words = re.findall(r"[^\W_]+", ticket_text(obs))
                rng = random.Random(f"{obs.ticket.ticket_id}/{field}/{attack}")
                text = ATTACKS[attack](words, rng, WORD_CAPS[field])
                obs = env.step(triage(obs).model_copy(update={field: text}))
            echoed.append(env.score)
        honest = honest_scores(task.card.id)
        assert statistics.mean(echoed) <= statistics.mean(honest), (task.card.id, echoed, honest)


HEURISTIC_SEEDS = SEEDS[:41]
"""The canonical task and 40 held-out seeds."""


@cache
def honest_scores(task_id: str) -> tuple[float, ...]:
    """The honest heuristic's episode score on each of `HEURISTIC_SEEDS`: the same for every
    attack and field (an episode is a function of its task and seed), so played once."""
    env = SupportQueueEnvironment()
    scores = []
    for seed in HEURISTIC_SEEDS:
        obs = env.reset(task_id=task_id, seed=seed)
        while not obs.done:
            obs = env.step(triage(obs))
        scores.append(env.score)
    return tuple(scores)


def ticket_text(obs) -> str:
    ticket = obs.ticket
    return "\n".join((ticket.subject, ticket.body, *ticket.recent_events))


def test_an_attack_text_is_a_valid_action() -> None:
    """The attacks respect the word caps: they are judged as echoes, not cut by the cap."""
    ticket = TASKS[2].tickets[0]
    for component in COMPONENTS:
        for name, attack in ATTACKS.items():
            text = attack(words_of(ticket), random.Random(1), WORD_CAPS[component])
            result = score_text(text, ticket, component)  # type: ignore[arg-type]
            assert "over_word_cap" not in result.flags, (name, component)
    SupportQueueAction(priority="P1", queue="technical", disposition="escalate", summary=text)
