"""The rules of the Support Queue safety check, read from data/support_safety_rules.json.

Each rule is a set of *frames*: a template (server/support_queue/text/safety/templates.py) and the
options that say when a match of it counts (server/support_queue/text/safety/rules.py applies them):
- `verb`: the template starts with the act's verb, so it must stand where a verb can;
- `inner` (default true): a cancelling word of the rule inside the match cancels it, and
  `inner_also` names a class of further words that do so for this frame only;
- `context`: a class of which a word must stand in the sentence or the one before;
- `unless`: a class of which no word may stand in the sentence;
- `antecedent`: a class of which a word must stand before the match (for a pronoun);
- `subject_not`: a class the frame's subject (left of its auxiliaries) must not be in;
- `not_after`: a class the word left of the frame (past adverbs) must not be in;
- `not_followed_by`: a class the next word must not be in (a lookahead, so a longer
  reading of the frame's last element is tried: "the new-device verification emails");
- `stated`: a class of words that, inside the frame's own match, are the act it states, not a
  doubt about it (clear.py): "accessed your data *without* permission", "that charge is
  *fraudulent*";
- `question`: the match must be a whole sentence that ends with a question mark ("Your 2FA
  code?": a noun phrase alone is an ask only as a question of its own);
- `opens`: the match must open its sentence or a clause of it, as a headline does ("Refund
  done.", "Thanks, late fee waived."), not follow a word it could be the object of;
- `direct` (default: the rule's `direct`, itself true by default, unless the frame has a
  `context` or an `antecedent`): a match states the act itself, so with no word of doubt
  in its sentence it is a clear act, which the model may not overrule
  (server/support_queue/text/safety/clear.py). A frame whose clear matches in the
  labelled replies were safe in a fifth or more of them (at least two safe) is marked
  `"direct": false` (a time that is a fact, "it's resolved, codes arrive within seconds";
  a consequence, "auto-renew is off, so you won't be charged again"; an agent passing
  details to its own team; billing's decision reported, "your refund has been approved";
  a plan's own term, "your price stays the same for twelve months"): its matches are the
  model's to confirm. A frame that asks for a secret ("your CVV is required to proceed",
  "the code should be sent to us") or confirms an identity stays direct whatever its count:
  the model scores some of those asks under `confirm`.
A rule's own keys are its scope (server/support_queue/text/safety/scope.py), the words or templates
that cancel all its frames after a match (`after_cancel`, `verb_after_cancel`) or in its
sentence (`sentence_cancel`), and `requests_only`: its verbs must stand where a request's
verb does (not after a noun subject: "if the breach included your key"); `statement_after`
and `statement_subject`: words after which a frame's verb states what was done rather than
asks for it, before the verb ("if you've *already* shared it") or, for a verb in the past
tense (a regular "-ed" form, or one of the grammar's `PAST_FORM`), as its subject ("delete
the message where *you* pasted the card number") unless a word of `unreal_past` stands just
before that subject (a past that is a wish or a condition asks: "it would help *if* you sent
it"); `doubt`: words
that keep a match from being a clear act wherever they stand in its sentence, besides the
cancelling ones (clear.py: "we offer a *standard* discount"); `doubt_in_clause`: those
words (and the cancelling ones) keep a match from being a clear act only inside its clause
when a clause mark and a contrast word open it or a clause mark and a result word close it
("normally there's a fee, *but* I've waived it, *so* you can cancel"); `topic`: the words
or templates of what the rule is about (a secret, a security control, money or a fix), one
of which a piece the model flags on its own must hold to be flagged under that rule
(verdict.py: "We will." is no promise, however the model scores it); `history`: a match
whose verb is in the past tense, with a subject other than the speaker, in a clause that dates
it ("billing approved the refund *on Tuesday*", the grammar's `DATED`), is the account's
history as the agent reads it, not a clear act (clear.py): the model confirms it or not; `menu_labels`: a match
that follows a step of a menu path or holds one ("Settings > Webhooks > Reveal signing
secret", read as `menupath`: clauses.py) is the label of a place in the product, not an act;
`place_cancel`: templates that, in its sentence, put the secret in the product ("confirm with
your PIN", "paste it when prompted"); like a menu label, they cancel only a match that does
not name us as its hearer or destination ("When prompted, paste your password in this chat");
`withholds_model`: templates (or `true`: those of its `sentence_cancel`) that keep a piece
of a reply from being the model's own hit under the rule (verdict.py: "if billing approves
it, you'll get a refund" is no promise, however the model scores it).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .scope import Scope
from .templates import Grammar


@dataclass(frozen=True)
class Frame:
    pattern: LazyPattern
    needs: tuple[frozenset[str], ...]
    starts: frozenset[str] | None
    inner: bool
    verb: bool
    context: LazyPattern | None
    unless: LazyPattern | None
    antecedent: LazyPattern | None
    subject_not: frozenset[str]
    inner_also: frozenset[str]
    not_after: frozenset[str]
    direct: bool
    question: bool = False
    opens: bool = False
    stated: frozenset[str] = frozenset()


@dataclass(frozen=True)
class UnsafeRule:
    name: str
    description: str
    frames: tuple[Frame, ...]
    scope: Scope
    inner_cancel: frozenset[str]
    after_cancel: re.Pattern[str] | None
    verb_after_cancel: re.Pattern[str] | None
    sentence_cancel: re.Pattern[str] | None
    statement_after: frozenset[str]
    statement_subject: frozenset[str]
    unreal_past: frozenset[str]
    requests_only: bool
    doubt: frozenset[str]
    doubt_in_clause: bool = False
    topic: LazyPattern | None = None
    menu_labels: bool = False
    place_cancel: re.Pattern[str] | None = None
    withholds_model: re.Pattern[str] | None = None
    history: bool = False


def _words(grammar: Grammar, entries: list[str]) -> frozenset[str]:
    out: set[str] = set()
    for entry in entries:
        if entry.startswith("{") and entry.endswith("}"):
            out |= grammar.words(entry[1:-1])
        else:
            out.update(grammar.stems(entry.split("|")))
    return frozenset(out)


class LazyPattern:
    """A regular expression compiled the first time it is used. A frame's pattern spells out
    whole word classes, so compiling all of them costs about 9 s of CPU per process, while a
    reply only ever tries the frames whose words it holds (`index_frames`): each process pays
    for the frames its replies reach. Two threads that reach one at once may both compile it;
    either result is the same pattern."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        found = self._compiled
        if found is None:
            found = self._compiled = re.compile(self.pattern)
        return found

    def match(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().match(text, pos, endpos)

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(text, pos, endpos)


def any_of(
    grammar: Grammar, templates: list[str], anchored: bool = False
) -> re.Pattern[str] | None:
    source = _any_of_source(grammar, templates, anchored)
    return None if source is None else re.compile(source)


def _any_of_source(grammar: Grammar, templates: list[str], anchored: bool = False) -> str | None:
    if not templates:
        return None
    body = "|".join(f"(?:{grammar.compile(t)})" for t in templates)
    return ("" if anchored else r"(?<![^ ])") + f"(?:{body})"


def _lazy_any_of(grammar: Grammar, templates: list[str]) -> LazyPattern | None:
    source = _any_of_source(grammar, templates)
    return None if source is None else LazyPattern(source)


def _frame(grammar: Grammar, raw: Any, direct: bool) -> Frame:
    spec = {"template": raw} if isinstance(raw, str) else raw
    optional = {
        key: _lazy_any_of(grammar, ["{" + spec[key] + "}"]) if key in spec else None
        for key in ("context", "unless", "antecedent")
    }
    template = spec["template"]
    sets = {
        key: grammar.words(spec[key]) if key in spec else frozenset()
        for key in ("subject_not", "inner_also", "not_after", "stated")
    }
    # a frame may refuse a next word ("work around TLS *errors*": the control only modifies
    # the noun); as a lookahead, so that a longer reading of its last element is tried
    refused = grammar.words(spec["not_followed_by"]) if "not_followed_by" in spec else ()
    lookahead = "(?!(?:" + "|".join(map(re.escape, sorted(refused))) + ") )" if refused else ""
    pattern = LazyPattern(r"(?<![^ ])" + grammar.compile(template) + lookahead)
    inferred = "context" in spec or "antecedent" in spec
    return Frame(
        pattern,
        grammar.needs(template),
        grammar.starts(template),
        spec.get("inner", True),
        spec.get("verb", False),
        **sets,
        **optional,
        direct=spec.get("direct", direct and not inferred),
        question=spec.get("question", False),
        opens=spec.get("opens", False),
    )


def _rule(grammar: Grammar, raw: dict[str, Any]) -> UnsafeRule:
    def classes(key: str) -> frozenset[str]:
        return grammar.words(raw[key]) if key in raw else frozenset()

    sentence_cancel = any_of(grammar, raw.get("sentence_cancel", []))
    withholds = raw.get("withholds_model")
    return UnsafeRule(
        name=raw["name"],
        description=raw["description"],
        frames=tuple(_frame(grammar, f, raw.get("direct", True)) for f in raw["frames"]),
        scope=Scope(
            cancel=_words(grammar, raw["cancel"]),
            chain=_words(grammar, raw["chain"]),
            subject_cancel=classes("subject_cancel"),
            subject_keeps=classes("subject_keeps"),
            subject_only=_words(grammar, raw.get("subject_only", [])),
            clause_cancel=_words(grammar, raw.get("clause_cancel", [])),
            condition_subject=raw.get("condition_subject", False),
            contrasts=grammar.words("CONTRAST"),
            determiners=grammar.words("DET"),
            subordinators=grammar.words("SUBORDINATOR"),
        ),
        inner_cancel=_words(grammar, raw.get("inner_cancel", ["{NEG}"])),
        after_cancel=any_of(grammar, raw.get("after_cancel", []), anchored=True),
        verb_after_cancel=any_of(grammar, raw.get("verb_after_cancel", []), anchored=True),
        sentence_cancel=sentence_cancel,
        statement_after=_words(grammar, raw.get("statement_after", [])),
        statement_subject=_words(grammar, raw.get("statement_subject", [])),
        unreal_past=_words(grammar, raw.get("unreal_past", [])),
        requests_only=raw.get("requests_only", False),
        doubt=_words(grammar, raw.get("doubt", [])),
        doubt_in_clause=raw.get("doubt_in_clause", False),
        topic=_lazy_any_of(grammar, raw.get("topic", [])),
        menu_labels=raw.get("menu_labels", False),
        history=raw.get("history", False),
        place_cancel=any_of(grammar, raw.get("place_cancel", [])),
        # its own templates, or `true`: its sentence cancels' (compiled once for both)
        withholds_model=(
            sentence_cancel if withholds is True else any_of(grammar, withholds or [])
        ),
    )


def load_rules(path: Path) -> tuple[Grammar, tuple[UnsafeRule, ...]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    grammar = Grammar(
        data["classes"],
        data["stem_overrides"],
        data["merged_terms"],
        verb_group="VERB_GROUP",
        phrase_breakers="PREP",
        subject_breakers="FINITE",
        clause_openers="CLAUSE_OPENER",
        common_words="COMMON_WORD",
    )
    return grammar, tuple(_rule(grammar, r) for r in data["rules"])


def index_frames(rules: tuple[UnsafeRule, ...]) -> Mapping[str, tuple[tuple[int, int], ...]]:
    """Each word -> the (rule, frame) numbers whose rarest required element can start with it."""
    index: dict[str, list[tuple[int, int]]] = {}
    for rule_number, rule in enumerate(rules):
        for frame_number, frame in enumerate(rule.frames):
            if not frame.needs:
                raise ValueError(f"{rule.name}: frame {frame_number} has no required word")
            for word in frame.needs[0]:
                index.setdefault(word, []).append((rule_number, frame_number))
    return MappingProxyType({word: tuple(numbers) for word, numbers in index.items()})
