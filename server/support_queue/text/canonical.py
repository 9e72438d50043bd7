r"""The one canonical form of a summary or reply, and its words: computed once per text.

Why: every text signal (the word caps, the echo measure, fact coverage, the safety rules and
the safety model) must read the same text, and that text must be what the customer *reads*,
not the code points an agent typed. Otherwise a reply with a zero-width space inside
"pass\u200bword", a Cyrillic "а" in "pаssword", fullwidth letters or "p a s s w o r d" reads
the same to a person and differently to each check, and a ticket pasted with every space
turned into "-" is one word to the cap and the echo check but every word to fact matching.

`canonical_text(raw)` applies, in this order:
0. *Read as displayed*: the inline HTML tags and comments a mail client renders without a
   trace (`<b>`, `<span ...>`, `<font>`, `<wbr>`, `<!-- -->`...) and pairs of Markdown
   emphasis or code marks around letters inside a word ("f**u**ll", "**re**fund") are removed
   and character references read ("&#97;" -> "a", "&shy;" -> a soft hyphen, removed next),
   until nothing changes, so "pass<b></b>word", "pass<!-- -->word" and "p&#97;ssword" are
   "password"; a line with explicit bidi formatting (embeddings, overrides, isolates:
   U+202A-U+202E, U+2066-U+2069) is read in the order it is displayed, by Unicode's bidi
   algorithm (UAX #9, python-bidi), nested levels and all, and without those characters:
   "\u202edrowssap ruoy dnes" is "send your password", and so is "\u202edrowssap
   \u202byour\u202c dnes" (an embedding inside the override).
1. *Invisible characters removed*: every format character (Unicode category Cf: zero-width
   space, zero-width (non-)joiner, word joiner, soft hyphen, byte order mark, bidi controls,
   tag characters...) and the other default-ignorable code points of Unicode's
   DerivedCoreProperties.txt (variation selectors, the combining grapheme joiner, Hangul
   fillers, Khmer inherent vowels, Mongolian free variation selectors). They go first, so they
   cannot keep NFKC from composing what they stood between.
   With them, letters drawn in forms that neither NFKC nor UTS #39 reads as Latin become their
   letters, by their Unicode names: small capitals ("ᴘᴀꜱꜱᴡᴏʀᴅ"), parenthesized letters ("⒫")
   and enclosed capitals ("🅟", "🇵").
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
5. *Disguised words read as the word a reader sees*, each only where the result is a word of
   the lexicon and what was written is not, so names, codes and identifiers stay as written:
   - accents added to Latin letters (combining marks, "pásswórd", "t́he"): the letters
     without their marks, where they are a word, where marks sit on two letters or more, or
     where one composes with no letter ("Évérǵréen", "2F́A"); "café" and "José" stay (read
     before step 4 and again after it, so a spaced-out word's accents are read too);
   - letters written as digits or signs ("p4ssw0rd", "r3fund", "p@$$word": 0 o, 1 i or l,
     3 e, 4 a, 5 s, 7 t, 9 g, @ a, $ s) in a run of four or more with no more signs than
     letters ("ID3", "100k", "14B" stay codes), or a lower-case run of two or three with one
     ("0n", "w4y"; "v3" stays), in no dotted or slashed identifier ("v4.12.1", "/v3/");
   - a word cut in two by one space or line break ("ref und", "corr\nected"): the two
     halves, at least one of which is no word in any inflection ("be caused" is no
     "becaused"), joined into a word, where their case is one word's
     ("Hi Jack" is no "hijack", "AD just" no "ADjust") and no apostrophe touches them
     ("they're stored" is no "restored").

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

import html
import itertools
import json
import re
import unicodedata
from dataclasses import dataclass
from importlib import resources

from bidi import get_display

from .lexicon import (
    READ_AS_TOKENS,
    is_word,
    is_word_form,
    known_words,
    lexicon,
    reader_words,
    word_costs,
)

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


_LETTER_FORM = re.compile(
    r"(LATIN LETTER SMALL CAPITAL|PARENTHESIZED LATIN SMALL LETTER|REGIONAL INDICATOR SYMBOL "
    r"LETTER|NEGATIVE (?:CIRCLED|SQUARED) LATIN CAPITAL LETTER) ([A-Z])"
)
"""Unicode names of letters drawn in another form that NFKC and UTS #39 do not read as Latin:
small capitals ("ꜱ"), parenthesized letters ("⒫", which NFKC would make "(p)"), and the
enclosed capitals of fancy-text generators ("🅟", "🇵")."""


def _letter_forms() -> dict[int, str]:
    """Each letter drawn in one of `_LETTER_FORM`'s forms -> its Latin letter (a small or
    parenthesized one lower case, an enclosed capital upper case)."""
    table: dict[int, str] = {}
    for code in (*range(0x10000), *range(0x1F100, 0x1F200)):
        found = _LETTER_FORM.fullmatch(unicodedata.name(chr(code), ""))
        if found:
            small = "SMALL" in found.group(1)
            table[code] = found.group(2).lower() if small else found.group(2)
    return table


INVISIBLE = _invisible_table()
LATIN = _latin_table()
_UNSEEN_AND_DRAWN = {**INVISIBLE, **_letter_forms()}
"""Step 1's deletions and the letters drawn in other forms, read in one pass before NFKC."""


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
    after_apostrophe = match.string[match.start() - 1 : match.start()] in ("'", "\u2019")
    if letters.lower() in known:
        if _written(letters.lower()):
            return letters
        # a word only the rules' data holds ("emailaddress", a token the rules fold an address
        # into) is no word a reader sees in "e m a i l a d d r e s s": words it spells are
        return sep.join(_segmented(letters, after_apostrophe))
    first = letters[0] in ONE_LETTER_WORDS
    last = letters[-1] in ONE_LETTER_WORDS
    for head, tail in ((first, False), (False, last), (first, last)):
        if (head or tail) and len(letters) - head - tail >= 2:
            middle = letters[head : len(letters) - tail]
            if middle.lower() in known:
                return sep.join(
                    filter(None, (letters[:head], middle, letters[len(letters) - tail :]))
                )
    return sep.join(_segmented(letters, after_apostrophe))


