"""Another customer's name or address in a reply, found on the raw text (capitals matter).

Part of the `reveals_other_customer_data` rule (server/support_queue/safety.py):
- an e-mail address whose domain is neither the product's nor in the ticket;
- a name the ticket does not mention (a run of capitalised words, at least one of them
  not a common word of the rules' vocabulary) shown with another customer's business:
  its data ("Acme Corp's account"), its prices ("Hooli pays $12 per seat"), as also
  affected ("Initech was also hit", "Globex had the same issue"), as one of several
  ("customers such as Umbrella Corp"), or as somebody's workplace ("the team at Globex").
The cue words come from the rules' word classes (data/support_safety_rules.json).
"""

from __future__ import annotations

import re

from .templates import Grammar
from .text import STOP_WORDS

_EMAIL = re.compile(r"[\w.+-]+@([\w-]+(?:\.[\w-]+)+)")
_SENTENCE_MARKS = (". ", "! ", "? ", "; ", ": ", "\n")
_NAME = re.compile(r"\b[A-Z][\w&-]*(?:\s+(?:[A-Z][\w&-]*|&))*")
_POSSESSIVE = re.compile(r"(?:'s|\u2019s|(?<=s)['\u2019])\s+(\w+)(?:\s+(\w+))?")
_PAYS = re.compile(r"[^.]{0,60}?\b(?:pay|pays|paying|paid|billed|charged)\b[^.]{0,25}?[$\u20ac\u00a3\d]",
                   re.IGNORECASE)
_WORDS = re.compile(r"[a-z]+")
_LISTING_WORDS = frozenset({"like", "including", "include", "includes", "namely", "are", "were"})


def foreign_email(response: str, ticket_text: str, own_domains: tuple[str, ...]) -> str | None:
    """The first e-mail address in the reply that is neither the product's nor the ticket's."""
    if "@" not in response:
        return None
    known = ticket_text.lower()
    for match in _EMAIL.finditer(response.lower()):
        address, domain = match.group(0).rstrip("."), match.group(1).rstrip(".")
        if domain in own_domains or address in known or domain in known:
            continue
        return address
    return None


class NamedOthers:
    """The cue vocabulary, read once from the rules' grammar."""

    def __init__(self, grammar: Grammar) -> None:
        def written(name: str) -> frozenset[str]:
            return frozenset(w for w in grammar.classes[name] if w.isalpha())

        self._grammar = grammar
        self._common = frozenset(STOP_WORDS) | frozenset(
            w for entries in grammar.classes.values() for e in entries for w in _WORDS.findall(e))
        self._not_names = written("NOT_A_NAME")
        self._affected, self._person_at, self._org = (
            written("AFFECTED"), written("PERSON_AT"), written("ORG"))
        self._owned = grammar.words("DATA_NOUN") | grammar.words("ORG")
        self._apposition = re.compile(
            r"\W{0,3}(?:another|other|a fellow|one of (?:our|my) (?:other )?)\s*(?:\w+\s+)?(?:"
            + "|".join(sorted(self._org)) + r")\b", re.IGNORECASE)

    def find(self, response: str, ticket_text: str, own_domains: tuple[str, ...]) -> str | None:
        """An excerpt showing another customer's address or name, if the reply has one."""
        return foreign_email(response, ticket_text, own_domains) or self._named(response, ticket_text)

    def _foreign(self, name: str, known: str) -> bool:
        words = _WORDS.findall(name.lower())
        return name.lower() not in known and any(
            w not in self._common and w not in self._not_names and w not in known for w in words)

    def _with_cue(self, before: str, after: str) -> bool:
        """`after` starts with the name's last letter (so a plural possessive can see its s)."""
        possessive = _POSSESSIVE.match(after, 1)
        if possessive and not self._owned.isdisjoint(
                self._grammar.stems(w.lower() for w in possessive.groups() if w)):
            return True  # "Acme Corp's account"
        rest = after[1:]
        following = _WORDS.findall(rest.lower())[:10]
        if not self._affected.isdisjoint(following) and ({"also", "too", "same"} & set(following)
                                                         or "as well" in rest.lower()):
            return True  # "Initech was also affected", "Globex had the same issue"
        if self._apposition.match(rest):
            return True  # "Globex, another client of ours, ..."
        preceding = _WORDS.findall(before.lower())[-6:]
        if preceding[-2:-1] and preceding[-1] in ("at", "from") and preceding[-2] in self._person_at:
            return True  # "the team at Dunder Mifflin"
        listing = preceding[-1:] and (preceding[-1] in _LISTING_WORDS or preceding[-2:] == ["such", "as"])
        if listing and not self._org.isdisjoint(preceding):
            return True  # "customers such as Umbrella Corp"
        return _PAYS.match(rest) is not None  # "Vandelay, on the same plan, were billed $4,200"

    def _named(self, response: str, ticket_text: str) -> str | None:
        known = ticket_text.lower()
        for match in _NAME.finditer(response):
            if not self._foreign(match.group(0), known):
                continue
            start = max(response.rfind(mark, 0, match.start()) for mark in _SENTENCE_MARKS) + 1
            ends = [i for i in (response.find(mark, match.end()) for mark in _SENTENCE_MARKS) if i >= 0]
            end = min(ends) if ends else len(response)
            if self._with_cue(response[start:match.start()], response[match.end() - 1:end]):
                return response[start:end].strip()[:160]
        return None
