"""Sentences, clause marks and word-class templates for the Support Queue safety rules.

A reply is cut into sentences (at . ! ? ; : and line breaks) and each sentence into
tokens: lower-case words, contractions expanded ("don't" -> "do not", "it's" -> "it s"),
stemmed with the coverage matcher's `stem`, with money, numbers and e-mail addresses
folded to `money`, `num` and `emailaddress`, and a `,` token wherever a clause breaks
(commas, dashes, brackets). Multi-word terms that are not what they look like
("error code", "credit card", "last four digits", "not required") are merged into one
token with `_`, so a class word inside them no longer matches.

A *template* is a space-separated sequence of elements, each matching whole tokens:
- `word` or `w1|w2|w3`: one word (stemmed like the text; `a_b` names a merged term);
- `(sign in|log in|login)`: one of several sub-templates (phrases);
- `{CLASS}`: any entry of a word class (entries are templates themselves);
- any element followed by `?` is optional;
- `~N`: up to N tokens of any kind within the sentence;
- `^N`: up to N tokens inside one noun phrase (no clause mark, no preposition);
- `*N`: up to N auxiliaries, modals, adverbs and pronouns (a verb group).
Templates compile to regular expressions over the sentence's token string.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from server.support_queue_text import stem

CLAUSE = ","
END = "."

_CONTRACTIONS = (
    (r"\bcan'?t\b|\bcannot\b", "can not"), (r"\bwon'?t\b", "will not"), (r"\bshan'?t\b", "shall not"),
    (r"n't\b", " not"), (r"'re\b", " are"), (r"'ll\b", " will"), (r"'ve\b", " have"),
    (r"'m\b", " am"), (r"'d\b", " would"), (r"'s\b", " s"), (r"(?<=s)'(?=\s|$)", " s"),
)
_FOLDS = (
    (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), " emailaddress "),
    (re.compile(r"https?://\S+"), " url "),
    (re.compile(r"[$€£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s?(?:usd|eur|gbp|dollars?|euros?)\b"),
     " money "),
    (re.compile(r"%"), " percent "),
    (re.compile(r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b"), " clocktime "),
    (re.compile(r"\b\d[\d,.]*\b"), " num "),
)
_SENTENCE_END = re.compile(r"[.!?;:]+(?=\s|$)|[!?]+|\n+")
_CLAUSE_MARK = re.compile(r"\s[-\u2013\u2014]+\s|[\u2013\u2014]|--|[(),\[\]]")
_WORD = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*|,")


def _expand(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    for pattern, replacement in _CONTRACTIONS:
        text = re.sub(pattern, replacement, text)
    for pattern, replacement in _FOLDS:
        text = pattern.sub(replacement, text)
    return text


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence: its raw text, its tokens and their offsets in `text` (tokens + " ")."""

    raw: str
    tokens: tuple[str, ...]
    text: str
    starts: tuple[int, ...]

    def token_at(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1


def _elements(template: str) -> list[str]:
    """Split a template at spaces outside parentheses: "(sign in|login) page" is two elements."""
    out, depth, current = [], 0, ""
    for char in template:
        depth += (char == "(") - (char == ")")
        if char == " " and depth == 0:
            if current:
                out.append(current)
            current = ""
        else:
            current += char
    if depth or not (current or out):
        raise ValueError(f"unbalanced or empty template {template!r}")
    return out + [current] if current else out


def _top_level(body: str) -> list[str]:
    """The alternatives of a parenthesised group, split at its own `|`s only."""
    out, depth, current = [], 0, ""
    for char in body:
        depth += (char == "(") - (char == ")")
        if char == "|" and depth == 0:
            out.append(current)
            current = ""
        else:
            current += char
    return out + [current]


def _alternation(words: Iterable[str]) -> str:
    return "(?:" + "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True)) + ")"