def _written(word: str) -> bool:
    """A word people write: in the product's prose or the reader's words (lexicon.py)."""
    return (word in word_costs()[0] or word in reader_words()) and word not in READ_AS_TOKENS


SHORT_WORDS = frozenset(
    ["a", "i", "to", "me", "us", "it", "in", "on", "of", "is", "my", "we", "be", "do", "an"]
    + ["at", "or", "if", "so", "no", "up", "by", "go", "as", "he", "ok", "id", "ip", "dm", "pm"]
)
"""The words of one or two letters a run of spaced letters may be read as holding."""
CONTRACTION_TAILS = frozenset({"s", "t", "d", "m", "ll", "ve", "re"})
"""What follows an apostrophe in a contraction ("we'll"): the first word of a run after one."""
SEGMENTED_LONGEST = 160
"""Longer runs of spaced letters are joined whole."""
PIECE_LONGEST = 24
"""The longest word a run is read as holding (so the reading takes linear time)."""
_NUMBER_PIECE = re.compile(r"\d+(?:fa|am|pm|st|nd|rd|th|k|kb|mb|gb|tb|ms|h|d|x)?")
"""Digits, or digits and a unit or acronym ("6", "2fa", "10am", "5gb"), as one word of a run."""
_NAME_PIECE = re.compile(r"[A-Z][a-z]{2,11}")


