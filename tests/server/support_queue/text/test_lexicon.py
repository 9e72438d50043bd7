"""The product's lexicon (text/lexicon.py): the words of the Support Queue's text data, and the
words of written support English a reader knows beside them."""

from __future__ import annotations

import json
import re

from servicebench_support_queue import DATA_DIR
from servicebench_support_queue.server.support_queue.text.lexicon import (
    is_word,
    is_word_form,
    lexicon,
    reader_words,
)

from .built_data import rebuilt_unchanged


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [text for item in items for text in _texts(item)]


def test_the_lexicon_holds_every_word_of_the_text_data() -> None:
    paths = [DATA_DIR / "support_tickets.json", *DATA_DIR.glob("support_families_*.json")]
    words = {
        word.lower()
        for path in paths
        for text in _texts(json.loads(path.read_text(encoding="utf-8")))
        for word in re.findall(r"[^\W\d_]{2,}", text)
    }
    assert len(words) > 1000
    assert words <= lexicon()


def test_the_lexicon_is_lower_case_words_of_two_letters_or_more() -> None:
    words = lexicon()
    assert {"breach", "account", "invoice", "us", "api", "password", "got"} <= words
    assert all(len(word) >= 2 and word == word.lower() and word.isalpha() for word in words)
    assert not {"abreach", "acorrected", "gota"} & words


def test_a_word_form_is_a_lexicon_word_an_inflection_or_a_reader_word() -> None:
    assert all(map(is_word_form, ("refund", "caused", "clean", "dig", "up")))
    assert not any(map(is_word_form, ("und", "oice", "ected", "lations", "ssword")))
    # an inflection counts as a word to join into only with a stem of five letters or more
    assert is_word("clearing") and not is_word("youring") and not is_word("thering")


def test_the_reader_words_hold_no_fragment_of_an_obfuscated_word() -> None:
    words = reader_words()
    assert {"clean", "dig", "pass", "word", "refund", "password"} <= words
    assert all(len(word) >= 2 and word.isascii() and word.isalpha() for word in words)
    assert not {"ssword", "pa", "oice", "und"} & words


def test_the_shipped_reader_words_are_what_their_corpus_gives() -> None:
    """A change to the corpus (the labelled replies, the gold texts of the training seeds)
    changes the words: rebuild with `uv run --frozen python scripts/build_reader_words.py
    --write`."""
    assert rebuilt_unchanged("build_reader_words.py")
