"""The features and fitting of scripts/train_safety_model.py (see its docstring); the rows it
fits on are scripts/safety_rows.py's."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator

import numpy as np
from safety_rows import CHECKS, CLASSES, DIGITS, MIN_DF, Example, Row
from scipy.sparse import csr_matrix, hstack
from sklearn.linear_model import LogisticRegression

from servicebench_support_queue.server.support_queue.tasks import PRODUCT_DOMAINS
from servicebench_support_queue.server.support_queue.text.safety.model import (
    SAFE,
    TERM_KINDS,
    SafetyModel,
)
from servicebench_support_queue.server.support_queue.text.safety.verdict import judge

_TERMS: dict[tuple[str, str], Counter[str]] = {}


def sentence_terms(kind: str, sentence: str) -> Counter[str]:
    key = (kind, sentence)
    if key not in _TERMS:
        _TERMS[key] = dict(TERM_KINDS)[kind](sentence)
    return _TERMS[key]


def piece_terms(kind: str, sentences: list[str]) -> Counter[str]:
    total: Counter[str] = Counter()
    for sentence in sentences:
        total.update(sentence_terms(kind, sentence))
    return total


def vocabulary(pieces: list[list[str]]) -> dict[str, dict[str, float]]:
    """Per kind of term, every term in at least MIN_DF pieces with its smoothed idf."""
    vocab = {}
    for kind, _ in TERM_KINDS:
        df = Counter(term for piece in pieces for term in piece_terms(kind, piece))
        n = len(pieces)
        vocab[kind] = {
            t: math.log((1 + n) / (1 + d)) + 1 for t, d in sorted(df.items()) if d >= MIN_DF
        }
    return vocab


def matrix(pieces: list[list[str]], vocab: dict[str, dict[str, float]]) -> csr_matrix:
    """The tf-idf rows as SafetyModel.piece_probabilities computes them."""
    blocks = []
    for kind, _ in TERM_KINDS:
        index = {term: i for i, term in enumerate(vocab[kind])}
        data, cols, indptr = [], [], [0]
        for piece in pieces:
            row = [
                (index[t], vocab[kind][t] * (1.0 + math.log(n)))
                for t, n in piece_terms(kind, piece).items()
                if t in index
            ]
            norm = math.sqrt(sum(v * v for _, v in row)) or 1.0
            cols += [c for c, _ in row]
            data += [v / norm for _, v in row]
            indptr.append(len(cols))
        blocks.append(csr_matrix((data, cols, indptr), shape=(len(pieces), len(index))))
    return hstack(blocks).tocsr()


def fitted(examples: list[Example], c: float) -> tuple[LogisticRegression, dict]:
    """The classifier and its vocabulary, fitted on the examples."""
    pieces = [list(e.sentences) for e in examples]
    vocab = vocabulary(pieces)
    classifier = LogisticRegression(C=c, max_iter=5000, class_weight="balanced")
    classifier.fit(
        matrix(pieces, vocab),
        np.array([e.label for e in examples]),
        sample_weight=np.array([e.weight for e in examples]),
    )
    return classifier, vocab


def export(
    classifier: LogisticRegression,
    vocab: dict,
    confirm: float,
    alone: float,
    checks: list[Example] = (),
) -> dict:
    """The model file's content (with `checks`, up to CHECKS of them, and their probabilities)."""
    order = [list(classifier.classes_).index(name) for name in CLASSES]
    weights = classifier.coef_[order]
    terms, column = {}, 0
    for kind, _ in TERM_KINDS:
        table = {}
        for term, idf in vocab[kind].items():
            row = weights[:, column]
            column += 1
            if np.abs(row).max() >= 10**-DIGITS:
                table[term] = [round(idf, DIGITS), *(round(float(w), DIGITS) for w in row)]
        terms[kind] = table
    sample = list(checks)[:: max(1, len(checks) // CHECKS)][:CHECKS]
    pieces = [list(e.sentences) for e in sample]
    probabilities = classifier.predict_proba(matrix(pieces, vocab)) if pieces else []
    return {
        "classes": list(CLASSES),
        "intercepts": [round(float(b), DIGITS) for b in classifier.intercept_[order]],
        "thresholds": {"confirm": confirm, "alone": alone},
        "terms": terms,
        "checks": [
            [piece, [round(float(p), DIGITS) for p in row[order]]]
            for piece, row in zip(pieces, probabilities, strict=True)
        ],
    }


def model_of(classifier: LogisticRegression, vocab: dict, confirm: float, alone: float):
    """The fitted classifier as the grader reads it (SafetyModel)."""
    return SafetyModel.from_raw(export(classifier, vocab, confirm, alone))


def measure(model: SafetyModel, rows: list[Row]) -> Iterator[str]:
    """For each row, what the verdict with `model` does with it: "caught", "missed",
    "flagged" or "passed", after the row's kind ("unsafe", "safe")."""
    for row in rows:
        hits = judge(row.reply, row.ticket, PRODUCT_DOMAINS, model)
        if row.label == SAFE:
            yield "safe"
            if hits:
                yield "flagged"
        else:
            yield "unsafe"
            if hits:
                yield "caught"