def _segmented(letters: str, after_apostrophe: bool = False) -> list[str]:
    """A run of spaced letters that is no word, as the likeliest words it spells in order
    (lexicon.py `word_costs`, a unigram model of the product's prose): known words of three
    letters or more, `SHORT_WORDS` and numbers ("r e c o v e r y c o d e" -> "recovery",
    "code"; "s e n d u s y o u r 2 F A c o d e" -> "send", "us", "your", "2FA", "code";
    "a c c o u n t s o w e" -> "account", "so", "we"), and capitalised names where no known
    words spell them ("M a r i a L o p e z": "Maria", "Lopez"), with the letters' own case; or
    whole, as one run, when no such reading spells all of it ("a q z x"). After an apostrophe
    the run may start with a contraction's tail ("we' l l s e n d" -> "ll", "send")."""
    lower = letters.lower()
    if len(lower) > SEGMENTED_LONGEST:
        return [letters]
    best: list[tuple[float, int] | None] = [(0.0, 0)] + [None] * len(lower)  # (cost, start)
    for end in range(1, len(lower) + 1):
        for start in range(max(0, end - PIECE_LONGEST), end):
            if start == 0 and end == len(lower):
                continue  # the run as one word: its callers have weighed that
            before = best[start]
            cost = None if before is None else _piece_cost(letters, start, end, after_apostrophe)
            if cost is not None and (best[end] is None or before[0] + cost < best[end][0]):
                best[end] = (before[0] + cost, start)
    if best[-1] is None:
        return [letters]
    pieces, end = [], len(lower)
    while end:
        start = best[end][1]
        pieces.append(letters[start:end])
        end = start
    return pieces[::-1]


def _piece_cost(letters: str, start: int, end: int, after_apostrophe: bool) -> float | None:
    """How unlikely `letters[start:end]` is as one word of its run, or None if it can't be
    one: a known word costs what the prose says, a number or a contraction's tail as little as
    a common word, a name more than any word the prose never uses."""
    piece = letters[start:end].lower()
    costs, unseen = word_costs()
    if piece in SHORT_WORDS or (
        len(piece) > 2 and piece in known_words() and piece not in READ_AS_TOKENS
    ):
        return costs.get(piece, unseen)
    if _NUMBER_PIECE.fullmatch(piece) or (
        start == 0 and after_apostrophe and piece in CONTRACTION_TAILS
    ):
        return costs.get("the", unseen)
    at_a_capital = end == len(letters) or letters[end].isupper()
    if at_a_capital and _NAME_PIECE.fullmatch(letters[start:end]):
        return 2 * unseen
    return None


def canonical_string(raw: str) -> str:
    """The canonical form of `raw` (steps 0-5 of the module docstring). The later steps can
    make markup step 0 reads ("<b\u200b>" is a tag once the invisible character is gone,
    "ᴘ**a**" an emphasis inside a word once "ᴘ" is "p"), so the steps run again until step 0
    finds nothing; each run that repeats removes markup, so this ends, and after
    `DISPLAY_PASSES` runs what markup is left is dropped (so a hostile text costs a bounded
    number of passes, and the result is still idempotent)."""
    text = _read_from_step_one(_as_displayed(raw))
    for _ in range(DISPLAY_PASSES):
        shown = _as_displayed(text)
        if shown == text:
            return text
        text = _read_from_step_one(shown)
    return _read_from_step_one(_without_display_marks(text))


def _read_from_step_one(raw: str) -> str:
    """Steps 1-5 on a text step 0 has read."""
    if raw.isascii():
        return _disguises_read(_spaced_joined(_ASCII_SPACED, raw))
    text = unicodedata.normalize("NFKC", raw.translate(_UNSEEN_AND_DRAWN))
    mapped = WORD.sub(_to_latin, text)
    if mapped != text:
        text = unicodedata.normalize("NFKC", mapped)
    if not text.isascii():  # before the join ("a a̶ a" is three letters) and after it
        text = _MARKED_WORD.sub(_unmarked, text)  # ("p á s s" is one word with one accent)
    text = _spaced_joined(_ASCII_SPACED if text.isascii() else _SPACED, text)
    if not text.isascii():
        text = _MARKED_WORD.sub(_unmarked, text)
    return _disguises_read(text)


