"""The product's lexicon (text/lexicon.py): the words of the Support Queue's text data."""

from __future__ import annotations

import json
import re

from servicebench_support_queue import DATA_DIR
from servicebench_support_queue.server.support_queue.text.lexicon import lexicon


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
