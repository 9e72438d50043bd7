"""Train the unsafe-reply model (server/support_queue/text/safety/model.py) on the labelled set.

    uv sync --frozen --extra test --extra train
    uv run --frozen python scripts/train_safety_model.py [--write]

The model judges pieces of a reply (each sentence, each two in a row, as the rules read them),
so it learns from pieces. It trains on the labelled set's `dev` and `fresh` rows
(tests/server/support_queue/text/safety/data/safety_replies.jsonl), the `train` rows written
for it (safety_train.jsonl and a file per later round, safety_train_r*.jsonl), the blind sets
retired into training once their rows were read (`retired`, safety_retired.jsonl) and, at a
fifth of the weight, the gold and heuristic replies of the canonical tickets and of seeds 1-20;
never on `test`, `blind` or `blind20` rows, nor on the blind sets of their own files, which it
only measures. Every piece of a safe reply is a safe example. An unsafe reply says only that
*some* piece of it is unsafe (multiple-instance learning): a first model learns from whole
unsafe replies; then each unsafe reply gives as its unsafe examples the sentences its own rule
finds in it and the piece the previous model finds most unsafe, for ROUNDS rounds. The
regularisation and both thresholds of the verdict (verdict.py) are chosen on 5-fold
cross-validated verdicts of the `fresh` and `train` rows (replies written by others after the
rules, which the rules were never fitted to): the highest recall whose false positives stay
within FALSE_POSITIVE_CEILING, among the choices that flag no gold or heuristic reply of the
held-out folds. Then it fits on all training rows. Deterministic: the same rows give the same
file. With --write it replaces data/support_safety_model.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from safety_rows import (
    CHOICE_SPLITS,
    CLASSES,
    RECIPE,
    Example,
    Row,
    digest,
    labelled_rows,
    training_rows,
)
from safety_training import export, fitted, measure, model_of
from sklearn import __version__ as sklearn_version
from sklearn.model_selection import StratifiedKFold

from servicebench_support_queue.server.support_queue.tasks import PRODUCT_DOMAINS
from servicebench_support_queue.server.support_queue.text.safety.clauses import read
from servicebench_support_queue.server.support_queue.text.safety.model import MODEL_PATH, SAFE
from servicebench_support_queue.server.support_queue.text.safety.rules import GRAMMAR
from servicebench_support_queue.server.support_queue.text.safety.verdict import Pieces, own_verdict

C_GRID = tuple(RECIPE["c_grid"])
CONFIRM_GRID = tuple(RECIPE["confirm_grid"])
ALONE_GRID = tuple(RECIPE["alone_grid"])
ALONE_MIN = min(ALONE_GRID)
"""Below every `alone` tried: a row's own verdict under it flags at none of them."""
FALSE_POSITIVE_CEILING = RECIPE["false_positive_ceiling"]
ROUNDS = RECIPE["rounds"]


def examples(rows: list[Row], model_rounds: int, c: float) -> tuple:
    """The classifier, vocabulary and examples fitted on `rows` by the multiple-instance
    rounds."""
    safe = [
        Example.of(row, piece, SAFE) for row in rows if row.label == SAFE for piece in row.pieces
    ]
    unsafe = [row for row in rows if row.label != SAFE and row.sources]
    chosen = [Example.of(row, tuple(range(len(row.sources))), row.label) for row in unsafe]
    classifier, vocab = fitted(safe + chosen, c)
    for _ in range(model_rounds):
        model = model_of(classifier, vocab, 0.5, 1.01)
        chosen = []
        for row in unsafe:
            found = {(i, i) for i in row.rule_sentences}
            pieces = Pieces.of(row.sources, model)
            found.add(pieces.worst()[1])
            chosen += [
                Example.of(row, tuple(range(first, last + 1)), row.label)
                for first, last in sorted(found)
            ]
        classifier, vocab = fitted(safe + chosen, c)
    return classifier, vocab, safe + chosen


def evidence(rows: list[Row], model) -> list[tuple[bool, float, float]]:
    """Per row: a clear hit, the highest confirming score of its weak hits, and the score of
    the model's own verdict (verdict.py `own_verdict`: its likeliest piece that can stand for
    the rule it finds likeliest)."""
    out = []
    for row in rows:
        pieces = Pieces.of(row.sources, model) if row.sources else None
        if pieces is None:
            out.append((False, 0.0, 0.0))
            continue
        weak = [max(map(pieces.around, sentences), default=0.0) for sentences in row.weak]
        reply = read(row.reply, GRAMMAR)
        own = own_verdict(reply, pieces, row.reply, row.ticket, PRODUCT_DOMAINS, model, ALONE_MIN)
        out.append((row.clear, max(weak, default=0.0), 0.0 if own is None else own[0]))
    return out


def flagged(found: list[tuple[bool, float, float]], confirm: float, alone: float) -> np.ndarray:
    return np.array([clear or weak >= confirm or worst >= alone for clear, weak, worst in found])


