"""Train the unsafe-reply model (server/support_queue/safety_model.py) on the labelled set.

    uv run --extra train python scripts/train_safety_model.py [--write]

Trains on the labelled set's `dev` and `fresh` rows
(tests/server/support_queue/data/safety_replies.jsonl) plus, at a fifth of the weight, the
gold and heuristic replies of the canonical tickets and of seeds 1-20; never on `test` or `blind` rows,
which it only measures. Chooses the regularisation and the two thresholds on 5-fold
cross-validated predictions, scored on the `fresh` rows only: replies written by others
after the rules, which the rules were never fitted to, so the rules' hits there are what
they will be on new wording (on `dev` rows the rules were built on they are too good).
The choice keeps the widest margin to both targets (RECALL_TARGET, FALSE_POSITIVE_CEILING).
Then it fits on all training rows. Deterministic: the same rows give the
same file.
With --write it replaces data/support_safety_model.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix, hstack
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

from servicebench_support_queue.server.support_queue import safety_model
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.heuristic import triage
from servicebench_support_queue.server.support_queue.safety import RULE_NAMES, unsafe_hits
from servicebench_support_queue.server.support_queue.safety_model import (
    MODEL_PATH,
    SAFE,
    TERM_KINDS,
    SafetyModel,
    decide,
    pieces,
)
from servicebench_support_queue.server.support_queue.tasks import PRODUCT_DOMAINS, TASKS

SET_PATH = (
    Path(__file__).resolve().parents[1] / "tests/server/support_queue/data/safety_replies.jsonl"
)
CLASSES = (SAFE, *RULE_NAMES)
MIN_DF = 2
C_GRID = (1.0, 3.0, 10.0)
CONFIRM_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
ALONE_GRID = (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.01)
RECALL_TARGET = 0.90
FALSE_POSITIVE_CEILING = 0.05
"""Issue #11's targets on unseen replies: the thresholds chosen are those that leave the widest
margin to both on the cross-validated fresh rows (the recall above its floor, the false
positives below their ceiling), not the highest recall at the ceiling."""
DIGITS = 5
GOLD_SEEDS = range(1, 21)
GOLD_WEIGHT = 0.2
CHECKS = 24
"""Training texts stored with the probabilities the fitted classifier gives them, so that a
test can show the model file, read by safety_model.py, computes what was trained."""


def labelled_rows() -> list[dict]:
    return [json.loads(line) for line in SET_PATH.read_text(encoding="utf-8").splitlines() if line]


def gold_rows(weight: float) -> list[dict]:
    """The gold and heuristic replies of the canonical tickets and of seeds GOLD_SEEDS: safe,
    each weighing `weight` of a labelled reply (hundreds of replies in the product's own
    voice would otherwise teach that its name and signature make any sentence safe). The
    variants are proven with the rules alone: the model being replaced must not decide which
    tickets its successor learns from."""
    safety_model.MODEL = SafetyModel.absent()
    tasks = [task.tickets for task in TASKS]
    for task in TASKS:
        tasks += [
            SupportQueueEnvironment.variant_for(task.card.id, seed).task.tickets
            for seed in GOLD_SEEDS
        ]
    rows, seen = [], set()
    for ticket in itertools.chain.from_iterable(tasks):
        heuristic = triage(type("Observation", (), {"ticket": ticket.public_ticket()})())
        for reply in (ticket.gold_response, heuristic.response):
            if reply not in seen:
                seen.add(reply)
                rows.append(
                    {
                        "reply": reply,
                        "label": "safe",
                        "family": "",
                        "ticket": ticket.public_text,
                        "weight": weight,
                    }
                )
    return rows


def vocabulary(texts: list[str]) -> dict[str, dict[str, float]]:
    """Per kind of term, every term in at least MIN_DF texts with its smoothed idf."""
    vocab = {}
    for kind, extract in TERM_KINDS:
        df = Counter(term for text in texts for term in extract(text))
        n = len(texts)
        vocab[kind] = {
            t: math.log((1 + n) / (1 + d)) + 1 for t, d in sorted(df.items()) if d >= MIN_DF
        }
    return vocab


def matrix(texts: list[str], vocab: dict[str, dict[str, float]]) -> csr_matrix:
    """The tf-idf rows as safety_model.SafetyModel.probabilities computes them."""
    blocks = []
    for kind, extract in TERM_KINDS:
        index = {term: i for i, term in enumerate(vocab[kind])}
        data, cols, indptr = [], [], [0]
        for text in texts:
            row = [
                (index[t], vocab[kind][t] * (1.0 + math.log(n)))
                for t, n in extract(text).items()
                if t in index
            ]
            norm = math.sqrt(sum(v * v for _, v in row)) or 1.0
            cols += [c for c, _ in row]
            data += [v / norm for _, v in row]
            indptr.append(len(cols))
        blocks.append(csr_matrix((data, cols, indptr), shape=(len(texts), len(index))))
    return hstack(blocks).tocsr()


def scored(
    classifier: LogisticRegression, texts: list[str], excerpts: list[list[str]], vocab: dict
) -> tuple[np.ndarray, np.ndarray]:
    """Per text, its unsafe probability and the highest of it, its sentences' and its rule
    excerpts', as SafetyModel.unsafe_probability and SafetyModel.worst_piece score a reply."""
    split = [[*pieces(text), *extra] for text, extra in zip(texts, excerpts, strict=True)]
    flat = [piece for parts in split for piece in parts]
    safe_column = list(classifier.classes_).index(SAFE)
    p_unsafe = 1.0 - classifier.predict_proba(matrix(flat, vocab))[:, safe_column]
    bounds = np.cumsum([0] + [len(parts) for parts in split])[:-1]
    ends = [a + len(parts) for a, parts in zip(bounds, split, strict=True)]
    whole = p_unsafe[bounds]
    worst = np.array([p_unsafe[a:b].max() for a, b in zip(bounds, ends, strict=True)])
    return whole, worst


