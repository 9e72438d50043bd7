"""Words as fact matching reads them, and how a fact is found in a text.

The text is the canonical one (canonical.py: invisible characters, look-alike letters,
spaced-out letters already dealt with), split by the word rule stated there. A fact is
credited when one of its phrasings occurs in the text after both are normalised the same way,
so a paraphrase earns the same credit as the exact words:

1. lower case; curly quotes straightened; contractions expanded ("can't" -> "can not"),
   only where they end a word (so a quote before a word, as in "'shopper12'", stays a quote);
   thousands separators dropped ("14,400" -> "14400"); "%" -> "percent"; then the words
   (every character that is not a letter or digit splits words, as in the word rule);
2. simple inflections stripped (plural -s/-es/-ies, -ed, -ing, a final -e,
   British -ise spellings), see `stem`;
3. the synonym table of data/support_tickets.json applied: every variant is
   rewritten to its canonical term, longest variant first;
4. stop words dropped.

A phrasing matches when all its remaining words occur, in any order, within a
window of `len(phrasing) + WINDOW_SLACK` consecutive words of the text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from .canonical import words_of

WINDOW_SLACK = 3

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "of",
        "for",
        "in",
        "on",
        "at",
        "by",
        "with",
        "from",
        "and",
        "or",
        "as",
        "so",
        "than",
        "then",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "i",
        "we",
        "you",
        "your",
        "yours",
        "our",
        "ours",
        "us",
        "me",
        "my",
        "he",
        "she",
        "they",
        "them",
        "their",
        "his",
        "her",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "just",
        "also",
        "there",
        "here",
        "about",
        "into",
        "onto",
        "over",
        "via",
        "per",
        "please",
        "hi",
        "hello",
        "dear",
        "thank",
        "thanks",
        "regards",
        "best",
    ]
)

_CONTRACTIONS = (
    ("can't", "can not"),
    ("cannot", "can not"),
    ("won't", "will not"),
    ("n't", " not"),
    ("'re", " are"),
    ("'ll", " will"),
    ("'ve", " have"),
    ("'m", " am"),
    ("'d", " would"),
    ("'s", ""),
)
_WHOLE_WORDS = ("can't", "cannot", "won't")
_CONTRACTION = re.compile(
    r"\b(?:" + "|".join(re.escape(w) for w in _WHOLE_WORDS) + r")(?![a-z])"
    r"|(?<=[a-z])(?:"
    + "|".join(re.escape(s) for s, _ in _CONTRACTIONS if s not in _WHOLE_WORDS)
    + r")(?![a-z])"
)
_EXPANSION = dict(_CONTRACTIONS)
_THOUSANDS = re.compile(r",(?<=\d,)(?=\d{3}\b)")
"""A thousands comma ("1,200"): the comma first, so the search jumps from comma to comma."""
_BRITISH_ISE = re.compile(r"is(e|ed|es|er|ing|ation|ations)$")


def prepare(text: str) -> str:
    """Lower case, straight quotes, expanded contractions: shared with the safety rules."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    if "'" in text or "cannot" in text:  # every contraction has one
        text = _CONTRACTION.sub(lambda m: _EXPANSION[m.group(0)], text)
    return _THOUSANDS.sub("", text).replace("%", " percent ")


_KEPT_APART = {"not": "note"}
"""Stems that are a short word of their own, and what an inflected word that reduces to one
stems to instead: "note", "noted", "notes" and "noting" are not the negation "not"."""


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Strip one simple inflection, so "rotated", "rotates" and "rotating" agree."""
    if len(word) <= 3 or not word.isalpha():
        return word
    stemmed = _stripped(word)
    return _KEPT_APART.get(stemmed, stemmed)


def _stripped(word: str) -> str:
    """`word` (longer than three letters) without its simple inflection."""
    if len(word) >= 5:
        word = _BRITISH_ISE.sub(r"iz\1", word)
    if word.endswith(("ies", "ied")) and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


_STOP_STEMS = frozenset(stem(w) for w in STOP_WORDS)


def _stems(text: str) -> list[str]:
    """Stems of the prepared text's words, by the word rule of canonical.py."""
    return list(map(stem, words_of(prepare(text))))


