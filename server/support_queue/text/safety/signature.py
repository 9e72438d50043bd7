"""A reply's signature: the lines after its sign-off that name who wrote it.

"Speak soon,\\nRavi at Crestline Insurance" and "Best,\\nMaya Singh\\nBilling & Accounts" name
the agent and the team that wrote the reply, not another customer, so named.py never reads a
name there as someone else's. Only a name may stand there: each signature line is short, has
no digit, address, colon or question, and every word of it is capitalised or a joining word
("at", "of", "&"), none a word that states something of a party ("uses", "paid", "another").
So a disclosure dressed as a signature ("Best,\\nSam\\nAcme Corp Uses Okta") stays a
disclosure, and a name the body speaks of is judged where it stands there, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

SIGN_OFFS = (
    "thanks",
    "thank you",
    "thanks again",
    "thanks so much",
    "thank you again",
    "many thanks",
    "thanks and regards",
    "thanks & regards",
    "regards",
    "kind regards",
    "kindest regards",
    "best regards",
    "warm regards",
    "warmest regards",
    "best wishes",
    "warm wishes",
    "all the best",
    "best",
    "cheers",
    "sincerely",
    "yours sincerely",
    "yours truly",
    "yours faithfully",
    "respectfully",
    "take care",
    "speak soon",
    "talk soon",
    "warmly",
    "with thanks",
    "with best wishes",
    "with kind regards",
    "with gratitude",
    "stay safe",
)
"""The closing words a signature follows, on a line of their own or before the name."""

JOINERS = frozenset(
    {"at", "of", "from", "the", "and", "&", "for", "on", "behalf", "via", "in", "with"}
    | {"de", "da", "di", "du", "van", "von", "der", "den", "la", "le", "y", "bin", "al"}
)
"""Lower-case words a name or a team's name may hold ("Ravi at Crestline", "Luis de la Cruz")."""
MAX_WORDS = 6
MAX_LINES = 3

_SIGN_OFF_LINE = re.compile(
    r"^(?:(?:" + "|".join(sorted(map(re.escape, SIGN_OFFS), key=len, reverse=True)) + r")"
    r"[ \t]*[,.!]?|[-\u2013\u2014~]+)[ \t]*(?P<rest>.*)$",
    re.IGNORECASE,
)
_NOT_IN_A_NAME = re.compile(r"[\d@:;?!$\u20ac\u00a3%#*=<>]")
_WORD = re.compile(r"[^\s,|/()\u2013\u2014-]+")


def spans(text: str, stating: frozenset[str]) -> list[tuple[int, int]]:
    """Where the signature's name lines are in `text`, as (start, end) offsets: after each
    line that is or starts with a sign-off, the rest of that line and up to MAX_LINES
    following lines (blank ones skipped), while each is a name line. `stating`: the
    lower-case words that state something of a party, which no name line holds."""
    lines = list(_lines(text))
    found: list[tuple[int, int]] = []
    for index, (start, line) in enumerate(lines):
        sign_off = _SIGN_OFF_LINE.match(line.strip())
        if sign_off is None:
            continue
        rest = sign_off.group("rest")
        if rest:
            if not _name_line(rest, stating):
                continue
            indent = len(line) - len(line.lstrip())
            found.append((start + indent + sign_off.start("rest"), start + len(line)))
        taken = 0
        for following_start, following in lines[index + 1 :]:
            if not following.strip():
                continue
            if taken == MAX_LINES or not _name_line(following, stating):
                break
            found.append((following_start, following_start + len(following)))
            taken += 1
    return _merged(text, found)


def within(spans_found: list[tuple[int, int]], start: int, end: int) -> bool:
    """The text from `start` to `end` lies inside one of the spans."""
    return any(low <= start and end <= high for low, high in spans_found)


def _merged(text: str, found: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans, with those only whitespace apart made one (a name read across the lines:
    "Maya Singh\nLumen Health")."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if out and not text[out[-1][1] : start].strip():
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def _lines(text: str) -> Iterator[tuple[int, str]]:
    offset = 0
    for line in text.split("\n"):
        yield offset, line
        offset += len(line) + 1


def _name_line(line: str, stating: frozenset[str]) -> bool:
    """A line that only names someone, a team or a company."""
    if _NOT_IN_A_NAME.search(line):
        return False
    words = [word.rstrip(".'") for word in _WORD.findall(line)]
    words = [word for word in words if word]
    return (
        0 < len(words) <= MAX_WORDS
        and words[0][:1].isupper()
        and all(word[:1].isupper() or word.lower() in JOINERS for word in words)
        and stating.isdisjoint(word.lower() for word in words)
    )
