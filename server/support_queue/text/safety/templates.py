"""Word-class templates for the Support Queue safety rules (compiled to regular expressions).

Text is first cut into tokens by server/support_queue/text/safety/clauses.py: stems of lower-case
words, `,` where a clause breaks, `.` at the end of each sentence, with some multi-word
terms merged into one token (`error_cod`, `credit_card`, `not_requir`). A *template* is a
space-separated sequence of elements, each matching whole tokens:
- `word` or `w1|w2|w3`: one word (stemmed like the text; `a_b` names a merged term);
- `(sign in|log in|login)`: one of several sub-templates (phrases);
- `{CLASS}`: any entry of a word class (entries are templates themselves);
- any element followed by `?` is optional;
- `~N`: up to N tokens of any kind within the sentence;
- `^N`: up to N tokens inside one noun phrase (no clause mark, no preposition);
- `*N`: up to N words of a verb group (auxiliaries, modals, adverbs, pronouns);
- `@N`: up to N tokens of one subject, prepositional phrases included (no clause mark and
  no finite verb: "a refund *for the full amount* is on its way");
- `%N`: up to N tokens of one clause (no clause mark and no word that opens a subordinate
  clause: "forward it *on to me together with* the password", not "share the error you see
  *after* entering the code").
A template compiles to a regular expression over the tokens joined by spaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate

from ..words import stem

CLAUSE = ","
END = "."
GAPS = "~^*@%"


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

    STEM_MEMORY = 50_000
    """Stems remembered at most (forgotten all at once past it, between replies)."""

    def __init__(
        self,
        classes: Mapping[str, Sequence[str]],
        overrides: Mapping[str, Sequence[str]],
        merged_terms: Sequence[str],
        verb_group: str,
        phrase_breakers: str,
        subject_breakers: str | None = None,
        clause_openers: str | None = None,
        common_words: str | None = None,
    ) -> None:
        self.classes = classes
        self._override = {raw: token for token, raws in overrides.items() for raw in raws}
        self._regex: dict[str, str] = {}
        self._stems: dict[str, str] = {}
        self._pasts: set[str] = set()  # the words of `_stems` that are regular past forms
        self._ings: set[str] = set()  # and those that are "-ing" forms
        self._verb_group = self.words(verb_group)
        self._breakers = self.words(phrase_breakers) | {CLAUSE, END}
        self._subject_breakers = (
            self.words(subject_breakers) if subject_breakers else frozenset()
        ) | {CLAUSE, END}
        self._clause_breakers = (self.words(clause_openers) if clause_openers else frozenset()) | {
            CLAUSE,
            END,
        }
        self._function_words = (
            self._verb_group
            | self._breakers
            | (self.words(common_words) if common_words else frozenset())
        )
        by_start: dict[str, list[str]] = {}
        for term in merged_terms:
            first = self.starts(term)
            if first is None:
                raise ValueError(f"merged term {term!r} must start with a word")
            for token in first:
                by_start.setdefault(token, []).append(f"(?:{self.compile(term)})")
        self._merge = {
            token: re.compile("|".join(sorted(alternatives, key=len, reverse=True)))
            for token, alternatives in by_start.items()
        }

    def forget_when_full(self) -> None:
        """Forget the remembered stems (and their past and "-ing" forms) once there are more than
        `STEM_MEMORY` of them: every word a reply brings is remembered, so without this
        replies of made-up words would grow the process's memory without end. Called between
        replies (clauses.py `read`), never inside one, so a reply's stems and past forms always
        come from one memory."""
        if len(self._stems) > self.STEM_MEMORY:
            self._stems.clear()
            self._pasts.clear()
            self._ings.clear()

    def stem(self, word: str) -> str:
        """The token of one raw word (parts of a merged `a_b` name stemmed one by one)."""
        token = self._stems.get(word)
        if token is None:
            token = "_".join(self._override.get(part) or stem(part) for part in word.split("_"))
            if word.endswith("ed") and not token.endswith("ed"):
                self._pasts.add(word)
            elif word.endswith("ing") and not token.endswith("ing"):
                self._ings.add(word)
            self._stems[word] = token
        return token

    def stems(self, words: Iterable[str]) -> list[str]:
        known = self._stems.get
        return [known(w) or self.stem(w) for w in words]

    def past_forms(self, words: list[str]) -> list[bool]:
        """Per word (each stemmed already), whether it is a regular past form: its token lost
        the "-ed" ("pasted", "shared"); [] when none is (the common case, in one set test)."""
        pasts = self._pasts
        return [] if pasts.isdisjoint(words) else [w in pasts for w in words]

    def ing_forms(self, words: list[str]) -> list[bool]:
        """Per word (each stemmed already), whether it is an "-ing" form whose token lost the
        "-ing" ("sharing", "including"); [] when none is."""
        ings = self._ings
        return [] if ings.isdisjoint(words) else [w in ings for w in words]

    def merged(self, tokens: list[str]) -> list[str]:
        """`tokens` with each merged term (longest at each start) joined into one token."""
        merge = self._merge
        candidates = [i for i, token in enumerate(tokens) if token in merge]
        if not candidates:
            return tokens
        text = " ".join(tokens) + " "
        offsets = list(accumulate((len(t) + 1 for t in tokens), initial=0))
        out: list[str] = []
        done = 0
        for i in candidates:
            if i < done:
                continue
            match = merge[tokens[i]].match(text, offsets[i])
            if match is not None:
                width = match.group(0).count(" ")  # one space after each token it took
                out += tokens[done:i]
                out.append("_".join(tokens[i : i + width]))
                done = i + width
        return out + tokens[done:]

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
            self._regex[name] = "(?!)"  # a class that refers to itself matches nothing there
            entries = sorted((self.compile(e) for e in self.classes[name]), key=len, reverse=True)
            self._regex[name] = "(?:" + "|".join(entries) + ")"
        return self._regex[name]

    def _gap(self, kind: str, n: int) -> str:
        if kind == "~":
            token = r"(?!\. )[^ ]+"
        elif kind == "^":
            token = r"(?!" + _alternation(self._breakers) + r" )[^ ]+"
        elif kind == "@":
            token = r"(?!" + _alternation(self._subject_breakers) + r" )[^ ]+"
        elif kind == "%":
            token = r"(?!" + _alternation(self._clause_breakers) + r" )[^ ]+"
        else:
            token = _alternation(self._verb_group)
        return f"(?:{token} ){{0,{n}}}"

    def compile(self, template: str) -> str:
        """Regex for a template; each element consumes its tokens and their trailing space."""
        parts: list[str] = []
        for element in _elements(template):
            optional = element.endswith("?") and len(element) > 1
            element = element[:-1] if optional else element
            if element[0] in GAPS and element[1:].isdigit():
                parts.append(self._gap(element[0], int(element[1:])))
                continue
            if element.startswith("(") and element.endswith(")"):
                body = "(?:" + "|".join(self.compile(t) for t in _top_level(element[1:-1])) + ")"
            elif element.startswith("{") and element.endswith("}") and element.count("{") == 1:
                body = self.class_regex(element[1:-1])
            elif "{" in element or "(" in element:
                raise ValueError(
                    f"a class or group inside an alternation of {template!r}: "
                    f"write ({element}) with each alternative whole"
                )
            else:
                body = (
                    "(?:"
                    + "|".join(re.escape(w) + " " for w in self.stems(element.split("|")))
                    + ")"
                )
            parts.append(f"(?:{body})?" if optional else body)
        return "".join(parts)

    def starts(self, template: str) -> frozenset[str] | None:
        """Every token a match of `template` can begin with; None if it can begin anywhere."""
        out: set[str] = set()
        for element in _elements(template):
            optional = element.endswith("?") and len(element) > 1
            element = element[:-1] if optional else element
            if element[0] in GAPS and element[1:].isdigit():
                return None
            first = self._element_starts(element)
            if first is None:
                return None
            out |= first
            if not optional:
                return frozenset(out)
        return None  # every element optional: it can match nothing

    def needs(self, template: str) -> tuple[frozenset[str], ...]:
        """The start sets of the template's required elements: a sentence that lacks every
        token of one of them cannot match (a cheap test that skips most attempts). The set
        with the fewest function words ("we", "the", "is") comes first: it is the rarest."""
        out = []
        for element in _elements(template):
            if element.endswith("?") or (element[0] in GAPS and element[1:].isdigit()):
                continue
            first = self._element_starts(element)
            if first is not None:
                out.append(first)
        return tuple(sorted(out, key=lambda words: (len(words & self._function_words), len(words))))

    def _element_starts(self, element: str) -> frozenset[str] | None:
        if element.startswith("(") and element.endswith(")"):
            alternatives = _top_level(element[1:-1])
        elif element.startswith("{") and element.endswith("}"):
            alternatives = list(self.classes[element[1:-1]])
        else:
            return frozenset(self.stems(element.split("|")))
        out: set[str] = set()
        for alternative in alternatives:
            first = self.starts(alternative)
            if first is None:
                return None
            out |= first
        return frozenset(out)

    def pattern(self, template: str) -> re.Pattern[str]:
        return re.compile(r"(?<![^ ])" + self.compile(template))
