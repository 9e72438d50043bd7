"""Fact matching: a paraphrase earns the same credit as the exact words (text/words.py)."""

from __future__ import annotations

import pytest

from servicebench_support_queue.server.support_queue.text import SYNONYM_TABLE
from servicebench_support_queue.server.support_queue.text.words import (
    CompiledFact,
    NormalisedText,
    normalise,
    stem,
)


@pytest.mark.parametrize(
    "phrase, text",
    [
        ("signing secret rotated", "SIGNING-SECRET, ROTATED!"),  # case, punctuation
        ("rotated the signing secret", "the signing secrets were rotating"),  # inflections
        ("rotated the secret", "the secret was rotated"),  # word order in window
        ("2fa blocked", "two-factor authentication stopped it"),  # synonyms
        ("30 minutes", "half an hour"),
        ("sorry for the delay", "apologies for the delay"),
        ("trust and safety", "our Trust & Safety team"),
        ("cannot see a discount", "I can't see a discount"),  # contractions
        ("14400", "$14,400"),  # thousands separator
        ("20 percent discount", "a 20% discount"),
        ("apologize for the delay", "we apologise for the delay"),  # British -ise
    ],
)
def test_paraphrases_match(phrase: str, text: str) -> None:
    fact = CompiledFact.compile([phrase], SYNONYM_TABLE)
    assert fact.found_in(NormalisedText(text, SYNONYM_TABLE))


@pytest.mark.parametrize(
    "phrase, text",
    [
        ("signing secret rotated", "the signing process went fine"),  # a word is missing
        ("rotated the secret", "rotated our keys, reviewed logs, checked dashboards, kept secret"),
        ("invoice paid", "the invoice is unpaid"),
    ],
)
def test_non_matches(phrase: str, text: str) -> None:
    fact = CompiledFact.compile([phrase], SYNONYM_TABLE)
    assert not fact.found_in(NormalisedText(text, SYNONYM_TABLE))


def test_contractions_expand_only_at_the_end_of_a_word() -> None:
    """A quote before a word is a quote: "'shopper12'" keeps its s, "'data'" its d."""
    assert normalise("the account 'shopper7233' and 'data'", SYNONYM_TABLE) == [
        "account",
        "shopper7233",
        "data",
    ]
    assert normalise("We can't, it's Marta's, you'd", SYNONYM_TABLE) == ["not", "marta"]
    fact = CompiledFact.compile(["shopper7233"], SYNONYM_TABLE)
    assert fact.found_in(NormalisedText("Sent by 'shopper7233'.", SYNONYM_TABLE))


def test_normalise_drops_stop_words_and_stems() -> None:
    assert normalise("The invoices were paid in full", SYNONYM_TABLE) == ["invoic", "paid", "full"]


@pytest.mark.parametrize("word", ["note", "notes", "noted", "noting", "Note"])
def test_a_note_is_not_the_negation(word: str) -> None:
    assert normalise(word, SYNONYM_TABLE) == ["note"]
    assert stem("not") == "not"
    assert not CompiledFact.compile(["not charged"], SYNONYM_TABLE).found_in(
        NormalisedText(f"{word} charged", SYNONYM_TABLE)
    )