@dataclass(frozen=True)
class SynonymTable:
    """Variant word sequences -> canonical word sequence, both already stemmed.

    `by_first_word` lists, for each word that starts a variant, its rewrites
    longest first, so rewriting a text costs one dict lookup per word.
    """

    by_first_word: Mapping[str, tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]]

    @classmethod
    def build(cls, table: Mapping[str, Sequence[str]]) -> SynonymTable:
        rewrites: dict[tuple[str, ...], tuple[str, ...]] = {}
        canonicals = {tuple(_stems(canon)) for canon in table}
        for canon, variants in table.items():
            target = tuple(_stems(canon))
            for variant in (canon, *variants):
                key = tuple(_stems(variant))
                if not key:
                    raise ValueError(f"synonym variant {variant!r} normalises to nothing")
                if rewrites.get(key, target) != target or (key in canonicals and key != target):
                    raise ValueError(f"synonym variant {variant!r} belongs to two entries")
                rewrites[key] = target
        grouped: dict[str, list[tuple[tuple[str, ...], tuple[str, ...]]]] = {}
        for key in sorted(rewrites, key=lambda k: (-len(k), k)):
            grouped.setdefault(key[0], []).append((key, rewrites[key]))
        return cls(by_first_word=MappingProxyType({w: tuple(r) for w, r in grouped.items()}))

    def apply(self, words: list[str]) -> list[str]:
        """`words` with each variant (the longest at each word) rewritten; only the words that
        start a variant are tried."""
        rewrites = self.by_first_word
        out: list[str] = []
        done = 0
        for i in [i for i, word in enumerate(words) if word in rewrites]:
            if i < done:
                continue  # inside a variant already rewritten
            for key, target in rewrites[words[i]]:
                if len(key) == 1 or tuple(words[i : i + len(key)]) == key:
                    out += words[done:i]
                    out += target
                    done = i + len(key)
                    break
        return out + words[done:]


def normalise(text: str, synonyms: SynonymTable) -> list[str]:
    """The content words of `text`, stemmed and mapped to canonical synonyms."""
    return [w for w in synonyms.apply(_stems(text)) if w not in _STOP_STEMS]


@dataclass(frozen=True)
class CompiledFact:
    """A fact with each phrasing normalised once, at import (with its word set)."""

    name: str
    phrasings: tuple[tuple[str, ...], ...]
    word_sets: tuple[frozenset[str], ...]
    counts: tuple[Mapping[str, int], ...] = field(compare=False)
    """Each phrasing's words with how often each occurs (a window must hold as many); derived
    from `phrasings`, so left out of equality and hashing."""

    @classmethod
    def compile(cls, phrasings: Sequence[str], synonyms: SynonymTable) -> CompiledFact:
        normalised = tuple(dict.fromkeys(tuple(normalise(p, synonyms)) for p in phrasings))
        if not all(normalised):
            raise ValueError(f"fact {phrasings!r} has a phrasing made only of stop words")
        sets = tuple(frozenset(p) for p in normalised)
        counts = tuple(MappingProxyType(Counter(p)) for p in normalised)
        return cls(phrasings[0], normalised, sets, counts)

    def found_in(self, text: NormalisedText) -> bool:
        vocabulary = text.vocabulary
        if not any(map(vocabulary.issuperset, self.word_sets)):
            return False  # no phrasing has all its words in the text (most facts): in one test
        for phrase, words, counts in zip(self.phrasings, self.word_sets, self.counts, strict=True):
            if words <= vocabulary and (len(phrase) == 1 or text.has_window(phrase, counts)):
                return True
        return False


class NormalisedText:
    """A text's content words and their set, so most phrasings are ruled out at once."""

    __slots__ = ("words", "vocabulary")

    def __init__(self, text: str, synonyms: SynonymTable) -> None:
        self.words = normalise(text, synonyms)
        self.vocabulary = frozenset(self.words)

    def has_window(self, phrase: Sequence[str], needed: Mapping[str, int] | None = None) -> bool:
        """All words of `phrase`, in any order, within one window of the text (`needed`: the
        phrase's words counted, if known already)."""
        needed = Counter(phrase) if needed is None else needed
        width = len(phrase) + WINDOW_SLACK
        words = self.words
        for start, word in enumerate(words):
            if word in needed:
                window = words[start : start + width]
                if all(window.count(w) >= n for w, n in needed.items()):
                    return True
        return False


def most_repeated_share(words: Iterable[str]) -> tuple[int, float]:
    """(count, share) of the most frequent content word: the keyword-repetition signal."""
    counts = Counter(words)
    total = sum(counts.values())
    if not total:
        return 0, 0.0
    top = counts.most_common(1)[0][1]
    return top, top / total
