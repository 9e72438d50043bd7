r"""The one canonical form of a summary or reply, and its words: computed once per text.

Why: every text signal (the word caps, the echo measure, fact coverage, the safety rules and
the safety model) must read the same text, and that text must be what the customer *reads*,
not the code points an agent typed. Otherwise a reply with a zero-width space inside
"pass\u200bword", a Cyrillic "а" in "pаssword", fullwidth letters or "p a s s w o r d" reads
the same to a person and differently to each check, and a ticket pasted with every space
turned into "-" is one word to the cap and the echo check but every word to fact matching.

`canonical_text(raw)` applies, in this order:
1. *Invisible characters removed*: every format character (Unicode category Cf: zero-width
   space, zero-width (non-)joiner, word joiner, soft hyphen, byte order mark, bidi controls,
   tag characters...) and the other default-ignorable code points of Unicode's
   DerivedCoreProperties.txt (variation selectors, the combining grapheme joiner, Hangul
   fillers, Khmer inherent vowels, Mongolian free variation selectors). They go first, so they
   cannot keep NFKC from composing what they stood between.
2. *Unicode NFKC*: fullwidth, mathematical and circled letters, ligatures ("ﬁ"), no-break and
   other spaces, "…" to their plain forms.
3. *Look-alike letters to Latin*: in a word (a run of letters and digits) whose every
   non-ASCII character has a prototype made only of ASCII letters and digits in Unicode's
   confusables (UTS #39, `confusables.txt`, as shipped by the confusable-homoglyphs
   package), each such character becomes its prototype: Cyrillic "а" -> "a" in "pаsswоrd",
   the all-Cyrillic "сору" -> "copy", Greek "ο" -> "o", "ı" -> "i". A word with a letter that
   has no Latin look-alike is real text in its own script ("привет", "café", "straße") and
   stays as written. ASCII is never mapped (UTS #39 would turn "m" into "rn" and "0" into
   "O"), nor punctuation or symbols (the safety rules read dashes and quotes). A capital keeps
   its case where its prototype's class has a capital (UTS #39 gives "l" for "I", so Cyrillic
   "І" -> "I"). Then NFKC again (a mapped letter may compose with a following accent).
4. *Spaced-out letters joined*: three or more single letters or digits (at least one a
   letter), each separated from the next by the same 1-3 non-alphanumeric characters, are
   one word: "p a s s w o r d", "p-a-s-s", "p.a.s.s", "P  A  S  S", "2 F A" -> "2FA".
   Digits alone are not joined ("1.2.3", "10 0 0 1" stay). A letter after an apostrophe
   belongs to its word ("card's C V C" -> "card's CVC"). A one-letter word ("a", "A", "I")
   at either end of a run stays apart when the rest is a word of the product's lexicon
   (lexicon.py) and the whole is not, as a reader sees it: "a b r e a c h" -> "a breach",
   "g o t a free" -> "got a free", "I am a U S customer" -> "I am a US customer", while
   "A P I", "d a t a" and "a c c o u n t" stay one word. Initials are letters in a run too:
   "J. R. R. Tolkien" -> "JRR. Tolkien".

The result is idempotent: `canonical_text(c.text) == c` (tests/.../text/test_canonical.py).

**The word rule** (one rule, stated here only; the word caps count these words, and the echo
measure and fact coverage read the same ones): *a word is a maximal run of letters and
digits* (Unicode categories L and N, as the playground's `[\p{L}\p{N}]+` counts them), in the
canonical string. Every other character separates words: "sign-in" is two words, "don't"
two, "INV-20417" two, "13:58" two, "j.kim@fernway.example" four, and a ticket pasted with
every space turned into "-" or "." has exactly the ticket's words. (After the spaced-letter
join above, "a,b,c" is the one word "abc".) Identifiers stay in the canonical string as
written ("INV-20417", e-mail addresses, URLs, "13:58", "2.4.1") for the safety rules, which
fold them; fact matching splits them into the same pieces on both sides, so a fact
"INV-20417" still matches "invoice INV-20417".
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from importlib import resources

from .lexicon import lexicon

WORD = re.compile(r"[^\W_]+")
"""The word rule (see the module docstring): a maximal run of letters and digits."""
_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")  # the same rule on an ASCII text, without Unicode tables

_DEFAULT_IGNORABLE_NOT_CF = (
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x115F, 0x1160),  # Hangul choseong/jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180D),  # Mongolian free variation selectors
    (0x180F, 0x180F),
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xE0100, 0xE01EF),  # variation selectors supplement
)
"""Default_Ignorable_Code_Point (DerivedCoreProperties.txt) outside category Cf, which
`unicodedata` has no property for: the rest of that property is Cf or unassigned."""


def _spaced(alnum: str, other: str) -> re.Pattern[str]:
    """Three or more single letters or digits with the same 1-3 other characters between; the
    first not a clitic ("card's C V C": the "s" of "'s", "'d", "'m", "'t" belongs to its word)."""
    single = rf"{alnum}(?!{alnum})"
    return re.compile(
        rf"(?<!{alnum})(?!(?<={alnum}['\u2019])[dmstDMST]){alnum}(?P<sep>{other}{{1,3}}){single}"
        rf"(?:(?P=sep){single})+"
    )


_SPACED = _spaced(r"[^\W_]", r"[\W_]")
_ASCII_SPACED = _spaced("[A-Za-z0-9]", "[^A-Za-z0-9]")
_SEPARATORS = re.compile(r"[\W_]")


def _invisible_table() -> dict[int, None]:
    """Every code point to delete: category Cf (found in planes 0, 1 and 14, the only ones
    that have any) and the default-ignorable ones outside it, tags and reserved included."""
    planes = (*range(0x20000), *range(0xE0000, 0xE1000))
    invisible = {code: None for code in planes if unicodedata.category(chr(code)) == "Cf"}
    for low, high in (*_DEFAULT_IGNORABLE_NOT_CF, (0xE0000, 0xE0FFF)):
        invisible.update(dict.fromkeys(range(low, high + 1)))
    return invisible


def _latin_table() -> dict[int, str]:
    """Non-ASCII character -> its ASCII-letter/digit prototype, from Unicode's confusables.

    confusable-homoglyphs lists each character of confusables.txt with its prototype and each
    prototype with its sources (right-to-left characters wrapped in U+200E); an ASCII letter
    or digit is never a source of a non-ASCII prototype, so the ASCII alphanumeric entry of a
    non-ASCII character is its prototype."""
    source = resources.files("confusable_homoglyphs").joinpath("confusables.json")
    data: dict[str, list[dict[str, str]]] = json.loads(source.read_text(encoding="utf-8"))

    def bare(text: str) -> str:
        return text.strip("\u200e")

    def ascii_alnum(text: str) -> bool:
        return text.isascii() and text.isalnum()

    capital = {  # a lower-case prototype's capital look-alike in its class: "l" -> "I"
        key: entry["c"]
        for key, entries in data.items()
        if ascii_alnum(key) and key.islower()
        for entry in entries
        if ascii_alnum(entry["c"]) and len(entry["c"]) == 1 and entry["c"].isupper()
    }
    table: dict[int, str] = {}
    for key, entries in data.items():
        char = bare(key)
        if len(char) != 1 or char.isascii():
            continue
        prototypes = [bare(e["c"]) for e in entries if ascii_alnum(bare(e["c"]))]
        if len(prototypes) != 1:
            continue
        prototype = prototypes[0]
        if char.isupper():
            prototype = "".join(capital.get(c, c) for c in prototype)
        table[ord(char)] = prototype
    return table


INVISIBLE = _invisible_table()
LATIN = _latin_table()


def _to_latin(match: re.Match[str]) -> str:
    word = match.group(0)
    if word.isascii():
        return word
    mapped = word.translate(LATIN)
    return mapped if mapped.isascii() else word


ONE_LETTER_WORDS = frozenset("aAI")
"""English words of one letter: at either end of a run of spaced letters, a reader may see one."""


def _join_spaced(match: re.Match[str]) -> str:
    """The run as one word, but a one-letter word at either end stays apart when the rest is a
    word of the lexicon and the whole is not: "a b r e a c h" -> "a breach", "g o t a" ->
    "got a", "a U S" -> "a US"; "A P I", "d a t a", "a c c o u n t" stay one word."""
    run = match.group(0)
    if not any(c.isalpha() for c in run):
        return run
    letters, sep = _SEPARATORS.sub("", run), match.group("sep")
    known = lexicon()
    if letters.lower() in known:
        return letters
    first = letters[0] in ONE_LETTER_WORDS
    last = letters[-1] in ONE_LETTER_WORDS
    for head, tail in ((first, False), (False, last), (first, last)):
        if (head or tail) and len(letters) - head - tail >= 2:
            middle = letters[head : len(letters) - tail]
            if middle.lower() in known:
                return sep.join(
                    filter(None, (letters[:head], middle, letters[len(letters) - tail :]))
                )
    return letters


def canonical_string(raw: str) -> str:
    """The canonical form of `raw` (steps 1-4 of the module docstring)."""
    if raw.isascii():
        return _spaced_joined(_ASCII_SPACED, raw)
    text = unicodedata.normalize("NFKC", raw.translate(INVISIBLE))
    mapped = WORD.sub(_to_latin, text)
    if mapped != text:
        text = unicodedata.normalize("NFKC", mapped)
    return _spaced_joined(_ASCII_SPACED if text.isascii() else _SPACED, text)


def _spaced_joined(spaced: re.Pattern[str], text: str) -> str:
    """Step 4 until nothing changes: a one-letter word set apart from a run ("g o t a-b-c" ->
    "got a-b-c") may start the next run ("a-b-c"). Each pass that changes the text joins
    letters, so it shortens it: this ends, and the result is idempotent."""
    joined = spaced.sub(_join_spaced, text)
    while joined != text:
        text, joined = joined, spaced.sub(_join_spaced, joined)
    return joined


def words_of(text: str) -> list[str]:
    """The words of `text` by the word rule."""
    return word_pattern(text).findall(text)


def word_pattern(text: str) -> re.Pattern[str]:
    """The word rule's pattern for `text`: its ASCII form for an ASCII text (faster)."""
    return _ASCII_WORD if text.isascii() else WORD


@dataclass(frozen=True, slots=True)
class CanonicalText:
    """A text as every signal reads it: its canonical string and that string's words."""

    text: str
    words: tuple[str, ...]


def canonical_text(raw: str) -> CanonicalText:
    """Canonicalise `raw` once; everything that grades it reads the result."""
    text = canonical_string(raw)
    return CanonicalText(text, tuple(words_of(text)))


def count_words(raw: str) -> int:
    """Words as the caps count them (the word rule of the module docstring)."""
    return len(canonical_text(raw).words)