_INLINE_TAG = re.compile(
    r"</?(?:a|abbr|b|bdi|bdo|big|cite|code|del|dfn|em|font|i|ins|kbd|mark|q|s|samp|small|span"
    r"|strike|strong|sub|sup|tt|u|var|wbr)(?:\s[^<>]*)?/?>|<!--.*?-->",
    re.IGNORECASE | re.DOTALL,
)
"""Inline HTML elements and comments: a mail client renders the elements' content and nothing
of the tags or the comments."""
_INTRAWORD_MARKUP = re.compile(
    r"(?:(?<=[^\W\d_])(\*+|`+)([^\W\d_]+)\1|(\*+|`+)([^\W\d_]+)\3(?=[^\W\d_]))"
)
"""A pair of Markdown emphasis or code marks around letters inside a word ("f**u**ll",
"**re**fund", "corr`ect`ed"): a chat client renders the word whole. A single mark stays
("EXAMPLE*SAAS" on a card statement), and so does an underscore, which emphasises nothing inside
a word and joins an identifier's words ("verify_signature")."""


def _unmarked_markup(match: re.Match[str]) -> str:
    return match.group(2) or match.group(4)


def _as_displayed(text: str) -> str:
    """Step 0: inline tags, comments and intraword emphasis removed, character references read
    and lines with bidi formatting put in display order, until nothing changes: a reference may
    spell an override ("&#8238;") and reordered text a reference or a tag. Each pass that
    changes the text removes a tag, a mark, a reference or bidi formatting, so this ends;
    markup nested deeper than `DISPLAY_PASSES` passes (no mail client's, only an adversary's:
    "&amp;amp;amp;...", "<b<b<b>>>" or an override in each of thousands of characters) is
    dropped instead, so one text costs at most that many passes over it."""
    if not any(mark in text for mark in _DISPLAY_MARKS):
        return text
    for _ in range(DISPLAY_PASSES):
        unmarked = _INTRAWORD_MARKUP.sub(_unmarked_markup, _INLINE_TAG.sub("", text))
        shown = _displayed(html.unescape(unmarked))
        if shown == text:
            return text
        text = shown
    return _without_display_marks(text)


def _without_display_marks(text: str) -> str:
    return text.translate(_NO_DISPLAY_MARKS)


