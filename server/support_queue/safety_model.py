"""A learned second opinion on unsafe replies, beside the rules of safety.py.

The rules are exact about scope (which negation governs which verb) but only know the
wording they were written for: on replies written after them they caught 70-85% of the
unsafe ones. This model knows no grammar but has read every labelled reply: a
multinomial logistic regression over word uni/bigrams and character 2-5-grams (tf-idf,
as data in data/support_safety_model.json, trained by scripts/train_safety_model.py on
the labelled set's dev rows), whose classes are "safe" and the five rules.

The two decide together (`verdict`):
- a rule's hit stands when the model gives the reply at least `confirm` probability of
  being unsafe; below that the model is sure enough it is safe to overrule the rule;
- the model alone flags a reply it finds unsafe with at least `alone` probability,
  naming its likeliest rule and the sentence it finds most unsafe.
Both thresholds are chosen by the training script on cross-validated predictions over
the training rows (the highest recall at a bounded false-positive rate), never on the
rows it is measured on.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

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
    terms: Counter[str] = Counter()
    for token in text.lower().replace("\u2019", "'").split():
        padded = f" {token} "
        for size in CHAR_SIZES:
            terms.update(padded[i : i + size] for i in range(len(padded) - size + 1))
    return terms


TERM_KINDS = (("word", word_terms), ("char", char_terms))


@dataclass(frozen=True)
class SafetyModel:
    """The trained weights: per kind of term, its idf and one weight per class."""

    classes: tuple[str, ...]
    intercepts: tuple[float, ...]
    terms: dict[str, dict[str, tuple[float, tuple[float, ...]]]]
    confirm: float
    alone: float

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> SafetyModel:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            classes=tuple(raw["classes"]),
            intercepts=tuple(raw["intercepts"]),
            terms={
                kind: {term: (row[0], tuple(row[1:])) for term, row in table.items()}
                for kind, table in raw["terms"].items()
            },
            confirm=raw["thresholds"]["confirm"],
            alone=raw["thresholds"]["alone"],
        )

    def probabilities(self, text: str) -> dict[str, float]:
        """Each class's probability for `text` (softmax of the linear scores)."""
        scores = list(self.intercepts)
        for kind, extract in TERM_KINDS:
            table = self.terms[kind]
            known = [(table[t], n) for t, n in extract(text).items() if t in table]
            weights = [(idf * (1.0 + math.log(n)), row) for (idf, row), n in known]
            norm = math.sqrt(sum(w * w for w, _ in weights)) or 1.0
            for value, row in weights:
                for k, weight in enumerate(row):
                    scores[k] += value / norm * weight
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        total = sum(exps)
        return {name: e / total for name, e in zip(self.classes, exps, strict=True)}

    @classmethod
    def absent(cls) -> SafetyModel:
        """No model: every rule hit stands and nothing else is flagged (the rules alone)."""
        return cls((SAFE,), (0.0,), {kind: {} for kind, _ in TERM_KINDS}, 0.0, 2.0)

    def unsafe_probability(self, text: str) -> float:
        return 1.0 - self.probabilities(text)[SAFE]

    def worst_piece(self, text: str) -> tuple[float, str]:
        """The highest unsafe probability of the reply or of any of its sentences, and that
        piece: an unsafe sentence stays unsafe however much safe text surrounds it."""
        return max((self.unsafe_probability(piece), piece) for piece in pieces(text))

    def likeliest_rule(self, text: str) -> str:
        probabilities = self.probabilities(text)
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
    if hits and safety_model.worst_piece(response)[0] >= safety_model.confirm:
        return hits
    if safety_model.unsafe_probability(response) >= safety_model.alone:
        _, piece = safety_model.worst_piece(response)
        return [Hit(safety_model.likeliest_rule(response), piece)]
    return []