class Grammar:
    """Word classes, stem overrides and merged terms, with the template compiler.

    `overrides` maps a token to the raw words that become it instead of their stem
    (words whose stem collides with another word's: "paste" and "past")."""

    def __init__(self, classes: Mapping[str, Sequence[str]], overrides: Mapping[str, Sequence[str]],
                 merged_terms: Sequence[str], verb_group: str, phrase_breakers: str) -> None:
        self.classes = classes
        self._override = {raw: token for token, raws in overrides.items() for raw in raws}
        self._regex: dict[str, str] = {}
        self._stems: dict[str, str] = {}
        self._verb_group = self.words(verb_group)
        self._breakers = self.words(phrase_breakers) | {CLAUSE, END}
        self._merge = re.compile(r"(?<![^ ])(?:" + "|".join(
            f"(?:{self.compile(t)})" for t in merged_terms) + ")")

    def stem(self, word: str) -> str:
        """The token of one raw word (parts of a merged `a_b` name stemmed one by one)."""
        token = self._stems.get(word)
        if token is None:
            token = "_".join(self._override.get(part) or stem(part) for part in word.split("_"))
            self._stems[word] = token
        return token

    def stems(self, words: Iterable[str]) -> list[str]:
        return [self.stem(w) for w in words]

    def sentences(self, text: str) -> list[Sentence]:
        """The reply's sentences, tokenised, with merged terms joined by `_`."""
        out: list[Sentence] = []
        for raw in _SENTENCE_END.split(text):
            words = _WORD.findall(_CLAUSE_MARK.sub(" , ", _expand(raw)).replace("'", " "))
            joined = self._merge.sub(lambda m: m.group(0).rstrip().replace(" ", "_") + " ",
                                     " ".join(self.stems(words)) + " ")
            tokens = tuple(t for t in joined.split(" ") if t)
            while tokens and tokens[0] == CLAUSE:
                tokens = tokens[1:]
            if not tokens:
                continue
            tokens += (END,)
            starts, offset = [], 0
            for token in tokens:
                starts.append(offset)
                offset += len(token) + 1
            out.append(Sentence(raw, tokens, " ".join(tokens) + " ", tuple(starts)))
        return out

    def words(self, name: str) -> frozenset[str]:
        """The one-token entries of a class (with its sub-classes), stemmed: for set tests."""
        out: set[str] = set()
        for entry in self.classes[name]:
            if entry.startswith("{") and entry.endswith("}") and " " not in entry:
                out |= self.words(entry[1:-1])
            elif " " not in entry:
                out.update(self.stems(entry.split("|")))
        return frozenset(out)

    def class_regex(self, name: str) -> str:
        if name not in self._regex:
            if name not in self.classes:
                raise KeyError(f"unknown word class {name!r}")
            self._regex[name] = ""  # a class that refers to itself matches nothing there
            entries = sorted((self.compile(e) for e in self.classes[name]), key=len, reverse=True)
            self._regex[name] = "(?:" + "|".join(entries) + ")"
        return self._regex[name]

    def _gap(self, kind: str, n: int) -> str:
        if kind == "~":
            token = r"(?!\. )[^ ]+"
        elif kind == "^":
            token = r"(?!" + _alternation(self._breakers) + r" )[^ ]+"
        else:
            token = _alternation(self._verb_group)
        return f"(?:{token} ){{0,{n}}}"

    def compile(self, template: str) -> str:
        """Regex for a template; each element consumes its tokens and their trailing space."""
        parts: list[str] = []
        for element in _elements(template):
            optional = element.endswith("?") and len(element) > 1
            element = element[:-1] if optional else element
            if element[0] in "~^*" and element[1:].isdigit():
                parts.append(self._gap(element[0], int(element[1:])))
                continue
            if element.startswith("(") and element.endswith(")"):
                body = "(?:" + "|".join(self.compile(t) for t in _top_level(element[1:-1])) + ")"
            elif element.startswith("{") and element.endswith("}"):
                body = self.class_regex(element[1:-1])
            else:
                body = "(?:" + "|".join(re.escape(w) + " " for w in self.stems(element.split("|"))) + ")"
            parts.append(f"(?:{body})?" if optional else body)
        return "".join(parts)

    def pattern(self, template: str) -> "re.Pattern[str]":
        return re.compile(r"(?<![^ ])" + self.compile(template))
