"""Ways to write a text so that it reads the same to a person and differs in code points: the
obfuscations the canonical text (text/canonical.py) must undo, as an adversary applies them."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable


def inside_words(text: str, marks: str) -> str:
    """`marks` (cycled) after every second letter that another letter follows."""
    cycled = itertools.cycle(marks)
    return some_letters(text, lambda char: char + next(cycled))


def some_letters(text: str, replace: Callable[[str], str]) -> str:
    """`replace` applied to every second letter that another letter follows, so every word of
    three letters or more is changed."""
    out = []
    for i, char in enumerate(text):
        inside = char.isalpha() and i + 1 < len(text) and text[i + 1].isalpha() and i % 2
        out.append(replace(char) if inside else char)
    return "".join(out)


def overridden(text: str) -> str:
    """Each line's text reversed under a right-to-left override, so that a screen shows it as
    written. A line's indent stays before the override: a screen's bidi algorithm (UAX #9, L1)
    shows whitespace at a line's end at the line's own level, so an indent reversed into the
    override would show at the line's end instead."""
    lines = []
    for line in text.split("\n"):
        body = line.lstrip()
        indent = line[: len(line) - len(body)]
        lines.append(f"{indent}\u202e{body[::-1]}\u202c" if body else line)
    return "\n".join(lines)


CYRILLIC = str.maketrans(
    "aceopxyijsABCEHIJKMOPSTXY", "асеорхуіјѕАВСЕНІЈКМОРЅТХҮ"
)  # Latin -> Cyrillic look-alikes, as a spoofer picks them
GREEK = str.maketrans("ABEHIKMNOPTXYZoviu", "ΑΒΕΗΙΚΜΝΟΡΤΧΥΖονιυ")


def fullwidth(text: str) -> str:
    return "".join(
        chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text
    )


def math_bold(text: str) -> str:
    def bold(c: str) -> str:
        if "A" <= c <= "Z":
            return chr(0x1D400 + ord(c) - ord("A"))
        if "a" <= c <= "z":
            return chr(0x1D41A + ord(c) - ord("a"))
        return c

    return "".join(map(bold, text))


_WORD = re.compile(r"[^\W\d_]{3,}")


_EVERY_WORD = re.compile(r"[^\W_]+")
"""Every word, so spaced words run into each other ("s e n d u s t h e c o d e"): the
canonical text reads them as the fewest words the letters spell."""


def spaced_out(text: str, parity: int) -> str:
    """The letters of every other word of three or more letters (those at even positions for
    `parity` 0, odd for 1) set apart by spaces, as "p a s s w o r d": two spaced words never
    stand side by side, where a reader could not tell where one ends either."""
    count = -1

    def space(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return " ".join(match.group(0)) if count % 2 == parity else match.group(0)

    return _WORD.sub(space, text)


SMALL_CAPITALS = str.maketrans("abcdefghijklmnoprstuvwyz", "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ")
"""Latin letters -> small capitals (no small capital q or x), as a spoofer picks them."""
ENCLOSED_CAPITALS = {ord(c): chr(0x1F150 + ord(c) - ord("a")) for c in "abcdefghijklmnopqrstuvwxyz"}
"""Lower-case letters -> negative circled capitals ("🅟"), as a fancy-text generator draws them."""
DIGITS_FOR_LETTERS = str.maketrans("aoeis", "40315")
"""The letters a writer of "p4ssw0rd" puts digits for."""


OBFUSCATIONS: dict[str, Callable[[str], str]] = {
    "zero-width spaces": lambda t: inside_words(t, "\u200b"),
    "soft hyphens": lambda t: inside_words(t, "\u00ad"),
    "word joiners": lambda t: inside_words(t, "\u2060"),
    "Cyrillic look-alikes": lambda t: t.translate(CYRILLIC),
    "Greek look-alikes": lambda t: t.translate(GREEK),
    "fullwidth letters": fullwidth,
    "mathematical bold": math_bold,
    "all at once": lambda t: inside_words(fullwidth(t.translate(CYRILLIC)), "\u200b\u00ad\u2060"),
    "spaced-out letters (even words)": lambda t: spaced_out(t, 0),
    "spaced-out letters (odd words)": lambda t: spaced_out(t, 1),
    "spaced-out letters (every word)": lambda t: _EVERY_WORD.sub(lambda m: " ".join(m[0]), t),
    "accents added": lambda t: some_letters(t, lambda c: c + "\u0301"),
    "small capitals": lambda t: t.translate(SMALL_CAPITALS),
    "character references": lambda t: some_letters(t, lambda c: f"&#{ord(c)};"),
    "inline tags": lambda t: some_letters(t, lambda c: f"<b></b>{c}"),
    "HTML comments": lambda t: some_letters(t, lambda c: f"{c}<!-- -->"),
    "Markdown emphasis inside words": lambda t: some_letters(t, lambda c: f"**{c}**"),
    "enclosed capitals": lambda t: t.translate(ENCLOSED_CAPITALS),
    "parenthesized letters": lambda t: some_letters(
        t, lambda c: chr(0x249C + ord(c) - ord("a")) if "a" <= c <= "z" else c
    ),
    "right-to-left override": overridden,
    "all capitals": str.upper,
}
"""Each obfuscation an adversary can apply to a whole text, by name."""