def choose(found, unsafe: np.ndarray, chosen_on: np.ndarray, gold: np.ndarray) -> tuple:
    """(key, recall, false positives, confirm, alone, gold flagged): among the thresholds that
    flag no gold reply (if any do not), the highest recall on the choice rows whose false
    positives there stay within FALSE_POSITIVE_CEILING, or the fewest false positives if none
    do. The ceiling is a constraint, not a target to trade: a reward that punishes careful
    replies teaches a policy to stop writing them."""
    best = None
    for confirm, alone in itertools.product(CONFIRM_GRID, ALONE_GRID):
        flags = flagged(found, confirm, alone)
        recall, fp = flags[chosen_on & unsafe].mean(), flags[chosen_on & ~unsafe].mean()
        within = bool(fp <= FALSE_POSITIVE_CEILING)
        key = (not flags[gold].any(), within, recall if within else -fp, -fp)
        if best is None or key > best[0]:
            best = (key, recall, fp, confirm, alone, int(flags[gold].sum()))
    return best


def cross_validated(rows: list[Row], c: float) -> list[tuple[bool, float, float]]:
    """Each row's `evidence` from a model fitted without its fold; the folds run in parallel
    (each is independent, so the result is the same as one after another)."""
    labels = [row.label for row in rows]
    folds = StratifiedKFold(RECIPE["folds"], shuffle=True, random_state=0)
    splits = list(folds.split(np.zeros(len(rows)), labels))
    jobs = [([rows[i] for i in fit], [rows[i] for i in held], c) for fit, held in splits]
    found: list = [None] * len(rows)
    with ProcessPoolExecutor(min(len(jobs), os.cpu_count() or 1)) as pool:
        for (_, held), result in zip(splits, pool.map(_fold_evidence, jobs), strict=True):
            for i, one in zip(held, result, strict=True):
                found[i] = one
    return found


def _fold_evidence(job: tuple[list[Row], list[Row], float]) -> list[tuple[bool, float, float]]:
    fit_rows, held_rows, c = job
    classifier, vocab, _ = examples(fit_rows, ROUNDS, c)
    return evidence(held_rows, model_of(classifier, vocab, 0.5, 1.01))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"replace {MODEL_PATH}")
    parser.add_argument("--output", type=Path, help="write the model here instead")
    parser.add_argument(
        "--evidence", type=Path, help="write each C's cross-validated evidence per row here"
    )
    parser.add_argument(
        "--check", action="store_true", help=f"exit 1 unless the result equals {MODEL_PATH}"
    )
    parser.add_argument(
        "--measure", nargs="*", default=["dev", "fresh", "test"], help="splits to measure"
    )
    args = parser.parse_args()
    rows = labelled_rows()
    train = training_rows(rows)
    unsafe = np.array([row.label != SAFE for row in train])
    chosen_on = np.array([row.split in CHOICE_SPLITS for row in train])
    gold = np.array([row.split == "gold" for row in train])
    best = None
    for c in C_GRID:
        found = cross_validated(train, c)
        if args.evidence is not None:
            args.evidence.with_suffix(f".C{c}.json").write_text(
                json.dumps(
                    [[row.split, row.label, *one] for row, one in zip(train, found, strict=True)]
                )
            )
        choice = (*choose(found, unsafe, chosen_on, gold), c)
        print(
            f"C={c}: cross-validated on the {' and '.join(CHOICE_SPLITS)} rows: recall "
            f"{choice[1]:.3f}, false positives "
            f"{choice[2]:.3f}, gold flagged {choice[5]}, with confirm {choice[3]}, "
            f"alone {choice[4]}"
        )
        if best is None or choice[0] > best[0]:
            best = choice
    _, _, _, confirm, alone, _, c = best
    classifier, vocab, trained_on = examples(train, ROUNDS, c)
    exported = export(classifier, vocab, confirm, alone, trained_on)
    exported["about"] = __doc__.split("\n\n")[0] + " Written by scripts/train_safety_model.py."
    exported["trained_on"] = {
        "digest": digest(train, RECIPE),
        "rows": len(train),
        "recipe": RECIPE,
        "scikit_learn": sklearn_version,
    }
    written = json.dumps(exported, separators=(",", ":"), ensure_ascii=False) + "\n"
    path = args.output or (MODEL_PATH if args.write else None)
    if path is not None:
        path.write_text(written, encoding="utf-8")
    if args.check and MODEL_PATH.read_text(encoding="utf-8") != written:
        raise SystemExit(f"{MODEL_PATH} is not what this script trains on today's rows")
    print(f"chose C={c}, confirm {confirm}, alone {alone}")
    model = model_of(classifier, vocab, confirm, alone)
    for split in args.measure:
        part = [row for row in rows if row.split == split]
        counts = Counter(measure(model, part))
        print(
            f"{split}: caught {counts['caught']}/{counts['unsafe']}, "
            f"flagged {counts['flagged']}/{counts['safe']}"
        )
    assert set(exported["classes"]) == set(CLASSES)


if __name__ == "__main__":
    main()
