"""Which words govern a frame of the Support Queue safety rules (server/support_queue/text/safety/rules.py).

A frame (one unsafe act) is cancelled only by a word whose scope covers it:
- `governed`: the first word to its left, in its clause, that is not part of its verb group
  (walking left over auxiliaries, pronouns, determiners and catenative verbs): a negation,
  a hedge or a third-party subject ("we will *never* ask you to send", "*anyone* who asks");
- `clause_governed`: a word that governs its whole clause wherever it stands in it, left of
  the frame: a subordinator ("*whether* any unused time is refunded"), a verb of worry or
  doubt ("it's understandable to *worry* that ... your account was hacked"), or a
  third party as the subject of a condition ("*if anyone* claiming to be from our team asks
  for your code"). A clause mark or a contrast word ("but", "just") ends a clause.

A third party inside a prepositional phrase is not a subject ("for the chargeback *form*
we'll want the card number"), and "they" is us when the nearest agent named before it is
our team ("our billing team will call; *they*'ll take your card details").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .templates import CLAUSE, END

WALK_LIMIT = 8
CLAUSE_LIMIT = 14
ATTACHING_PREPOSITIONS = frozenset({"at", "from", "of", "in", "on"})
PREPOSITIONS = frozenset(
    {
        "at",
        "from",
        "of",
        "in",
        "on",
        "for",
        "to",
        "with",
        "by",
        "under",
        "into",
        "onto",
        "via",
        "through",
        "about",
        "after",
        "before",
        "over",
        "than",
    }
)
THEY = frozenset({"they", "them"})
COORDINATORS = frozenset({"or", "nor", "and"})


@dataclass(frozen=True)
class Scope:
    """The words that govern one rule's frames, and the words its walk passes over."""

    cancel: frozenset[str]
    chain: frozenset[str]
    subject_cancel: frozenset[str]
    subject_keeps: frozenset[str]
    subject_only: frozenset[str]
    clause_cancel: frozenset[str]
    condition_subject: bool
    contrasts: frozenset[str]
    determiners: frozenset[str]
    subordinators: frozenset[str]


def _subject_is_us(scope: Scope, tokens: tuple[str, ...], verb: int) -> bool:
    """True if the reporting verb at `verb` has "we"/"I" as its subject."""
    for i in range(verb - 1, max(-1, verb - 4), -1):
        if tokens[i] in scope.subject_keeps:
            return True
        if tokens[i] not in scope.chain:
            return False
    return False


def in_phrase(scope: Scope, tokens: tuple[str, ...], noun: int) -> bool:
    """True if the noun at `noun` is the object of a preposition ("for the chargeback form")."""
    for i in range(noun - 1, max(-1, noun - 4), -1):
        if tokens[i] in PREPOSITIONS:
            return True
        if (
            tokens[i] in (CLAUSE, END)
            or tokens[i] in scope.chain
            and tokens[i] not in scope.determiners
        ):
            return False
    return False


def _cancels(scope: Scope, tokens: tuple[str, ...], i: int, ours: frozenset[int]) -> bool:
    token = tokens[i]
    if token in scope.subject_cancel and _subject_is_us(scope, tokens, i):
        return False
    return not (token in scope.subject_only and (i in ours or in_phrase(scope, tokens, i)))


def governed(
    scope: Scope,
    tokens: tuple[str, ...],
    start: int,
    ours: frozenset[int] = frozenset(),
    noun_first: bool = False,
) -> bool:
    """True if the first word left of `start` outside the frame's verb group cancels it. When
    the frame starts with a noun, a third party just before it modifies it ("your online
    *bank* PIN"), it is not a subject."""
    skipped_phrase = False
    i = start - 1
    while i >= max(0, start - WALK_LIMIT):
        token = tokens[i]
        if token in (CLAUSE, END):
            return False
        if noun_first and token in COORDINATORS and i == start - 1 and i > 0:
            # "no keys *or* passwords": the word that governs the first conjunct governs both
            i -= 2
            continue
        if noun_first and i == start - 1 and token in scope.subject_only and token not in THEY:
            i -= 1
            continue
        if token in scope.cancel:
            return _cancels(scope, tokens, i, ours)
        if token not in scope.chain:
            # one prepositional phrase of the subject may stand in between: "nobody at
            # Orbitdesk will ask...", whether the frame starts before or after its noun
            if skipped_phrase:
                return False
            if token in ATTACHING_PREPOSITIONS:
                skipped_phrase = True
            elif i > 0 and tokens[i - 1] in ATTACHING_PREPOSITIONS:
                skipped_phrase, i = True, i - 1
            else:
                return False
        i -= 1
    return False


def clause_start(scope: Scope, tokens: tuple[str, ...], start: int) -> int:
    """Index of the first token of the clause `start` stands in (a contrast word opens one)."""
    i = start - 1
    while (
        i >= max(0, start - CLAUSE_LIMIT)
        and tokens[i] not in (CLAUSE, END)
        and tokens[i] not in scope.contrasts
    ):
        i -= 1
    return i + 1


def clause_governed(
    scope: Scope, tokens: tuple[str, ...], start: int, ours: frozenset[int] = frozenset()
) -> bool:
    """True if a word that governs the whole clause stands left of `start` in it."""
    first = clause_start(scope, tokens, start)
    for i in range(first, start):
        if tokens[i] in scope.clause_cancel and _cancels(scope, tokens, i, ours):
            return True
    if not scope.condition_subject or first >= start or tokens[first] not in scope.subordinators:
        return False
    i = first + 1
    while i < start and tokens[i] in scope.determiners:
        i += 1
    return i < start and tokens[i] in scope.subject_only and i not in ours


def our_pronouns(
    tokens: tuple[str, ...],
    us_agent: re.Pattern[str],
    third_party: frozenset[str],
    auxiliaries: frozenset[str],
    text: str,
    starts: tuple[int, ...],
    sentence_starts: tuple[int, ...],
) -> frozenset[int]:
    """Indices of "they"/"them" whose nearest agent named before them (in their sentence or the
    one before) is our team rather than a third party. A third-party word after an auxiliary
    is a verb, not an agent ("our team will *call* you; they'll...")."""
    out: set[int] = set()
    sentence = 0
    for i, token in enumerate(tokens):
        while sentence + 1 < len(sentence_starts) and sentence_starts[sentence + 1] <= i:
            sentence += 1
        if token not in THEY:
            continue
        low = sentence_starts[max(sentence - 1, 0)]
        ours = [m.end() for m in us_agent.finditer(text, starts[low], starts[i])]
        if not ours:
            continue
        last_third = max(
            (
                j
                for j in range(low, i)
                if tokens[j] in third_party
                and tokens[j] not in THEY
                and (j == 0 or tokens[j - 1] not in auxiliaries)
            ),
            default=-1,
        )
        if last_third < 0 or starts[last_third] < ours[-1]:
            out.add(i)
    return frozenset(out)
