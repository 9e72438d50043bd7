"""How much of a summary or reply is the ticket's own text, echoed back.

Coverage is meant to pay for the agent's own words. A text that pastes the ticket back
(whole, in large part, or with a few words changed) mentions many of the ticket's facts
without any triage work, so it earns no coverage (server/support_queue/text/coverage.py).

Both texts are read as *content tokens*: their canonical words (canonical.py; the ticket is
canonicalised as the text is), lower case, stemmed, stop words dropped, except that the
ticket's own identifiers are one token each, on both sides: every run of words the ticket or
its facts join with one `.`, `:`, `/`, `@`, `-` or apostrophe ("wms.acme.example", "13:57",
"INV-20417", "sign-in") is one token wherever its words stand in that order, however they
are joined there, or in the reverse order (so quoting an address copies one token, not four,
and a ticket pasted with every space turned into "-", or word by word backwards, reads as
the ticket). Two measures read these tokens.

In order (`share`): a token is *copied* when it belongs to three tokens, in order or
backwards, with at most one token skipped on either side, that also stand together in the
ticket (subject, body and events),
and to a run of at least `MIN_RUN` such tokens; a run bridges single tokens that were
changed, dropped or added, so light edits do not break it. A token is copied too when it is
one of its sentence's relevant tokens and those (at least `VERBATIM_MIN`) stand together, in
that order, in the ticket: a sentence that is a piece of the ticket, however short (a name
line, "Please return the duplicate."), with or without filler glued to it. The *share* is copied tokens /
*relevant* tokens, the text's tokens that occur in the ticket or in the ticket's facts for
that text. Filler ("thanks for your patience") is in neither, so diluting a paste with it
does not lower the share; stating a fact in one's own words adds relevant tokens that are
not copied, so it does.

Whatever the order (`lifted`, a bag of tokens): the ticket's *narrative* tokens are those no
fact of either text uses, the story around its facts. `lifted` is the narrative share of the
text's relevant tokens over the narrative share of the ticket's own tokens. A sample of the
ticket's words (shuffled, reversed, glued, interleaved or padded: order and filler do not
matter) carries the ticket's mix, about 1; a genuine text states the facts, so it carries
less, whatever words it shares with the ticket.

Two more read the order of the tokens against the ticket's (`order` and `woven` of `Echo`).
`order` compares the text's adjacent pairs that also follow each other in the ticket with the
number the same tokens would show in a random order (in closed form; see `_order`): a sample
of the ticket's words, shuffled or padded, shows about what chance gives; a text that reuses
many of the ticket's words in its sense reuses some of its phrases, so it shows more, and
more the more of its words it reuses. So a text with at least `sample_min` ticket tokens is a
sample when its score is below `sample_slope` x those tokens + `sample_offset`; with fewer
(or with a score above that line) order cannot tell a sample from a paraphrase in one's own
words, which this must never zero. `woven` counts the ticket's pairs split apart in the text
by one or two tokens that are not the ticket's: the ticket copied word by word with filler
between; a genuine text rarely splits the ticket's pairs, and never most of them.

Two more read what order cannot. A sample too short for `order` to tell (a few dozen of the
ticket's words, shuffled, padded or interleaved, that may hold a fact's words by chance) is
not English: `fluency` (fluency.py) reads where its small words stand against written
support English, so a text with at least `salad_min` of the ticket's tokens, in an order no
more the ticket's than `salad_order`, whose small words stand where English never puts
them, is the ticket's words echoed (the `salad_*` limits; a terse note or a list of facts
has too few small words to be judged). And a text whose sentences are, three or more of
them and nearly all its words, whole sentences of the ticket (`_verbatim`) is an excerpt of
it in whatever order (the `excerpt_*` limits); a note that quotes the ticket's event lines
among sentences of its own is not. Nor can the ticket's lines, glued with no stop between
them or with one of its words, hide from that: a text whose relevant tokens are mostly the
ticket's lines held whole, wherever they stand, is an excerpt too (the `lines_*` limits).

Restating a fact in the ticket's words ("the TLS certificate on that server expired at
13:57 UTC") copies a few runs and leaves most relevant tokens the writer's own; that is
a genuine reply. The limits (`ECHO_LIMITS` in coverage.py) sit above every gold text of
the canonical tasks and of the seeded variants (which the proof checks), and below
pastes of the ticket with or without light edits, and samples of its words in any order.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, compress
from math import sqrt
from types import MappingProxyType

from .canonical import WORD, CanonicalText, canonical_text, word_pattern
from .fluency import fluency
from .words import STOP_WORDS, stem

MIN_RUN = 4
VERBATIM_MIN = 2
_SENTENCE_END = re.compile(r"[.!?;:\n]")
"""Where a sentence (or a line, or a clause after ";" or ":") of a text may end: where the mark
is a line break or stands before a space (not inside "wms.acme.example" or "13:57")."""
_STOP_STEMS = frozenset(stem(w) for w in STOP_WORDS)
_SKIPS = ((1, 2), (1, 3), (2, 3))


_JOINED = re.compile(r"[^\W_]+(?:['\u2019.:/@-][^\W_]+)+")
"""Words joined by one `.`, `:`, `/`, `@`, `-` or apostrophe: an identifier in a ticket."""

Identifiers = Mapping[str, tuple[tuple[tuple[str, ...], str], ...]]
"""First word -> the identifiers (as lower-case word runs, forwards or backwards) that start
with it, longest first, each with its token (its words in the ticket's order, "."-joined)."""


@lru_cache(maxsize=1 << 16)
def _token(word: str) -> str:
    """One lower-case word's token: its stem (a word with a digit as it is), "" for a stop
    word."""
    token = stem(word)
    return "" if token in _STOP_STEMS else token


def identifiers_in(texts: Iterable[str]) -> Identifiers:
    """The identifiers of `texts` (see the module docstring), indexed by their first word."""
    runs = {
        tuple(w.lower() for w in WORD.findall(joined))
        for text in texts
        for joined in _JOINED.findall(canonical_text(text).text)
    }
    readings = {(run, ".".join(run)) for run in runs} | {(run[::-1], ".".join(run)) for run in runs}
    grouped: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for run, token in sorted(readings, key=lambda r: (-len(r[0]), r)):
        grouped.setdefault(run[0], []).append((run, token))
    return MappingProxyType({first: tuple(runs) for first, runs in grouped.items()})


def content_tokens(text: CanonicalText, identifiers: Identifiers) -> list[str]:
    """Stems of the text's words without stop words; each of `identifiers` one token."""
    return _tokens_at(text, identifiers)[0]


def _tokens_at(text: CanonicalText, identifiers: Identifiers) -> tuple[list[str], list[int]]:
    """`content_tokens`, with the index in `text.words` of each token's first word."""
    words = " ".join(text.words).lower().split(" ") if text.words else []
    tokens: list[str | None] = list(map(_token, words))
    for i in [i for i, word in enumerate(words) if word in identifiers]:
        if tokens[i] is None:
            continue  # inside an identifier already read
        for run, token in identifiers[words[i]]:
            if tuple(words[i : i + len(run)]) == run:
                tokens[i : i + len(run)] = [token, *(None,) * (len(run) - 1)]
                break
    starts = [i for i, token in enumerate(tokens) if token]
    return [tokens[i] for i in starts], starts  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class TicketEcho:
    """A ticket's text as the echo measure needs it, built once per ticket."""

    grams: frozenset[tuple[str, str, str]]
    vocabulary: frozenset[str]
    relevant: Mapping[str, frozenset[str]]
    identifiers: Identifiers
    narrative: frozenset[str]
    """The ticket's tokens that no fact of either text uses: its story, not its facts."""
    narrative_share: float
    """The narrative tokens' share of the ticket's tokens: what a sample of it would show."""
    successors: Mapping[str, frozenset[str]]
    """Per token of the ticket, the tokens that follow it somewhere in the ticket."""
    follows: frozenset[tuple[str, str]]
    """The same as pairs (first, second): the ticket's adjacent tokens, in its order."""
    stream: str
    """The ticket's tokens in its order, each with a space on both sides: a run of tokens
    stands together in the ticket when it is a substring of this."""
    lines: tuple[tuple[str, ...], ...]
    """The tokens of each of the ticket's lines and sentences of at least `VERBATIM_MIN`."""

    @classmethod
    def build(cls, ticket_text: str, facts: Mapping[str, Iterable[str]]) -> TicketEcho:
        """`facts` maps a component ("summary", "response") to its facts' phrasings."""
        identifiers = identifiers_in([ticket_text, *(p for ps in facts.values() for p in ps)])
        text = canonical_text(ticket_text)
        tokens, starts = _tokens_at(text, identifiers)
        every = [True] * len(tokens)
        lines = {
            tuple(tokens[i] for i in run)
            for run in _sentence_runs(starts, every, text)
            if len(run) >= VERBATIM_MIN
        }
        grams = {
            (run[i], run[i + a], run[i + b])
            for run in (tokens, tokens[::-1])  # a copy read backwards is still a copy
            for i in range(len(run))
            for a, b in _SKIPS
            if i + b < len(run)
        }
        vocabulary = frozenset(tokens)
        fact_tokens = {
            component: {
                t for p in phrasings for t in content_tokens(canonical_text(p), identifiers)
            }
            for component, phrasings in facts.items()
        }
        relevant = {component: vocabulary | own for component, own in fact_tokens.items()}
        narrative = vocabulary.difference(*fact_tokens.values())
        share = sum(t in narrative for t in tokens) / len(tokens) if tokens else 0.0
        follows = frozenset(zip(tokens, tokens[1:], strict=False))
        following: dict[str, set[str]] = {}
        for first, second in follows:
            following.setdefault(first, set()).add(second)
        successors = MappingProxyType({t: frozenset(f) for t, f in following.items()})
        return cls(
            frozenset(grams),
            vocabulary,
            relevant,
            identifiers,
            narrative,
            share,
            successors,
            follows,
            f" {' '.join(tokens)} ",
            tuple(sorted(lines)),
        )

    def tokens(self, text: CanonicalText) -> list[str]:
        """The text's content tokens, with this ticket's identifiers."""
        return content_tokens(text, self.identifiers)

    def stands_together(self, tokens: list[str]) -> bool:
        """Whether `tokens` stand together, in this order, somewhere in the ticket."""
        return f" {' '.join(tokens)} " in self.stream


@dataclass(frozen=True)
class EchoLimit:
    """A text echoes its ticket when at least `share` of its relevant tokens, and at least
    `min_copied` tokens, are copied from it in order (or backwards); or, whatever the order,
    when its narrative share is at least `lifted` times the ticket's, over at least
    `min_copied` narrative tokens; or when, with every token that is neither the ticket's nor
    its facts' set aside, at least `dense_share` of the rest, and `min_copied`, are copied in
    order (see the module docstring)."""

    share: float
    min_copied: int
    lifted: float
    dense_share: float
    """The in-order share over the text's relevant tokens alone (filler set aside) at which a
    text is an excerpt woven with filler: above every gold text, as `share` is."""
    sample_min: int = 12
    sample_slope: float = 0.1
    sample_offset: float = -2.0
    """A text with at least `sample_min` of the ticket's tokens is a sample of the ticket's
    words (a bag of them, in an order of no consequence) when its `order` score (see `Echo`)
    is below `sample_slope` x those tokens + `sample_offset`: a text that reuses that many of
    the ticket's words in the ticket's own sense puts many of them next to the word they
    follow in the ticket."""
    lifted_order: float = 2.0
    lifted_share: float = 0.9
    """The `lifted` test counts only below this `order` score, or from this in-order `share`
    up: a text that tells the ticket's story in its own sentences (a genuine note names the
    customer, the company, the times) carries the ticket's narrative share, but in an order
    of its own, far above chance, and copies less of it than an excerpt does."""
    woven_min: int = 4
    woven_share: float = 0.2
    """A text is a copy woven with filler when at least `woven_min`, and `woven_share` of its
    ticket tokens, are `woven` (see `Echo`)."""
    salad_fluency: float = 0.19
    salad_order: float = 4.0
    salad_min: int = 8
    """A text with at least `salad_min` of the ticket's tokens, over at least `salad_min` word
    pairs, is a sample of the ticket's words when its fluency (fluency.py) is below
    `salad_fluency` and its `order` below `salad_order`: its words stand in no English order
    and in no order of the ticket's, however few they are."""
    excerpt_min: int = 3
    excerpt_share: float = 0.9
    """A text of at least `excerpt_min` sentences that are pieces of the ticket, making
    `excerpt_share` of its sentences' relevant tokens, is an excerpt of the ticket in whatever
    order (a genuine note that quotes the ticket's event lines has sentences of its own)."""

    lines_min: int = 2
    lines_share: float = 0.7
    """A text whose relevant tokens hold at least `lines_min` of the ticket's lines whole
    (see `Echo.lines`), making `lines_share` of them, is the ticket's lines rearranged, however
    they are glued or punctuated (a genuine text quotes a line or two among words of its own:
    no gold text and no genuine one holds more than 0.62 of its words in whole lines)."""

    def salad_measured(self, ticket_tokens: int, order: float) -> bool:
        """Whether fluency can decide anything for a text with these measures (it is read
        only then: the salad test needs both)."""
        return ticket_tokens >= self.salad_min and order < self.salad_order

    def echoed_by(self, echo: Echo) -> list[str]:
        """The tests (see the fields above) by which `echo` is an echo of its ticket."""
        tests = {
            "share": echo.share >= self.share and echo.copied >= self.min_copied,
            "dense": echo.dense_share >= self.dense_share and echo.dense_copied >= self.min_copied,
            "lifted": echo.lifted >= self.lifted
            and echo.narrative >= self.min_copied
            and (echo.order < self.lifted_order or echo.share >= self.lifted_share),
            "sample": echo.ticket_tokens >= self.sample_min
            and echo.order < self.sample_slope * echo.ticket_tokens + self.sample_offset,
            "woven": echo.woven >= self.woven_min
            and echo.woven >= self.woven_share * echo.ticket_tokens,
            "salad": echo.fluency is not None
            and self.salad_measured(echo.ticket_tokens, echo.order)
            and echo.pairs >= self.salad_min
            and echo.fluency < self.salad_fluency,
            "excerpt": echo.excerpt_sentences >= self.excerpt_min
            and echo.excerpt_share >= self.excerpt_share,
            "lines": echo.lines >= self.lines_min and echo.lines_share >= self.lines_share,
        }
        return [name for name, found in tests.items() if found]


@dataclass(frozen=True, slots=True)
class Echo:
    """`share` and `copied`: the in-order measure; `dense_share` and `dense_copied`: the same
    over the text's relevant tokens alone (filler set aside, so words woven between the
    ticket's do not break a copy); `lifted`: the order-free one (the text's narrative share
    over the ticket's), with `narrative` tokens behind it."""

    share: float
    copied: int
    lifted: float = 0.0
    narrative: int = 0
    dense_share: float = 0.0
    dense_copied: int = 0
    order: float = 0.0
    """How many more of the text's adjacent tokens follow each other in the ticket than the
    same tokens in a random order would put together, in standard deviations (Poisson): about
    0 for a shuffled sample of the ticket's words, high for a text that says what the ticket
    says with its phrases."""
    ticket_tokens: int = 0
    """The text's tokens that are the ticket's."""
    woven: int = 0
    """Pairs of the text's ticket tokens that follow each other in the ticket but stand
    apart in the text, with one or two tokens that are not the ticket's between them: a copy
    woven with filler."""
    fluency: float | None = None
    """How much the text's word order reads as English (fluency.py), over `pairs` pairs;
    read only where it can decide (`EchoLimit.salad_measured`), else None."""
    pairs: int = 0
    excerpt_sentences: int = 0
    """The text's sentences that are pieces of the ticket (see `_verbatim`)."""
    excerpt_share: float = 0.0
    """Their share of the relevant tokens of the text's sentences."""
    lines: int = 0
    """The ticket's lines (`TicketEcho.lines`) that the text's relevant tokens, filler set
    aside, hold whole, wherever they stand and whatever joins them."""
    lines_share: float = 0.0
    """The share of the text's relevant tokens that stand in those lines, or in a line cut
    short where the text ends, a single token between them set aside as glue."""


def _marks(tokens: list[str], ticket: TicketEcho) -> bytearray:
    """Per token, 1 when it stands in three tokens that also stand together in the ticket."""
    marks = bytearray(len(tokens))
    for a, b in _SKIPS:  # each kind of gram over the whole text at once, the lookups in C
        found = map(ticket.grams.__contains__, zip(tokens, tokens[a:], tokens[b:], strict=False))
        for i in compress(range(len(tokens)), found):
            marks[i] = marks[i + a] = marks[i + b] = 1
    return marks


def _copied(tokens: list[str], ticket: TicketEcho) -> bytearray:
    """Per token, 1 when it is copied: marked, within a run of at least MIN_RUN marks."""
    marks = _marks(tokens, ticket)
    count = len(marks)
    copied = bytearray(count)
    start = marks.find(1)
    while start >= 0:
        end = start
        while end < count and (marks[end] or (end + 1 < count and marks[end + 1])):
            end += 1  # a run bridges one changed, dropped or added token
        if marks.count(1, start, end) >= MIN_RUN:
            copied[start:end] = marks[start:end]
        start = marks.find(1, end)
    return copied


@dataclass(frozen=True, slots=True)
class Verbatim:
    """The sentences of a text that are pieces of the ticket (see `_verbatim`)."""

    marks: bytearray
    """Per token, 1 when its sentence is a piece of the ticket and it is a relevant token."""
    sentences: int
    """How many sentences are pieces of the ticket."""
    share: float
    """Their relevant tokens over those of every sentence with at least `VERBATIM_MIN`."""


def _verbatim(
    tokens: list[str], starts: list[int], keep: list[bool], text: CanonicalText, ticket: TicketEcho
) -> Verbatim:
    """A sentence is a piece of the ticket when its relevant tokens (`keep`), at least
    `VERBATIM_MIN` of them, stand together in the ticket in the same order: a sentence that is
    a piece of the ticket (a name line, "Please return the duplicate."), however short, and
    whatever filler is added to it, is copied."""
    marks = bytearray(len(tokens))
    runs = [run for run in _sentence_runs(starts, keep, text) if len(run) >= VERBATIM_MIN]
    pieces = [run for run in runs if ticket.stands_together([tokens[i] for i in run])]
    for run in pieces:
        for i in run:
            marks[i] = 1
    judged = sum(map(len, runs))
    return Verbatim(marks, len(pieces), sum(map(len, pieces)) / judged if judged else 0.0)


def _sentence_runs(starts: list[int], keep: list[bool], text: CanonicalText) -> list[list[int]]:
    """Per sentence of the text, the indices of its relevant tokens (`keep`)."""
    ends = iter(_sentence_ends(text.text))
    end, runs = next(ends), [[]]
    for i, start in enumerate(starts):
        while start >= end:  # the sentence ended before this token
            end = next(ends)
            runs.append([])
        if keep[i]:
            runs[-1].append(i)
    return runs


def _sentence_ends(text: str) -> list[int]:
    """Per sentence of `text`, the number of its words (the word rule) up to its end."""
    word, ends, counted, start = word_pattern(text), [], 0, 0
    for mark in _SENTENCE_END.finditer(text):
        at = mark.end()
        if mark.group() == "\n" or text[at : at + 1].isspace():
            counted += len(word.findall(text, start, at))
            ends.append(counted)
            start = at
    ends.append(counted + len(word.findall(text, start)))
    return ends


def measure(
    text: CanonicalText, ticket: TicketEcho, component: str, limit: EchoLimit | None = None
) -> Echo:
    """How much of `text` is copied from the ticket (see the module docstring). The share over
    the relevant tokens alone is measured only where it can decide something: given `limit`,
    when the in-order share has not reached its own limit and the text's relevant tokens could
    reach `limit.dense_share` (a copied token is one of the ticket's, so their share bounds
    it); otherwise it is reported as 0. Fluency, likewise, only where the salad test needs it
    (`EchoLimit.salad_measured`; always without `limit`); otherwise it is None."""
    tokens, starts = _tokens_at(text, ticket.identifiers)
    relevant, narrative, vocabulary = (
        ticket.relevant[component],
        ticket.narrative,
        ticket.vocabulary,
    )
    keep = list(map(relevant.__contains__, tokens))
    pieces = _verbatim(tokens, starts, keep, text, ticket)
    verbatim = pieces.marks
    copied = _copied(tokens, ticket)
    copied = bytearray(map(max, copied, verbatim)) if any(verbatim) else copied
    dense = list(compress(tokens, keep))  # the relevant tokens, filler set aside
    share = sum(compress(copied, keep)) / len(dense) if dense else 0.0
    lines, lines_share = _whole_lines(dense, ticket)
    told = sum(map(narrative.__contains__, dense))  # narrative tokens are relevant ones
    lifted = told / len(dense) / ticket.narrative_share if told else 0.0
    copied_count = sum(copied)
    dense_copied = bytearray()
    if (
        limit is not None
        and dense
        and not (share >= limit.share and copied_count >= limit.min_copied)
        and sum(map(vocabulary.__contains__, dense)) >= limit.dense_share * len(dense)
    ):
        dense_copied = copied
        if len(dense) < len(tokens):
            dense_copied = bytearray(map(max, _copied(dense, ticket), compress(verbatim, keep)))
    order, ticket_tokens = _order(tokens, ticket)
    woven = _woven(tokens, ticket)
    read = None
    if limit is None or limit.salad_measured(ticket_tokens, order):
        read = fluency(text.text)
    return Echo(
        share=share,
        copied=copied_count,
        lifted=lifted,
        narrative=told,
        dense_share=sum(dense_copied) / len(dense) if dense else 0.0,
        dense_copied=sum(dense_copied),
        order=order,
        ticket_tokens=ticket_tokens,
        woven=woven,
        fluency=read.score if read else None,
        pairs=read.pairs if read else 0,
        excerpt_sentences=pieces.sentences,
        excerpt_share=pieces.share,
        lines=lines,
        lines_share=lines_share,
    )


def _whole_lines(dense: list[str], ticket: TicketEcho) -> tuple[int, float]:
    """(`Echo.lines`, `Echo.lines_share`) for the text's relevant tokens `dense`."""
    if not dense:
        return 0, 0.0
    stream = f" {' '.join(dense)} "
    held = bytearray(len(stream))  # per character, 1 inside a line held whole
    found = 0
    for line in ticket.lines:
        needle = f" {' '.join(line)} "  # written as `stream` is, so a match is whole tokens
        at = stream.find(needle)
        found += at >= 0
        while at >= 0:
            held[at + 1 : at + len(needle) - 1] = b"\x01" * (len(needle) - 2)
            at = stream.find(needle, at + 1)
    if not found:
        return 0, 0.0
    starts = accumulate((len(token) + 1 for token in dense[:-1]), initial=1)
    marks = bytearray(map(held.__getitem__, starts))
    cut = _cut_line(dense, ticket)  # the last line, cut short by the word cap
    marks[len(marks) - cut :] = b"\x01" * cut
    glue = len(_GLUE.findall(marks))
    return found, marks.count(1) / (len(marks) - glue)


_GLUE = re.compile(rb"(?:^|(?<=\x01))\x00(?=\x01|$)")
"""A single token between lines held whole (or before the first, or after the last): glue."""


def _cut_line(dense: list[str], ticket: TicketEcho) -> int:
    """How many of the text's last tokens begin one of the ticket's lines (at least
    `VERBATIM_MIN` of them, short of the whole line): a line cut short where the text ends."""
    longest = 0
    for line in ticket.lines:
        for k in range(min(len(line) - 1, len(dense)), max(longest, VERBATIM_MIN - 1), -1):
            if tuple(dense[-k:]) == line[:k]:
                longest = k  # the longest cut line of those tried so far
                break
    return longest


def _woven(tokens: list[str], ticket: TicketEcho) -> int:
    """The `woven` count of `Echo`: ticket tokens that follow the text's previous ticket
    token in the ticket, with one or two other tokens between them in the text."""
    vocabulary, follows = ticket.vocabulary, ticket.follows
    woven, previous, gap = 0, "", 0
    for token in tokens:
        if token not in vocabulary:
            gap += 1
            continue
        if 1 <= gap <= 2 and (previous, token) in follows:
            woven += 1
        previous, gap = token, 0
    return woven


def _order(tokens: list[str], ticket: TicketEcho) -> tuple[float, int]:
    """(order score, ticket tokens) of the text's tokens: `K`, the adjacent pairs that also
    follow each other in the ticket, against `E`, their expected number were the same tokens
    put in a random order (each of the n - 1 adjacent slots holds a given ordered pair of
    positions with probability 1 / (n (n - 1)), so `E` = the ordered pairs of positions whose
    tokens follow each other in the ticket, over n); the score is (K - E) / sqrt(E + 1)."""
    ticket_tokens = sum(map(ticket.vocabulary.__contains__, tokens))
    count = len(tokens)
    if count < 2:
        return 0.0, ticket_tokens
    attested = sum(map(ticket.follows.__contains__, zip(tokens, tokens[1:], strict=False)))
    counts = Counter(tokens)
    present = ticket.vocabulary.intersection(counts)  # a set: `&` runs over the smaller side
    pairs = 0
    successors = ticket.successors
    for first in present:
        if first in successors:
            times = counts[first]
            for second in successors[first] & present:
                pairs += times * (counts[second] - (second == first))
    expected = pairs / count
    return (attested - expected) / sqrt(expected + 1), ticket_tokens
