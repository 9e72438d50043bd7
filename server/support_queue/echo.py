"""How much of a summary or reply is the ticket's own text, echoed back.

Coverage is meant to pay for the agent's own words. A text that pastes the ticket back
(whole, in large part, or with a few words changed) mentions many of the ticket's facts
without any triage work, so the grader gives it no coverage (server/support_queue/grader.py).

Both texts are read as *content tokens*: lower-case words, stemmed, stop words dropped,
identifiers kept whole ("wms.acme.example", "13:57", "inv-20417"). A token is *copied*
when it belongs to three tokens, in order, with at most one token skipped on either side,
that also stand together in the ticket (subject, body and events), and to a run of at
least `MIN_RUN` such tokens; a run bridges single tokens that were changed, dropped or
added, so light edits do not break it. The *share* is copied tokens / *relevant* tokens, the
text's tokens that occur in the ticket or in the ticket's facts for that text. Filler
("thanks for your patience") is in neither, so diluting a paste with it does not lower
the share; stating a fact in one's own words adds relevant tokens that are not copied,
so it does.

Restating a fact in the ticket's words ("the TLS certificate on that server expired at
13:57 UTC") copies a few runs and leaves most relevant tokens the writer's own; that is
a genuine reply. The limits (`ECHO_LIMITS` in the grader) sit above every gold text of
the canonical tasks and of the seeded variants (which the proof checks), and below
pastes of the ticket with or without light edits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from .text import STOP_WORDS, WORD, stem

MIN_RUN = 4
_IDENTIFIER = re.compile(r"[\d.:/@-]")
_STOP_STEMS = frozenset(stem(w) for w in STOP_WORDS)
_SKIPS = ((1, 2), (1, 3), (2, 3))


@lru_cache(maxsize=1 << 16)
def _token(word: str) -> str:
    """One lower-case word's token: its stem, an identifier as it is, "" for a stop word."""
    word = word.strip("'")
    if _IDENTIFIER.search(word):
        return word
    token = stem(word)
    return "" if token in _STOP_STEMS else token


def content_tokens(text: str) -> list[str]:
    """Stems of the text's words without stop words; identifiers whole."""
    tokens = map(_token, WORD.findall(text.lower().replace("\u2019", "'")))
    return [t for t in tokens if t]


@dataclass(frozen=True, slots=True)
class TicketEcho:
    """A ticket's text as the echo measure needs it, built once per ticket."""

    grams: frozenset[tuple[str, str, str]]
    vocabulary: frozenset[str]
    relevant: Mapping[str, frozenset[str]]

    @classmethod
    def build(cls, ticket_text: str, facts: Mapping[str, Iterable[str]]) -> TicketEcho:
        """`facts` maps a component ("summary", "response") to its facts' phrasings."""
        tokens = content_tokens(ticket_text)
        grams = {
            (tokens[i], tokens[i + a], tokens[i + b])
            for i in range(len(tokens))
            for a, b in _SKIPS
            if i + b < len(tokens)
        }
        vocabulary = frozenset(tokens)
        relevant = {
            component: vocabulary | {t for p in phrasings for t in content_tokens(p)}
            for component, phrasings in facts.items()
        }
        return cls(frozenset(grams), vocabulary, relevant)


@dataclass(frozen=True, slots=True)
class Echo:
    share: float
    copied: int


def _marks(tokens: list[str], ticket: TicketEcho) -> bytearray:
    marks = bytearray(len(tokens))
    vocabulary, grams = ticket.vocabulary, ticket.grams
    for i, first in enumerate(tokens):
        if first not in vocabulary:
            continue
        for a, b in _SKIPS:
            if i + b < len(tokens) and (first, tokens[i + a], tokens[i + b]) in grams:
                marks[i] = marks[i + a] = marks[i + b] = 1
    return marks


def measure(text: str, ticket: TicketEcho, component: str) -> Echo:
    """How much of `text` is copied from the ticket (see the module docstring)."""
    tokens = content_tokens(text)
    marks = _marks(tokens, ticket)
    copied = bytearray(len(tokens))
    i = 0
    if any(marks):
        while i < len(tokens):
            if not marks[i]:
                i += 1
                continue
            end = i
            while end < len(tokens) and (marks[end] or (end + 1 < len(tokens) and marks[end + 1])):
                end += 1  # a run bridges one changed, dropped or added token
            if sum(marks[i:end]) >= MIN_RUN:
                copied[i:end] = marks[i:end]
            i = end
    relevant = ticket.relevant[component]
    in_scope = [
        was_copied for token, was_copied in zip(tokens, copied, strict=True) if token in relevant
    ]
    share = sum(in_scope) / len(in_scope) if in_scope else 0.0
    return Echo(share=share, copied=sum(copied))
