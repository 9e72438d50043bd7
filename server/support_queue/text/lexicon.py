"""The words the Support Queue's own texts use: how the canonical text (canonical.py) tells a
one-letter word from the first or last letter of a spaced-out word.

Why: "a b r e a c h" is "a breach" to a reader and "abreach" to a rule that joins every run
of single letters; "A P I" is "API", and "d a t a" is "data", not "dat a". Spacing cannot
tell them apart (the adversary spaces with the same character a word boundary has), but a
reader can: they know "breach" and "API" are words and "abreach" is not. The lexicon is that
knowledge for this product: every word of two or more letters in the Support Queue's text
data (tickets, scenarios, request families and the safety rules' word classes), kept as data,
not as a list in code.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from functools import cache, lru_cache

from .... import DATA_DIR

LEXICON_SOURCES = ("support_tickets.json", "support_scenarios.json", "support_safety_rules.json")
"""With every data/support_families_*.json; the safety model's file is not text a person wrote."""
_LETTERS = re.compile(r"[^\W\d_]{2,}")


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@cache
def lexicon() -> frozenset[str]:
    """The lower-cased words (two or more letters) of the Support Queue's text data."""
    words: set[str] = set()
    for text in _texts(LEXICON_SOURCES):
        words.update(word.lower() for word in _LETTERS.findall(text))
    return frozenset(words)


def _texts(sources: tuple[str, ...]) -> Iterator[str]:
    """Every string of the named data files and of every data/support_families_*.json."""
    paths = [DATA_DIR / name for name in sources]
    paths += sorted(DATA_DIR.glob("support_families_*.json"))
    for path in paths:
        yield from _strings(json.loads(path.read_text(encoding="utf-8")))


READ_AS_TOKENS = frozenset(
    {
        "emailaddress",
        "plainurl",
        "clocktime",
        "commandoption",
        "insecureflag",
        "anyaddress",
        "menupath",
        "configset",
    }
)
"""The tokens the safety rules read an address, a time, a menu path or a setting as
(safety/clauses.py): words of their data, but no word anyone writes."""
PROSE_SOURCES = ("support_tickets.json", "support_scenarios.json")
"""With every data/support_families_*.json: text people wrote, whose word counts say how
often support English uses a word (the rules' file holds word classes, not prose)."""


@cache
def word_costs() -> tuple[dict[str, float], float]:
    """How unlikely each word of the prose is, -log of its share of the prose's words (a
    unigram model: "account so we" is likelier than "accounts owe"), and the cost of a word
    the prose never uses (as if it were used half a time)."""
    counts: Counter[str] = Counter()
    for text in _texts(PROSE_SOURCES):
        counts.update(word.lower() for word in _WORDS.findall(text))
    total = sum(counts.values())
    return {word: math.log(total / count) for word, count in counts.items()}, math.log(2 * total)


_WORDS = re.compile(r"[^\W\d_]+")


@lru_cache(maxsize=1 << 16)
def is_word(word: str) -> bool:
    """`word` (lower case) is a word of the lexicon or an inflection of one: the lexicon holds
    the forms the data happens to use ("clear"), a reader knows the others ("clearing"). Only
    of a stem of five letters or more: a short one is too often a stem by accident ("youring"
    and "thering" strip to "your" and "ther")."""
    if word in lexicon():
        return True
    stem = _stem(word)
    return len(stem) >= INFLECTED_STEM and stem in lexicon_stems()


INFLECTED_STEM = 5
"""The shortest stem an inflection of a lexicon word is read by (`is_word`)."""


@lru_cache(maxsize=1 << 16)
def is_word_form(word: str) -> bool:
    """`word` (lower case) may be a word: of the lexicon in any inflection, however short its
    stem ("caused", "rings"), or of the words people write in support English that the
    product's data never uses (`reader_words`: "clean", "dig")."""
    return word in known_words() or _stem(word) in lexicon_stems()


READER_WORDS_PATH = DATA_DIR / "support_reader_words.json"


@cache
def known_words() -> frozenset[str]:
    """The lexicon and the reader's words in one set: most words of a text are in it."""
    return lexicon() | reader_words()


@cache
def reader_words() -> frozenset[str]:
    """The words of written support English a reader knows (scripts/build_reader_words.py)."""
    return frozenset(json.loads(READER_WORDS_PATH.read_text(encoding="utf-8"))["words"])


@cache
def lexicon_stems() -> frozenset[str]:
    return frozenset(map(_stem, lexicon()))


def _stem(word: str) -> str:
    from .words import stem  # words.py reads canonical.py, which reads this module

    return stem(word)
