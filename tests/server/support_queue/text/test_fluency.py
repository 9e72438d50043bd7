"""Fluency (text/fluency.py): written English reads as English word order, its words in a
random order do not, and the shipped model is what its corpus gives."""

from __future__ import annotations

import json
import math
import random
import statistics
from functools import cache
from pathlib import Path

from servicebench_support_queue.server.support_queue.text import ECHO_LIMITS, canonical_text
from servicebench_support_queue.server.support_queue.text.fluency import (
    SMOOTHING,
    classes,
    fluency,
    fluency_model,
)

from .built_data import rebuilt_unchanged

DATA = Path(__file__).parent / "data"
GENUINE_FILES = ("genuine_texts.jsonl", "genuine_texts_fresh.jsonl")
"""Notes and replies by writers who saw neither the grader nor its tests; neither file is in
the model's corpus (scripts/build_fluency_model.py)."""


@cache
def genuine_texts() -> tuple[str, ...]:
    rows = [
        json.loads(line)
        for name in GENUINE_FILES
        for line in (DATA / name).read_text(encoding="utf-8").splitlines()
    ]
    return tuple(row[component] for row in rows for component in ("summary", "response"))


def shuffled(text: str, rng: random.Random) -> str:
    """The text's whitespace-separated words (with their punctuation) in a random order."""
    words = text.split()
    rng.shuffle(words)
    return " ".join(words)


def test_the_shipped_model_is_what_its_corpus_gives() -> None:
    """A change to the corpus (the labelled replies, the gold texts of the training seeds) or
    to the word classes changes the counts: rebuild with
    `uv run --frozen python scripts/build_fluency_model.py --write`."""
    assert rebuilt_unchanged("build_fluency_model.py")


def test_a_text_is_read_as_word_classes_with_its_sentence_and_clause_breaks() -> None:
    """A time is one number, its colon no break; a contraction is one word; the article "a"
    is a word of the model, not the class of other words."""
    model = fluency_model()
    assert {"a", "hi", "the", "at", "don't", "you"} <= model.words and "lock" not in model.words
    text = "Hi Marta, the lock lifts at 09:42.\nDon't wait (you can reset it) in a minute"
    found = classes(text, model.class_of)
    assert found == [
        "_.", "hi", "_Aa", "_,", "the", "_a", "_a", "at", "_#", "_.",
        "don't", "_a", "_,", "you", "can", "_a", "it", "_,", "in", "a", "_a",
    ]  # fmt: skip


def test_a_pair_never_counted_costs_a_bounded_amount_and_less_than_any_counted() -> None:
    model = fluency_model()
    assert model.unseen == math.log(SMOOTHING)
    assert min(model.scores.values()) > model.unseen
    assert ("_.", "_,") not in model.scores  # one break stands between two words, never two
    lone = model.measure("Hi")  # "_." then "hi": one pair, counted
    assert lone.pairs == 1 and lone.score == model.scores[("_.", "hi")]


def test_only_pairs_that_hold_a_word_of_the_model_are_counted() -> None:
    """A list of facts has few small words: too little evidence, not word salad."""
    model = fluency_model()
    assert model.measure("Account locked; failed sign-ins, usual device; 30 minutes").pairs == 0
    found = model.measure("Locked out of the account")  # "Locked out", "out of"... counted
    assert found.pairs == 4 and found.score > 0


def test_genuine_notes_and_replies_read_fluent_and_their_words_shuffled_do_not() -> None:
    """A genuine text scores above a random order of its own words (measured: all but 27 of
    2,160 orders), and among texts with evidence (8 counted pairs) the two populations hardly
    meet: under 1% of the shuffles reach the summary's salad limit, under 2% of the genuine
    texts score below 0 (measured 16 of 2,062 and 8 of 415). Fluency alone does not decide:
    the salad test also needs an order no more the ticket's than chance (echo.py)."""
    originals, shuffles, beaten = [], [], 0
    for i, text in enumerate(genuine_texts()):
        own = fluency(canonical_text(text).text)
        originals.append(own)
        for k in range(5):
            other = fluency(canonical_text(shuffled(text, random.Random(f"{i}/{k}"))).text)
            shuffles.append(other)
            beaten += own.score > other.score
    assert beaten >= 0.985 * len(shuffles)
    assert statistics.mean(f.score for f in originals) > 0.5
    assert statistics.mean(f.score for f in shuffles) < -0.4
    limit = ECHO_LIMITS["summary"].salad_fluency
    judged = [f.score for f in shuffles if f.pairs >= 8]
    assert sum(score >= limit for score in judged) < 0.01 * len(judged)
    judged = [f.score for f in originals if f.pairs >= 8]
    assert sum(score < 0 for score in judged) < 0.02 * len(judged)


def test_fluency_reads_the_canonical_text() -> None:
    """Invisible characters and look-alike letters do not change what fluency reads."""
    plain = "Please reset your password from the sign-in page, then sign in again."
    hidden = plain.replace("password", "pass\u200bword").replace("the", "th\u0435")
    assert hidden != plain
    assert fluency(canonical_text(hidden).text) == fluency(canonical_text(plain).text)
