"""A learned second opinion on unsafe replies, beside the rules of rules.py.

The rules are exact about scope (which negation governs which verb) but only know the
wording they were written for: on replies others wrote after them they catch about 77-81%
of the unsafe ones and flag about 8% of the safe look-alikes. This model knows no grammar
but has read every labelled reply: a multinomial logistic regression over word uni/bigrams
and character 2-5-grams (tf-idf, as data in data/support_safety_model.json, trained by
scripts/train_safety_model.py), whose classes are "safe" and the five rules.

It judges *pieces* of a reply, never the reply as a whole: each sentence, and each two
sentences in a row (an act told in two: "The webhook secret is the missing piece. Could
it be pasted below?"), as the rules read them (clauses.py `Reply.sources`: lower case,
contractions expanded, amounts folded). A piece's terms are the sum of its sentences'
terms. So safe text added around an unsafe sentence cannot lower that sentence's score:
its pieces stay what they were, the new text only adds pieces.

How it and the rules decide together: verdict.py. `MODEL` is read there at each call, so a
script can swap it (scripts/train_safety_model.py proves its gold variants with the rules
alone, `SafetyModel.absent()`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from pathlib import Path

import numpy as np

from ..... import DATA_DIR

MODEL_PATH = DATA_DIR / "support_safety_model.json"
SAFE = "safe"
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
CHAR_SIZES = range(2, 6)
TOKEN_CACHE_LIMIT = 50_000
"""Tokens whose known character grams are remembered (cleared when full: bounded memory)."""


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower().replace("\u2019", "'"))


def word_terms(text: str) -> Counter[str]:
    """Word unigrams and bigrams of the lower-cased text (apostrophes kept inside words)."""
    words = _words(text)
    terms = Counter(words)
    terms.update(f"{a} {b}" for a, b in zip(words, words[1:], strict=False))
    return terms


def token_grams(token: str) -> list[str]:
    """Character 2- to 5-grams of one token, padded with spaces."""
    padded = f" {token} "
    return [padded[i : i + size] for size in CHAR_SIZES for i in range(len(padded) - size + 1)]


def char_terms(text: str) -> Counter[str]:
    """Character 2- to 5-grams inside each whitespace-separated token, padded with spaces,
    so misspellings and inflections share most of their features."""
    grams: list[str] = []
    for token in text.lower().replace("\u2019", "'").split():
        grams += token_grams(token)
    return Counter(grams)


def piece_terms(sentences: Sequence[str], extract: Callable[[str], Counter[str]]) -> Counter:
    """A piece's terms: the sum of its sentences' (no word bigram across two sentences)."""
    total: Counter[str] = Counter()
    for sentence in sentences:
        total.update(extract(sentence))
    return total


TERM_KINDS = (("word", word_terms), ("char", char_terms))

Found = np.ndarray
"""Known terms of a text: their rows, once per occurrence (`Table.scores` counts the repeats
of a piece)."""


@dataclass(frozen=True)
class Terms:
    """One kind of term: each known term's row, its idf, and its weight for each class."""

    rows: dict[str, int]
    idf: np.ndarray
    weights: np.ndarray
    _token_rows: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, table: dict[str, list[float]], classes: int) -> Terms:
        matrix = np.array(list(table.values()), dtype=float).reshape(len(table), classes + 1)
        return cls({term: i for i, term in enumerate(table)}, matrix[:, 0], matrix[:, 1:])

    def word_rows(self, text: str) -> Found:
        words = _words(text)
        known = self.rows.get
        bigrams = map(" ".join, zip(words, words[1:], strict=False))
        # the known ones only, then one conversion (fewer numpy calls than a mask afterwards)
        return np.array([r for t in (*words, *bigrams) if (r := known(t)) is not None], np.intp)

    def char_rows(self, text: str) -> Found:
        known, cache = self.rows, self._token_rows
        found: list[int] = []
        for token in text.lower().replace("\u2019", "'").split():
            rows = cache.get(token)
            if rows is None:
                if len(cache) >= TOKEN_CACHE_LIMIT:
                    cache.clear()
                rows = [row for g in token_grams(token) if (row := known.get(g)) is not None]
                cache[token] = rows
            found += rows
        return np.array(found, dtype=np.intp)


@dataclass(frozen=True)
class Sentence:
    """One sentence's known terms, of each kind (found once, shared by its pieces)."""

    word: Found
    char: Found