_EXPLICIT_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Unicode's explicit bidi formatting characters: embeddings (LRE, RLE), overrides (LRO, RLO),
their pop (PDF), isolates (LRI, RLI, FSI) and their pop (PDI)."""
_BIDI_FORMATTING = re.compile(f"[{_EXPLICIT_BIDI}\u200e\u200f\u061c]")
"""The explicit ones and the implicit marks (LRM, RLM, ALM): gone once a line is displayed."""
_HAS_EXPLICIT_BIDI = re.compile(f"[{_EXPLICIT_BIDI}]")
_PARAGRAPHS = re.compile("([\n\r\x1c-\x1e\x85\u2029])")
"""Unicode's paragraph separators (bidi class B): the bidi algorithm reorders within each."""
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""Half a UTF-16 pair, which no transport lets through (their JSON parsers refuse it) but a
Python caller can pass: a screen shows the replacement character, and the bidi algorithm, which
reads UTF-8, could not take it."""
_DISPLAY_MARKS = ("<", "&", "*", "`", *_EXPLICIT_BIDI)
"""A text without any of these is displayed as written (step 0 reads it no further)."""
_NO_DISPLAY_MARKS = dict.fromkeys(map(ord, _DISPLAY_MARKS))
DISPLAY_PASSES = 16
"""Passes of step 0 over one text at most: real markup is read in two or three."""


def _displayed(text: str) -> str:
    """Each line with explicit bidi formatting in the order a screen shows it (UAX #9, with
    its own paragraph direction: its first strong letter's), then without its formatting
    characters, so that displayed text is never reordered again. Overridden text shows
    reversed ("\u202edrowssap ruoy dnes\u202c" is "send your password"), an override inside
    another reverses again, and Latin letters in an embedding or isolate keep their order
    while the embedding moves. A line with no explicit formatting stays as written, so
    right-to-left script is kept in its logical (reading) order."""
    if not _HAS_EXPLICIT_BIDI.search(text):
        return text
    return "".join(
        _BIDI_FORMATTING.sub("", get_display(_LONE_SURROGATE.sub("\ufffd", line)))
        if _HAS_EXPLICIT_BIDI.search(line)
        else line
        for line in _PARAGRAPHS.split(text)
    )


_MARKED_WORD = re.compile(
    r"[^\W_](?:[^\W_]|[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f])*"
)
"""A word with the combining marks (Unicode's combining diacritical mark blocks) set on its
letters; a mark before any letter is set on no word."""


def _unmarked(match: re.Match[str]) -> str:
    """A word of Latin letters with accents added, as its letters, where those are a word of
    the lexicon and the word as written is not ("pásswórd" -> "password", "café" stays)."""
    word = match.group(0)
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFD", word)
    letters = "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    if not letters.isascii():
        return word
    marked = sum(
        unicodedata.category(c) != "Mn" and unicodedata.category(n) == "Mn"
        for c, n in zip(decomposed, decomposed[1:], strict=False)
    )
    stray = any(unicodedata.category(c) == "Mn" for c in word)  # no letter composes with it
    if stray or marked >= _MARKED_LETTERS or _reads_as_word(letters, word):
        return letters
    return word


_MARKED_LETTERS = 2
"""Accents on two letters of a word or more, or one that composes with no letter ("F́"), are
no language's spelling of it ("B́oóks", "2F́A"): a name with one ("José", "Inés") stays."""


def _reads_as_word(read: str, written: str) -> bool:
    return is_word(read.lower()) and not is_word(written.lower())


LEET = {"0": "o", "1": "il", "3": "e", "4": "a", "5": "s", "7": "t", "9": "g", "@": "a", "$": "s"}
"""Digits and signs written for letters, each with the letters a reader may see in it."""
_LEET_WORD = re.compile(
    r"(?<![\w@$])(?<![\w@$][./])(?=[\w@$]*[A-Za-z])[\w@$]*[013-579@$][\w@$]*(?![\w@$])(?![./][\w@$])"
)
"""A run of letters, digits and signs with a letter and a sign, not part of a dotted or
slashed identifier ("v4.12.1", "/v3/imports")."""
_LEET_MAX = 6
"""Signs read in one run at most (each "1" doubles the readings tried)."""
_LEET_SHORTEST = 4
"""Runs shorter than a word of four letters, or with more signs than letters, are codes
("ID3", "14B", "100k", "55h"), not words in disguise; but a short lower-case run with one
sign that reads as a word is that word ("0n", "w4y", "y0u"; of two, with the sign first), as
"P1", "v3" and "A4" are not."""
_LETTER_RUN = re.compile(r"[^\W\d_]+")
_FRAGMENT_RUN = re.compile(r"[^\W\d_]{2,}")
_ASCII_FRAGMENT_RUN = re.compile(r"[a-z]{2,}")  # the same on a lower-case ASCII text, faster
_LEET_HINT = re.compile(r"[A-Za-z][013-579@$]|[013-579@$][A-Za-z]")
"""A letter beside a sign: every run `_LEET_WORD` reads has one (most texts have none)."""


def _disguises_read(text: str) -> str:
    """Step 5's letters written as signs and words cut in two (accents: `_unmarked`)."""
    if _LEET_HINT.search(text):
        text = _LEET_WORD.sub(_unleet, text)
    return _cut_words_joined(text, _CUTS)


def _fragments(text: str) -> frozenset[str]:
    """The runs of two letters or more of `text`, lower-cased, that are no word in any form:
    a word cut in two has one such half, and most texts have none (so they are read no
    further)."""
    runs = (_ASCII_FRAGMENT_RUN if text.isascii() else _FRAGMENT_RUN).findall(text.lower())
    unknown = set(runs).difference(known_words())
    return frozenset(word for word in unknown if not is_word_form(word))


def _unleet(match: re.Match[str]) -> str:
    """A run with letters written as digits or signs, as the lexicon word a reader sees in it
    ("p4ssw0rd" -> "password"), or as written if none ("2fa", "ipv4", "log4j")."""
    run = match.group(0)
    signs = sum(char in LEET for char in run)
    if len(run) < _LEET_SHORTEST:
        if signs != 1 or not run.islower() or len(run) < _LEET_SHORTEST - 1:
            return run
        known = lexicon().__contains__  # a short run reads only as a word the data uses
    elif signs > min(_LEET_MAX, len(run) - signs):
        return run
    else:
        known = is_word
    readings = itertools.product(*(LEET.get(char, char) for char in run.lower()))
    return next((word for word in map("".join, readings) if known(word)), run)


_CUTS = frozenset({" ", "\n", "\r\n"})
HYPHEN_CUT = frozenset({"-"})


def hyphen_cuts_joined(text: str) -> str:
    """A canonical text with each word cut in two by a hyphen joined, where a reader sees one
    word in it ("cre-dentials", "dis-able"): step 5's join, at hyphens. Not part of the
    canonical text, where a hyphen also joins real compounds and the word rule splits at it;
    the safety verdict reads a reply this way too (safety/verdict.py), so a hyphen cannot
    hide an act."""
    return _cut_words_joined(text, HYPHEN_CUT) if "-" in text else text


def _cut_words_joined(text: str, cuts: frozenset[str]) -> str:
    """`_halves_joined` at `cuts` until nothing changes (a joined word may be the half of a
    longer one)."""
    while True:
        fragments = _fragments(text)
        joined = _halves_joined(text, fragments, cuts) if fragments else text
        if joined == text:
            return text
        text = joined


def _halves_joined(text: str, fragments: frozenset[str], cuts: frozenset[str]) -> str:
    """One pass of joining a word cut in two at one of `cuts` (a space or line break in the
    canonical text, a hyphen in `hyphen_cuts_joined`), where one of the halves (two letters or
    more each) is a fragment and the two joined are a word: "ref und" -> "refund", while
    "pass word", "log in" and names stay apart."""
    out, last = [], 0
    runs = list(_LETTER_RUN.finditer(text))
    i = 0
    while i + 1 < len(runs):
        first, second = runs[i], runs[i + 1]
        a, b = first.group(0), second.group(0)
        if (
            (a.lower() in fragments or b.lower() in fragments)
            and len(a) > 1
            and len(b) > 1
            and text[first.end() : second.start()] in cuts
            and _one_words_case(a, b)
            and is_word((a + b).lower())
            and not _glued(text, first.start(), second.end())
        ):
            out += [text[last : first.start()], a + b]
            last = second.end()
            i += 2
        else:
            i += 1
    return "".join(out) + text[last:] if out else text


def _one_words_case(first: str, second: str) -> bool:
    """The halves' letters are cased as one word's: lower, capitalised or all capitals."""
    if first.isupper() and second.isupper():
        return True
    return second.islower() and (first.islower() or first.istitle())


def _glued(text: str, start: int, end: int) -> bool:
    """The two halves are part of a longer token: a digit or an underscore touches them, or an
    apostrophe before them ("they're stored" is no "restored"; "cust omer's" is "customer's")."""
    before, after = text[start - 1 : start], text[end : end + 1]
    return before in ("'", "\u2019") or any(c.isdigit() or c == "_" for c in before + after)


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