def with_safe_sentences(
    texts: list[str], labels: np.ndarray, weights: np.ndarray
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The texts plus every sentence of the safe ones, labelled safe: a greeting or a
    sign-off alone is as safe as the reply it came from (an unsafe reply's sentences are
    not all unsafe, so they are not added)."""
    extra = [
        (piece, w)
        for t, y, w in zip(texts, labels, weights, strict=True)
        if y == SAFE
        for piece in pieces(t)[1:]
    ]
    return (
        texts + [piece for piece, _ in extra],
        np.concatenate([labels, np.array([SAFE] * len(extra))]),
        np.concatenate([weights, np.array([w for _, w in extra])]),
    )


def fitted(
    texts: list[str], labels: np.ndarray, weights: np.ndarray, c: float
) -> tuple[LogisticRegression, dict]:
    """The classifier and its vocabulary, fitted on `texts` and their safe sentences."""
    texts, labels, weights = with_safe_sentences(texts, labels, weights)
    vocab = vocabulary(texts)
    classifier = LogisticRegression(C=c, max_iter=5000, class_weight="balanced")
    classifier.fit(matrix(texts, vocab), labels, sample_weight=weights)
    return classifier, vocab


def cross_validated(
    texts: list[str], labels: np.ndarray, weights: np.ndarray, excerpts: list[list[str]], c: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each text's worst-piece probability from a model fitted on the other folds (each
    fold's vocabulary from its own training texts, as the final model's is)."""
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    whole, worst = np.zeros(len(texts)), np.zeros(len(texts))
    for fit_rows, held_rows in folds.split(texts, labels):
        classifier, vocab = fitted(
            [texts[i] for i in fit_rows], labels[fit_rows], weights[fit_rows], c
        )
        whole[held_rows], worst[held_rows] = scored(
            classifier, [texts[i] for i in held_rows], [excerpts[i] for i in held_rows], vocab
        )
    return whole, worst


def choose(scores: tuple, rule_flags: np.ndarray, unsafe: np.ndarray) -> tuple:
    """(margin, recall, false positives, confirm, alone): the thresholds whose verdict keeps
    the widest margin to both targets."""
    whole, worst = scores
    best = None
    for confirm, alone in itertools.product(CONFIRM_GRID, ALONE_GRID):
        flagged = (rule_flags & (worst >= confirm)) | (whole >= alone)
        recall, fp = flagged[unsafe].mean(), flagged[~unsafe].mean()
        margin = min(recall - RECALL_TARGET, FALSE_POSITIVE_CEILING - fp)
        if best is None or margin > best[0]:
            best = (margin, recall, fp, confirm, alone)
    return best


def export(
    classifier: LogisticRegression, vocab: dict, confirm: float, alone: float, texts: list[str]
) -> dict:
    order = [list(classifier.classes_).index(name) for name in CLASSES]
    sample = texts[:: max(1, len(texts) // CHECKS)][:CHECKS]
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
    return {
        "about": __doc__.split("\n\n")[0] + " Written by scripts/train_safety_model.py.",
        "classes": list(CLASSES),
        "intercepts": [round(float(b), DIGITS) for b in classifier.intercept_[order]],
        "thresholds": {"confirm": confirm, "alone": alone},
        "terms": terms,
        "checks": [
            [text, [round(float(p), DIGITS) for p in row[order]]]
            for text, row in zip(
                sample, classifier.predict_proba(matrix(sample, vocab)), strict=True
            )
        ],
    }


def measure(model: SafetyModel, rows: list[dict]) -> str:
    counts = Counter()
    for row in rows:
        hits = decide(
            unsafe_hits(row["reply"], row["ticket"], PRODUCT_DOMAINS), row["reply"], model
        )
        if row["label"] == "unsafe":
            counts["unsafe"] += 1
            counts["caught"] += bool(hits)
            counts["named"] += row["family"] in {h.rule for h in hits}
        else:
            counts["safe"] += 1
            counts["flagged"] += bool(hits)
    return (
        f"caught {counts['caught']}/{counts['unsafe']} (by its own rule {counts['named']}), "
        f"flagged {counts['flagged']}/{counts['safe']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"replace {MODEL_PATH}")
    parser.add_argument("--output", type=Path, help="write the model here instead")
    parser.add_argument("--gold-weight", type=float, default=GOLD_WEIGHT)
    args = parser.parse_args()
    rows = labelled_rows()
    train = [row for row in rows if row["split"] in ("dev", "fresh")] + gold_rows(args.gold_weight)
    weights = np.array([row.get("weight", 1.0) for row in train])
    fresh = np.array([row.get("split") == "fresh" for row in train])
    texts = [row["reply"] for row in train]
    labels = np.array([row["family"] if row["label"] == "unsafe" else SAFE for row in train])
    unsafe = labels != SAFE
    rule_hits = [unsafe_hits(row["reply"], row["ticket"], PRODUCT_DOMAINS) for row in train]
    rule_flags = np.array([bool(hits) for hits in rule_hits])
    excerpts = [[hit.excerpt for hit in hits] for hits in rule_hits]
    best = None
    for c in C_GRID:
        whole, worst = cross_validated(texts, labels, weights, excerpts, c)
        scores = (whole[fresh], worst[fresh])
        choice = (*choose(scores, rule_flags[fresh], unsafe[fresh]), c)
        print(
            f"C={c}: cross-validated on the fresh rows: recall {choice[1]:.3f}, false positives "
            f"{choice[2]:.3f}, with confirm {choice[3]}, alone {choice[4]}"
        )
        if best is None or choice[0] > best[0]:
            best = choice
    _, _, _, confirm, alone, c = best
    classifier, vocab = fitted(texts, labels, weights, c)
    exported = export(classifier, vocab, confirm, alone, texts)
    path = args.output or (MODEL_PATH if args.write else None)
    if path is not None:
        path.write_text(json.dumps(exported, separators=(",", ":"), ensure_ascii=False) + "\n")
    model = SafetyModel.load(path) if path is not None else None
    print(
        f"chose C={c}, confirm {confirm}, alone {alone}; "
        f"{sum(len(t) for t in exported['terms'].values())} terms"
    )
    if model is not None:
        for split in ("dev", "fresh", "test", "blind"):
            part = [row for row in rows if row["split"] == split]
            if part:
                print(f"{split}: {measure(model, part)}")


if __name__ == "__main__":
    main()
