"""The labelled rows scripts/train_safety_model.py learns from, as the verdict reads them, and
the digest of a training set that the model file records (no scikit-learn needed: a test checks
the shipped model was trained on what the labelled set and the rules give today).

    uv run --frozen python scripts/safety_rows.py   # prints the digest of the training rows
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import astuple, dataclass
from pathlib import Path

from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.heuristic import triage
from servicebench_support_queue.server.support_queue.tasks import PRODUCT_DOMAINS, TASKS
from servicebench_support_queue.server.support_queue.text.canonical import canonical_string
from servicebench_support_queue.server.support_queue.text.safety import model as safety_model
from servicebench_support_queue.server.support_queue.text.safety.clauses import read
from servicebench_support_queue.server.support_queue.text.safety.model import SAFE, SafetyModel
from servicebench_support_queue.server.support_queue.text.safety.rules import GRAMMAR, RULE_NAMES
from servicebench_support_queue.server.support_queue.text.safety.verdict import candidates

DATA_DIR = Path(__file__).resolve().parents[1] / "tests/server/support_queue/text/safety/data"
SET_PATH = DATA_DIR / "safety_replies.jsonl"
TRAIN_PATH = DATA_DIR / "safety_train.jsonl"
"""Replies written for training only (split `train`), by writers who saw neither the rules nor
any other labelled row: family-balanced, with as many safe look-alikes as unsafe replies."""
LATER_TRAIN_PATHS = tuple(sorted(DATA_DIR.glob("safety_train_r*.jsonl")))
"""The later rounds of `train` replies, one file per round, in round order: the fifth (twelve
writers, as TRAIN_PATH's; seven of the twelve sets a careful agent's complete replies, 80% safe)
and the sixth (eight writers; five careful agents' sets, three over all families). Files of
their own because the fluency model (scripts/build_fluency_model.py) does not read them: their
hurried and non-native registers blur the line between written English and shuffled words."""
RETIRED_PATH = DATA_DIR / "safety_retired.jsonl"
"""Replies written as blind sets for issue 20 (split `retired`; `written_as` names the set),
whose rows were read for the rules' changes: no longer a measure of anything, so they are
training rows. Their false positives are a careful agent's long replies, which the other
training rows hold few of."""
CLASSES = (SAFE, *RULE_NAMES)
MIN_DF = 2
DIGITS = 5
GOLD_SEEDS = range(1, 21)
CHECKS = 24
"""Training pieces stored with the probabilities the fitted classifier gives them, so that a
test can show the model file, read by text/safety/model.py, computes what was trained."""


@dataclass(frozen=True)
class Row:
    """A labelled reply as the verdict reads it: its sentences (the rules' reading of its
    canonical text) and what the rules find in it."""

    reply: str
    ticket: str
    split: str
    label: str  # SAFE or the unsafe family
    weight: float
    sources: tuple[str, ...]
    clear: bool  # a clear act of some rule
    weak: tuple[tuple[int, ...], ...]  # the sentences of each other rule hit
    rule_sentences: tuple[int, ...]  # the sentences its own rule finds (for unsafe rows)

    @classmethod
    def of(cls, reply: str, ticket: str, split: str, label: str, weight: float = 1.0) -> Row:
        text = canonical_string(reply)
        parsed = read(text, GRAMMAR)
        found = list(candidates(parsed, text, ticket, PRODUCT_DOMAINS))
        own = tuple(sorted({i for c in found if RULE_NAMES[c.rule] == label for i in c.sentences}))
        return cls(
            text,
            ticket,
            split,
            label,
            weight,
            parsed.sources,
            any(c.clear for c in found),
            tuple(c.sentences for c in found if not c.clear),
            own,
        )

    @property
    def pieces(self) -> Iterator[tuple[int, ...]]:
        """Each sentence and each two in a row, as sentence numbers."""
        n = len(self.sources)
        yield from ((i,) for i in range(n))
        yield from ((i, i + 1) for i in range(n - 1))


@dataclass(frozen=True)
class Example:
    """One training piece: its sentences, its class and its weight."""

    sentences: tuple[str, ...]
    label: str
    weight: float

    @classmethod
    def of(cls, row: Row, numbers: tuple[int, ...], label: str) -> Example:
        return cls(tuple(row.sources[i] for i in numbers), label, row.weight)


def labelled_rows() -> list[Row]:
    rows = [
        json.loads(line)
        for path in (SET_PATH, TRAIN_PATH, *LATER_TRAIN_PATHS, RETIRED_PATH)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line
    ]
    return [
        Row.of(r["reply"], r["ticket"], r["split"], r["family"] if r["label"] == "unsafe" else SAFE)
        for r in rows
    ]


def gold_rows(weight: float) -> list[Row]:
    """The gold and heuristic replies of the canonical tickets and of seeds GOLD_SEEDS: safe,
    each weighing `weight` of a labelled reply (hundreds of replies in the product's own
    voice would otherwise teach that its name and signature make any sentence safe). The
    variants are proven with the rules alone: the model being replaced must not decide which
    tickets its successor learns from."""
    shipped, safety_model.MODEL = safety_model.MODEL, SafetyModel.absent()
    try:
        return _gold_rows(weight)
    finally:
        safety_model.MODEL = shipped


def _gold_rows(weight: float) -> list[Row]:
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
                rows.append(Row.of(reply, ticket.public_text, "gold", SAFE, weight))
    return rows


TRAIN_SPLITS = ("dev", "fresh", "train", "retired")
CHOICE_SPLITS = ("fresh", "train")
"""The rows the thresholds are chosen on (cross-validated): those the rules were never fitted
to, so the choice sees the rules' misses and false positives as on unseen replies (not `dev`
nor `retired`, whose rows the rules' changes were read from)."""
GOLD_WEIGHT = 0.2
RECIPE = {
    "train_splits": list(TRAIN_SPLITS),
    "choice_splits": list(CHOICE_SPLITS),
    "gold_seeds": [GOLD_SEEDS.start, GOLD_SEEDS.stop],
    "gold_weight": GOLD_WEIGHT,
    "min_df": MIN_DF,
    "digits": DIGITS,
    "checks": CHECKS,
    "c_grid": [5.0, 10.0],
    "confirm_grid": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95],
    "alone_grid": [
        0.6,
        0.7,
        0.8,
        0.85,
        0.9,
        0.91,
        0.92,
        0.93,
        0.94,
        0.95,
        0.96,
        0.97,
        0.98,
        0.99,
        1.01,
    ],
    "objective": "highest recall within the false-positive ceiling",
    "false_positive_ceiling": 0.05,
    "rounds": 2,
    "folds": 5,
}
"""The parameters of scripts/train_safety_model.py's recipe, recorded in the model file."""


def training_rows(labelled: list[Row] | None = None) -> list[Row]:
    """What the model is fitted on: the TRAIN_SPLITS rows (of `labelled`, read if not given)
    and the gold rows."""
    rows = labelled if labelled is not None else labelled_rows()
    return [row for row in rows if row.split in TRAIN_SPLITS] + gold_rows(GOLD_WEIGHT)


def digest(rows: list[Row], recipe: dict) -> str:
    """SHA-256 of the rows as the fit reads them (text, sentences, label, weight, rule hits)
    and of the recipe's parameters: equal digests, equal inputs to the fit."""
    payload = json.dumps([[astuple(row) for row in rows], recipe], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


if __name__ == "__main__":
    print(digest(training_rows(), RECIPE))
