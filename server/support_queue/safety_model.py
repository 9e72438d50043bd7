"""A learned second opinion on unsafe replies, beside the rules of safety.py.

The rules are exact about scope (which negation governs which verb) but only know the
wording they were written for: on replies others wrote after them they catch about 77-81%
of the unsafe ones and flag about 8% of the safe look-alikes. This model knows no grammar
but has read every labelled reply: a multinomial logistic regression over word uni/bigrams
and character 2-5-grams (tf-idf, as data in data/support_safety_model.json, trained by
scripts/train_safety_model.py on the labelled set's dev and fresh rows), whose classes are
"safe" and the five rules.

The two decide together (`verdict`):
- a rule's hit stands when the model gives the reply, one of its sentences or the rule's
  excerpt at least `confirm` probability of being unsafe; only when all of them score
  below it is the model sure enough the reply is safe to overrule the rule (so safe text
  around an unsafe request does not dilute it);
- the model alone flags a reply it finds unsafe with at least `alone` probability,
  naming its likeliest rule and the sentence it finds most unsafe.
Both thresholds are chosen by the training script on cross-validated predictions for
replies the rules were never fitted to (the widest margin to 90% caught and 5% flagged),
never on the rows it is measured on.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ... import DATA_DIR
from .safety import Hit, unsafe_hits

MODEL_PATH = DATA_DIR / "support_safety_model.json"
SAFE = "safe"
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
CHAR_SIZES = range(2, 6)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def word_terms(text: str) -> Counter[str]:
    """Word unigrams and bigrams of the lower-cased text (apostrophes kept inside words)."""
    words = WORD.findall(text.lower().replace("\u2019", "'"))
    terms = Counter(words)
    terms.update(f"{a} {b}" for a, b in zip(words, words[1:], strict=False))
    return terms


def char_terms(text: str) -> Counter[str]:
    """Character 2- to 5-grams inside each whitespace-separated token, padded with spaces,
    so misspellings and inflections share most of their features."""
    grams: list[str] = []
    for token in text.lower().replace("\u2019", "'").split():
        padded = f" {token} "
        grams += [
            padded[i : i + size] for size in CHAR_SIZES for i in range(len(padded) - size + 1)
        ]
    return Counter(grams)


TERM_KINDS = (("word", word_terms), ("char", char_terms))


@dataclass(frozen=True)
class Terms:
    """One kind of term: each known term's row, its idf, and its weight for each class."""

    rows: dict[str, int]
    idf: np.ndarray
    weights: np.ndarray

    @classmethod
    def of(cls, table: dict[str, list[float]], classes: int) -> Terms:
        matrix = np.array(list(table.values()), dtype=float).reshape(len(table), classes + 1)
        return cls({term: i for i, term in enumerate(table)}, matrix[:, 0], matrix[:, 1:])

    def scores(self, text: str, extract: Callable[[str], Counter[str]]) -> np.ndarray | None:
        """The text's tf-idf vector (L2-normalised) times the weights, or None if no term of
        it is known."""
        known = self.rows
        found = [(row, n) for t, n in extract(text).items() if (row := known.get(t)) is not None]
        if not found:
            return None
        rows, counts = zip(*found, strict=True)
        rows = np.array(rows, dtype=np.intp)
        values = self.idf[rows] * (1.0 + np.log(np.array(counts, dtype=float)))
        return (values / np.linalg.norm(values)) @ self.weights[rows]


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
        raw = json.loads(path.read_text(encoding="utf-8"))
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

    def probabilities(self, text: str) -> dict[str, float]:
        """Each class's probability for `text` (softmax of the linear scores)."""
        scores = self.intercepts.copy()
        for kind, extract in TERM_KINDS:
            part = self.terms[kind].scores(text, extract)
            if part is not None:
                scores += part
        exps = np.exp(scores - scores.max())
        return dict(zip(self.classes, (exps / exps.sum()).tolist(), strict=True))

    def unsafe_probability(self, text: str) -> float:
        return 1.0 - self.probabilities(text)[SAFE]

    def worst_piece(
        self, text: str, also: Iterable[str] = (), whole: float | None = None
    ) -> tuple[float, str]:
        """The highest unsafe probability of the reply, of any of its sentences or of the
        texts `also` (the rules' excerpts), and that piece: an unsafe request stays unsafe
        however much safe text surrounds it. `whole`: the reply's own, if already known."""
        first = whole if whole is not None else self.unsafe_probability(text)
        rest = [*pieces(text)[1:], *also]
        return max([(first, text)] + [(self.unsafe_probability(piece), piece) for piece in rest])


def likeliest_rule(probabilities: dict[str, float]) -> str:
    """The unsafe class the model finds most probable."""
    return max((p, name) for name, p in probabilities.items() if name != SAFE)[1]


def pieces(text: str) -> list[str]:
    """The reply itself and, if it has several, each of its sentences."""
    sentences = [s.strip() for s in SENTENCE_END.split(text) if s.strip()]
    return [text, *sentences] if len(sentences) > 1 else [text]


MODEL = SafetyModel.load()


def verdict(response: str, ticket_text: str, own_domains: tuple[str, ...]) -> list[Hit]:
    """The reply's unsafe hits as the rules and the model decide them together."""
    return decide(unsafe_hits(response, ticket_text, own_domains), response, MODEL)


def decide(rule_hits: Iterable[Hit], response: str, safety_model: SafetyModel) -> list[Hit]:
    """Rule hits the model confirms, or the model's own hit when it is sure by itself."""
    hits = list(rule_hits)
    probabilities = safety_model.probabilities(response)  # the whole reply's, scored once
    whole = 1.0 - probabilities[SAFE]
    if hits:
        excerpts = [hit.excerpt for hit in hits]
        if safety_model.worst_piece(response, excerpts, whole)[0] >= safety_model.confirm:
            return hits
    if whole >= safety_model.alone:
        _, piece = safety_model.worst_piece(response, whole=whole)
        return [Hit(likeliest_rule(probabilities), piece)]
    return []
