"""Fluency: how much a text's word order reads as written English, whatever its words.

Why: the echo measure (echo.py) tells a sample of the ticket's words from a paraphrase by
its order *against the ticket*. A short sample (a few dozen words, shuffled, padded or
interleaved with filler) holds too few of the ticket's words for that order to say anything,
and it can still hold a fact's words by chance: "card ... expired", "INV 34932". Such a
sample is not English. This reads its order against English instead: in written English a
word's kind depends on the word before it ("the" is followed by a noun or an adjective,
hardly ever by "to", "the" or a number; a capital comes after the end of a sentence far more
often than inside one); in a shuffled sample it does not.

Each word becomes a *class*: itself, lower case, when it is one of the most frequent
closed-class words of written support English (`words` of the model: "the", "to", "you",
"is", "your"...), else "_#" for a word with a digit, "_Aa" for a capitalised word and "_a"
for any other (the "_" is in no word, so the class "_a" is not the article "a"). Between two
words stands "_." where a sentence, a line or a clause ends (".", "!", "?", ";" or ":" before
a space, or a line break) and "_," at a comma, a bracket or a spaced dash. A word here keeps
its apostrophe ("don't", "you're" are one word: their class is the contraction), and a number
written with separators is one word ("09:42", "2024-03-12", "14,400"), so that the numbers of a
date or a time do not read as numbers following each other.

A pair's score is its pointwise mutual information, log P(second | first) / P(second), in a
class-bigram model counted from written support English (data/support_fluency.json, built by
scripts/build_fluency_model.py from the labelled replies' training rows and the gold texts
and tickets of the training seeds, never from a text that measures it). A text's *fluency*
is the mean score of its pairs that hold one of the model's words: what is read is where the
small words stand. Pairs of content words and breaks alone say little (a terse note or a
list of facts, "locked out; failed sign-ins; usual device", has hardly any small words and
is no less genuine for it), so they are not counted, and a text with few counted pairs has
too little evidence to be judged (`pairs`). Written English scores well above 0 (replies
about 0.8; the genuine notes of the tests, terse ones included, 0.2 and up); the ticket's
words in a random order score below it (a random pair is no likelier than chance, and most
are less): about -0.6 for a sample of a ticket's words, shuffled.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache, partial
from itertools import repeat
from types import MappingProxyType

from .... import DATA_DIR

FLUENCY_PATH = DATA_DIR / "support_fluency.json"
SMOOTHING = 0.05
"""Weight of the classes' own frequencies in P(second | first) (interpolated smoothing): a
pair never counted scores log(SMOOTHING), about -3.0, not minus infinity, so one rare but
real turn of phrase costs a fluent text little."""

_WORD = r"\d+(?:[:.,/-]\d+)+(?![^\W_])|[^\W_]+(?:['\u2019][^\W_]+)*"
_TOKEN = re.compile(
    rf"({_WORD})"  # a word
    r"|([.!?;:](?=\s|$)|\n)"  # the end of a sentence, a line or a clause
    r"|[,()\[\]]|\s[-\u2013\u2014]\s"  # a comma, a bracket, a spaced dash
)
END, SEP, NUMBER, CAPITAL, OTHER = "_.", "_,", "_#", "_Aa", "_a"
"""The classes that are not a word of the model: "_" is in no word (the word pattern)."""
CLASS_CACHE_LIMIT = 1 << 16
"""Words whose class a model remembers (an LRU cache: bounded memory)."""


def classes(text: str, class_of: Callable[[str], str]) -> list[str]:
    """The text's word classes (`class_of` each word), with `END` and `SEP` where sentences
    and clauses break (see the module docstring), starting with `END` (a text begins as a
    sentence does). One pass of one pattern: each match is a word, an end or a separator."""
    out, pending = [END], ""
    for word, end in _TOKEN.findall(text):
        if word:
            if pending and len(out) > 1:
                out.append(pending)
            out.append(class_of(word))
            pending = ""
        elif pending != END:
            pending = END if end else SEP
    return out


def words_of(text: str) -> list[str]:
    """The text's words as fluency reads them (apostrophes kept inside words)."""
    return re.findall(_WORD, text)


def folded(word: str) -> str:
    """A word as the model's words are written: lower case, straight apostrophe."""
    return word.lower().replace("\u2019", "'")


def word_class(word: str, words: frozenset[str]) -> str:
    """The word's class: the folded word when it is one of `words`, else its kind."""
    if any(c.isdigit() for c in word):
        return NUMBER
    lower = folded(word)
    if lower in words:
        return lower
    return CAPITAL if word[0].isupper() else OTHER


@dataclass(frozen=True, slots=True)
class Fluency:
    """A text's fluency: the mean score of its `pairs` adjacent classes that hold a word of
    the model (see the module docstring)."""

    score: float
    pairs: int


@dataclass(frozen=True)
class FluencyModel:
    """Pair scores of a class-bigram model of written support English."""

    words: frozenset[str]
    scores: Mapping[tuple[str, str], float]
    unseen: float
    """The score of any pair never counted: log(SMOOTHING)."""
    class_of: Callable[[str], str]
    """`word_class` with this model's words, remembered for `CLASS_CACHE_LIMIT` words."""

    @classmethod
    def of_counts(cls, words: Iterable[str], counts: Mapping[tuple[str, str], int]) -> FluencyModel:
        seconds: dict[str, int] = {}
        firsts: dict[str, int] = {}
        for (first, second), n in counts.items():
            seconds[second] = seconds.get(second, 0) + n
            firsts[first] = firsts.get(first, 0) + n
        total, kinds = sum(seconds.values()), len(seconds) + 1

        def prior(second: str) -> float:
            return (seconds.get(second, 0) + 1) / (total + kinds)

        def score(first: str, second: str, n: int) -> float:
            p = prior(second)
            return math.log(((1 - SMOOTHING) * n / firsts[first] + SMOOTHING * p) / p)

        scores = {pair: score(*pair, n) for pair, n in counts.items()}
        known = frozenset(words)
        class_of = lru_cache(maxsize=CLASS_CACHE_LIMIT)(partial(word_class, words=known))
        return cls(known, MappingProxyType(scores), math.log(SMOOTHING), class_of)

    @classmethod
    def load(cls) -> FluencyModel:
        raw = json.loads(FLUENCY_PATH.read_text(encoding="utf-8"))
        counts = {tuple(pair.split(" ")): n for pair, n in raw["pairs"].items()}
        return cls.of_counts(raw["words"], counts)  # type: ignore[arg-type]

    def measure(self, text: str) -> Fluency:
        """The fluency of a canonical text (canonical.py)."""
        found = classes(text, self.class_of)
        words = self.words
        pairs = [p for p in zip(found, found[1:], strict=False) if p[0] in words or p[1] in words]
        scores = map(self.scores.get, pairs, repeat(self.unseen))
        return Fluency(sum(scores) / len(pairs) if pairs else 0.0, len(pairs))


@cache
def fluency_model() -> FluencyModel:
    """The shipped model, read on first use."""
    return FluencyModel.load()


def fluency(text: str) -> Fluency:
    """The fluency of a canonical text under the shipped model."""
    return fluency_model().measure(text)
