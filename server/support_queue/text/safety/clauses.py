"""Sentences, clause marks and tokens of a reply, for the Support Queue safety rules.

A reply becomes one token sequence: lower-case words, contractions expanded ("don't" ->
"do not", "it's" -> "it s"), stemmed by the grammar (server/support_queue/text/safety/templates.py),
with money, clock times, numbers (a lone 0 is `zero`, "14th" a `num`), e-mail addresses,
URLs (plain `http://` ones are `plainurl`) and command-line options folded to `money`,
`clocktime`, `num`, `emailaddress`, `url` and `commandoption` (`insecureflag` for one that
turns certificate checks off: `--insecure`, curl's `-k`), an address that matches every
address (`0.0.0.0/0`, `::/0`, a quoted `*`) folded to `anyaddress`, a setting written as code
(`verify=False`, `pinning: off`) read as `key configset value` with an off value as `false`,
identifiers cut at their underscores, a `,` wherever a clause
breaks (commas, dashes, brackets) and a `.` closing each sentence (at . ! ? ; : and line
breaks, and where a signature's last word, "Support" or "Team", runs into a capitalised word
with no mark between: "Thanks, Sam from Orbitdesk Support Send the CVV" is two sentences).
No template can cross a `.`, so one search over the whole reply finds what a search per
sentence would.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate

from .signature import SIGN_OFFS
from .templates import CLAUSE, END, Grammar

_CONTRACTION = re.compile(
    r"\b(?:can'?t|cannot|won'?t|shan'?t)\b|n't\b|'(?:re|ll|ve|m|d|s)\b|(?<=s)'(?=\s|$)"
)
_EXPANSIONS = {
    "cant": "can not",
    "cannot": "can not",
    "wont": "will not",
    "shant": "shall not",
    "n't": " not",
    "'re": " are",
    "'ll": " will",
    "'ve": " have",
    "'m": " am",
    "'d": " would",
    "'s": " s",
    "'": " s",
}
EMAIL_TOKEN = "emailaddress"
"""The token an e-mail address is read as (the name of its group in `_FOLD_ADDRESS`)."""
_FOLD_ADDRESS = re.compile(
    rf"(?P<{EMAIL_TOKEN}>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
    r"|(?P<plainurl>http://(?:[^\s;,()<>]*[^\s;,.()<>:!?'\"])?)"
    r"|(?P<url>https://(?:[^\s;,()<>]*[^\s;,.()<>:!?'\"])?)"
)
# "allow 0.0.0.0/0", "origins: '*'": an address range or wildcard that lets every address in
_FOLD_ANY_ADDRESS = re.compile(
    r"(?<![\w.:/])(?:0\.0\.0\.0(?:/0)?|::/0)(?![\w.:/])|[`'\"]\*[`'\"]|(?<=\w )\*(?= )"
)
# a setting written as code, `key=value` or `key: value`: "verify=False" -> "verify configset
# false". After a colon only a literal is a value, and most literals only after an identifier
# (`validate_certs: no`), so "Heads up: no problem" and "Answer: never" stay prose; a URL's
# query ("?b=c") is no setting.
_FOLD_SETTING = re.compile(
    r"(?<![\w.?&/=%-])(?P<key>[a-z0-9_.-]*[a-z0-9])[`'\"\]]?[ \t]*(?P<sep>=|:)"
    r"[ \t]*[`'\"]?(?P<value>-?[a-z0-9*]*)(?![\w-]|\.\w)",
    re.IGNORECASE,
)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_OFF = frozenset(
    {
        "false",
        "off",
        "0",
        "no",
        "none",
        "null",
        "disable",
        "disabled",
        "never",
        "n",
        "skip",
        "ignore",
    }
)
_UNLIMITED = frozenset({"unlimited", "-1", "inf", "infinite", "*"})
_COLON_LITERALS = _OFF | _UNLIMITED | {"true", "on", "enabled", "1", "yes"}
# the literals that follow a colon in prose as well ("Answer: never", "Result: none of...")
# are a value only after an identifier
_PROSE_LITERALS = frozenset({"false", "off", "true", "disabled", "enabled", "unlimited"})
_FOLD_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
INSECURE_FLAG = "insecureflag"
"""What a command-line option that turns off certificate checks reads as (`--insecure`, and
curl's `-k`): an act on a control, which `commandoption` would hide."""
_FOLD_INSECURE_OPTION = re.compile(
    r"(?<![\w-])--(?:insecure(?:-skip-tls-verify)?|no-check-certificates?|no-verify(?:-ssl|-tls)?"
    r"|skip-tls-verify|disable-ssl-verification|tls-verify=false)(?![\w-])"
)
_CURL_LINE = re.compile(r"[^\n]*\bcurl\b[^\n]*")
_SHORT_INSECURE = re.compile(r"(?<![\w-])-k(?![\w-])")
# a step of a menu path, "Settings > Webhooks > Reveal signing secret": what follows it is a
# label on a page of the product, not an act or a thing the reply asks for
_FOLD_MENU = re.compile(
    r"(?<=\w)(?:[ \t]+>[ \t]+|[ \t]*(?:->|=>|\u2192|\u203a|\u00bb|\u21d2)[ \t]*)(?=[^\W\d_])"
)
_FOLD_NUMBER = re.compile(
    r"(?=[\d$\u20ac\u00a3%])(?:(?P<money>[$\u20ac\u00a3]\s?\d[\d,]*(?:\.\d+)?"
    r"|\b\d[\d,]*(?:\.\d+)?\s?(?:usd|eur|gbp|dollars?|euros?)\b)"
    r"|(?P<clocktime>\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b|\b\d{1,2}:\d{2}\b)"
    r"|(?P<zero>\b0\b(?![.,]\d))|(?P<num>\b\d[\d,.]*(?:st|nd|rd|th)?\b)|(?P<percent>%))"
)
_NUMBERS = re.compile(r"[\d%]")
MENU_STEP = "menupath"
"""The token a step of a menu path is read as ("Settings > Webhooks": `set menupath webhook`)."""
_MENU_MARKS = frozenset(">\u2192\u203a\u00bb\u21d2")
_SENTENCE_END = re.compile(r"([.!?;:]+(?=\s|$)|[!?]+|\n+)")
"""Where a sentence ends, captured: one split gives each sentence and the marks after it."""
_CLAUSE_MARK = re.compile(r"\s[-\u2013\u2014]+\s|[\u2013\u2014]|--|[(),\[\]]")
_WORD = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*|,")


def _expansion(match: re.Match[str]) -> str:
    word = match.group(0)
    return _EXPANSIONS[word if word[0] in "n'" else word.replace("'", "")]


def _folded(match: re.Match[str]) -> str:
    return f" {match.lastgroup} "


def _setting(match: re.Match[str]) -> str:
    key, value = _CAMEL.sub("_", match.group("key")).lower(), match.group("value").lower()
    if match.group("sep") == ":" and (
        value not in _COLON_LITERALS or value not in _PROSE_LITERALS and "_" not in key
    ):
        return match.group(0)
    folded = "false" if value in _OFF else "unlimited" if value in _UNLIMITED else value
    return f"{key} configset {folded} "


def _expand(text: str) -> str:
    """Settings read (their camelCase keys cut: "enforceHttps" is "enforce https"), then lower
    case, contractions expanded, e-mails, URLs, options, money, times, numbers folded."""
    if "=" in text or ":" in text:
        text = _FOLD_SETTING.sub(_setting, text)
    text = text.lower()
    if "'" in text or "\u2019" in text or "cannot" in text:
        text = _CONTRACTION.sub(_expansion, text.replace("\u2019", "'").replace("\u2018", "'"))
    if "@" in text or "://" in text:
        text = _FOLD_ADDRESS.sub(_folded, text)
    if "0/0" in text or "*" in text or "0.0.0.0" in text:
        text = _FOLD_ANY_ADDRESS.sub(" anyaddress ", text)
    if "--" in text:
        text = _FOLD_INSECURE_OPTION.sub(f" {INSECURE_FLAG} ", text)
        text = _FOLD_OPTION.sub(" commandoption ", text)
    if "-k" in text and "curl" in text:
        text = _CURL_LINE.sub(lambda line: _SHORT_INSECURE.sub(f" {INSECURE_FLAG} ", line[0]), text)
    if _MENU_MARKS.intersection(text):
        text = _FOLD_MENU.sub(f" {MENU_STEP} ", text)
    if _NUMBERS.search(text):
        text = _FOLD_NUMBER.sub(_folded, text)
    return text


@dataclass(frozen=True, slots=True)
class Reply:
    """A reply's tokens, sentence after sentence, and where each token and sentence starts.

    `text` is the tokens joined by single spaces (with a trailing space) and `starts` each
    token's offset in it; per sentence, the index of its first token, its length, its set
    of tokens, its source as it was read (lower case, folded) and whether a question mark
    ends it; `pasts`, the tokens whose word is a regular past form ("pasted", "shared": its
    stem lost the "-ed"), which the tokens alone no longer tell from the present; `ings`, those
    whose word is an "-ing" form ("sharing"), for the same reason."""

    tokens: tuple[str, ...]
    text: str
    starts: tuple[int, ...]
    vocabulary: frozenset[str]
    sentence_starts: tuple[int, ...]
    sentence_lengths: tuple[int, ...]
    sentence_vocabularies: tuple[frozenset[str], ...]
    sources: tuple[str, ...]
    questions: tuple[bool, ...]
    pasts: frozenset[int] = frozenset()
    ings: frozenset[int] = frozenset()

    def token_at(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def sentence_of(self, token: int) -> int:
        return bisect_right(self.sentence_starts, token) - 1

    def offset_of_sentence(self, sentence: int) -> int:
        """Where sentence `sentence` starts in `text` (its end, for one past the last)."""
        if sentence >= len(self.sentence_starts):
            return len(self.text)
        return self.starts[self.sentence_starts[max(sentence, 0)]]


_SIGNATURE_END: dict[int, tuple[re.Pattern[str], re.Pattern[str]]] = {}
_SIGN_OFF = (
    r"(?:^|(?<=\n)|\b(?:"
    + "|".join(
        re.escape(form)
        for words in sorted(SIGN_OFFS, key=len, reverse=True)
        for form in (words.capitalize(), words, words.upper())
    )
    + r"))"
)
"""A glued signature's start: a line's start, or a sign-off (signature.py `SIGN_OFFS`) as a
sentence starts it, in lower, capitalised or upper case."""


def _signature_end(grammar: Grammar) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A sign-off (a line's start, or "Thanks", "Best", "Regards"...), a few capitalised words,
    and a word of our side (the team's words, the product: the grammar's `TEAM` and `GIVER`
    but the pronouns) capitalised or in capitals, then a capitalised word: where a signature
    ends and a new sentence starts, glued ("Thanks, Sam from Support Send the CVV"). With it,
    its tail (our side's word, spaces, a capital), which every such end has: it starts with a
    letter, so a search for it skips ahead, and a reply without it (a signature that ends the
    reply) needs no search for the whole."""
    found = _SIGNATURE_END.get(id(grammar))
    if found is None:
        try:
            ours = (grammar.words("TEAM") | grammar.words("GIVER")) - grammar.words("US_PRON")
        except KeyError:  # a grammar without our side's words (a test's): no signature
            ours = frozenset()
        # capitalised, or in capitals: a reply written all in capitals has its signature too
        forms = {form for w in ours if w.isalpha() for form in (w.capitalize(), w.upper())}
        capitalised = "|".join(sorted(forms)) or "(?!)"
        name = r"(?:[ \t]*+,?[ \t]*+(?:[A-Z][\w'-]*+|from|at|of|the))"  # possessive: linear
        found = (
            re.compile(
                rf"({_SIGN_OFF},?{name}{{0,5}}?[ \t]*+(?:{capitalised}))[ \t]++"
                rf"(?=[A-Z])(?!(?:{capitalised})\b)"
            ),
            re.compile(rf"(?:{capitalised})[ \t]+[A-Z]"),
        )
        _SIGNATURE_END[id(grammar)] = found
    return found


def read(text: str, grammar: Grammar) -> Reply:
    """Tokenise a reply with the grammar's stems and merged terms."""
    grammar.forget_when_full()
    signature, tail = _signature_end(grammar)
    if tail.search(text):
        text = signature.sub("\\1\n", text)
    tokens: list[str] = []
    sentence_starts: list[int] = []
    lengths: list[int] = []
    vocabularies: list[frozenset[str]] = []
    sources: list[str] = []
    questions: list[bool] = []
    pasts: list[int] = []
    ings: list[int] = []
    # "verify_signature", "ssl_verify": the words of an identifier are words of the sentence
    expanded = _CLAUSE_MARK.sub(" , ", _expand(text)).replace("'", " ").replace("_", " ")
    parts = _SENTENCE_END.split(expanded)  # sentence, its end, sentence, ..., sentence
    for source, end in zip(parts[::2], [*parts[1::2], ""], strict=True):
        raw = _WORD.findall(source)
        words = grammar.stems(raw)
        while words and words[0] == CLAUSE:
            del words[0], raw[0]
        if not words:
            continue
        past, ing = grammar.past_forms(raw), grammar.ing_forms(raw)
        words = grammar.merged(words)
        pasts += _marked_tokens(words, past, len(tokens))
        ings += _marked_tokens(words, ing, len(tokens))
        words.append(END)
        sentence_starts.append(len(tokens))
        lengths.append(len(words))
        vocabularies.append(frozenset(words))
        sources.append(" ".join(source.split()))
        questions.append("?" in end)
        tokens += words
    starts = tuple(accumulate((len(t) + 1 for t in tokens), initial=0))[:-1]
    return Reply(
        tuple(tokens),
        " ".join(tokens) + " " if tokens else "",
        starts,
        frozenset().union(*vocabularies),
        tuple(sentence_starts),
        tuple(lengths),
        tuple(vocabularies),
        tuple(sources),
        tuple(questions),
        frozenset(pasts),
        frozenset(ings),
    )


def _marked_tokens(tokens: list[str], marked: list[bool], offset: int) -> list[int]:
    """The indices (from `offset`) of the merged `tokens` that are one word marked in `marked`
    (a past form, an "-ing" form); a merged term ("a_b") stands for as many words as it has
    parts, and is none of them; `marked` may be empty: no word is one."""
    if not any(marked):
        return []
    out, word = [], 0
    for index, token in enumerate(tokens):
        width = token.count("_") + 1
        if width == 1 and marked[word]:
            out.append(offset + index)
        word += width
    return out