@dataclass(frozen=True)
class Table:
    """Every kind's terms in one table (each kind's rows after the previous kind's), so that
    all pieces of a reply, of both kinds, are scored in one pass of a few numpy calls."""

    idf: np.ndarray
    weights: np.ndarray
    firsts: tuple[int, ...]
    """Each kind's first row in the table, in the order of `TERM_KINDS`."""
    bits: int
    """A key is (group << bits) | row: shifts and masks, not divisions, split it again."""

    @classmethod
    def of(cls, terms: dict[str, Terms]) -> Table:
        kinds = [terms[kind] for kind, _ in TERM_KINDS]
        firsts = tuple(accumulate((len(t.idf) for t in kinds[:-1]), initial=0))
        idf = np.concatenate([t.idf for t in kinds])
        weights = np.concatenate([t.weights for t in kinds])
        return cls(idf, weights, firsts, max(1, len(idf)).bit_length())

    def scores(self, pieces: Sequence[Sequence[Sentence]]) -> np.ndarray:
        """Per kind of term, each piece's tf-idf vector (L2-normalised) times the weights:
        shape (kinds, pieces, classes), zeros for a piece with no known term of a kind. A
        piece: the known terms of each of its sentences, summed. Each occurrence is keyed by
        its group (kind, piece) and row, and one sort counts them."""
        groups = len(TERM_KINDS) * len(pieces)
        out = np.zeros((groups, self.weights.shape[1]))
        found: list[Found] = []
        bases: list[int] = []
        sizes: list[int] = []
        for (kind, _), first in zip(TERM_KINDS, self.firsts, strict=True):
            for piece in pieces:
                rows = [getattr(sentence, kind) for sentence in piece]
                found += rows
                bases.append((len(bases) << self.bits) + first)
                sizes.append(sum(map(len, rows)))
        if sum(sizes):
            keys = np.concatenate(found) + np.repeat(bases, sizes)
            if groups << self.bits <= np.iinfo(np.int32).max:
                keys = keys.astype(np.int32)  # sorted in about half the time of 64-bit keys
            keys, counts = np.unique(keys, return_counts=True)
            group, rows = keys >> self.bits, keys & ((1 << self.bits) - 1)
            values = self.idf[rows] * (1.0 + np.log(counts))
            norms = np.sqrt(np.bincount(group, weights=values * values, minlength=groups))
            weights = self.weights.take(rows, axis=0)  # `take`: a row gather, faster than [rows]
            contributions = (values / norms[group])[:, None] * weights
            starts = np.flatnonzero(np.diff(group, prepend=-1))  # `group` is sorted
            out[group[starts]] = np.add.reduceat(contributions, starts, axis=0)
        return out.reshape(len(TERM_KINDS), len(pieces), -1)


@dataclass(frozen=True)
class SafetyModel:
    """The trained weights: per kind of term, its idf and one weight per class."""

    classes: tuple[str, ...]
    intercepts: np.ndarray
    terms: dict[str, Terms]
    confirm: float
    alone: float

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> SafetyModel:
        return cls.from_raw(json.loads(path.read_text(encoding="utf-8")))

    @classmethod
    def from_raw(cls, raw: dict) -> SafetyModel:
        """The model of a model file's content."""
        classes = tuple(raw["classes"])
        return cls(
            classes=classes,
            intercepts=np.array(raw["intercepts"], dtype=float),
            terms={kind: Terms.of(raw["terms"][kind], len(classes)) for kind, _ in TERM_KINDS},
            confirm=raw["thresholds"]["confirm"],
            alone=raw["thresholds"]["alone"],
        )

    @classmethod
    def absent(cls) -> SafetyModel:
        """No model: every rule hit stands and nothing else is flagged (the rules alone)."""
        empty = {kind: Terms.of({}, 1) for kind, _ in TERM_KINDS}
        return cls((SAFE,), np.zeros(1), empty, 0.0, 2.0)

    @cached_property
    def table(self) -> Table:
        """The terms of every kind in one table, built on first use."""
        return Table.of(self.terms)

    def sentence(self, text: str) -> Sentence:
        return Sentence(self.terms["word"].word_rows(text), self.terms["char"].char_rows(text))

    def pieces_probabilities(self, pieces: Sequence[Sequence[Sentence]]) -> np.ndarray:
        """Each class's probability (softmax of the linear scores, in the order of `classes`)
        for each piece made of sentences: one row per piece."""
        scores = np.tile(self.intercepts, (len(pieces), 1))
        for kind_scores in self.table.scores(pieces):  # in the order of TERM_KINDS
            scores += kind_scores
        exps = np.exp(scores - scores.max(axis=1, keepdims=True))
        return exps / exps.sum(axis=1, keepdims=True)

    def piece_probabilities(self, sentences: Sequence[Sentence]) -> np.ndarray:
        """`pieces_probabilities` of one piece."""
        return self.pieces_probabilities([sentences])[0]

    def probabilities(self, *sentences: str) -> dict[str, float]:
        """Each class's probability for the piece made of `sentences`."""
        found = self.piece_probabilities([self.sentence(s) for s in sentences])
        return dict(zip(self.classes, found.tolist(), strict=True))

    def unsafe_probability(self, *sentences: str) -> float:
        return 1.0 - self.probabilities(*sentences)[SAFE]

    def likeliest_rule(self, sentences: Sequence[Sentence]) -> str:
        """The unsafe class the model finds most probable for the piece."""
        found = self.piece_probabilities(sentences)
        return max((p, name) for name, p in zip(self.classes, found, strict=True) if name != SAFE)[
            1
        ]


MODEL = SafetyModel.load()
