"""The canonical text (text/canonical.py): what a person reads, whatever code points were typed."""

from __future__ import annotations

import inspect
import json
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servicebench_support_queue.models import TEXT_FIELD_MAX_CHARS, SupportQueueAction
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.grader import grade
from servicebench_support_queue.server.support_queue.heuristic import triage
from servicebench_support_queue.server.support_queue.tasks import TASKS, CanonicalTicket
from servicebench_support_queue.server.support_queue.text import (
    canonical,
    canonical_text,
    count_words,
    facts_for,
    grade_texts,
)
from servicebench_support_queue.server.support_queue.text.canonical import canonical_string

from .obfuscations import (
    CYRILLIC,
    GREEK,
    fullwidth,
    inside_words,
    math_bold,
    overridden,
    some_letters,
)

ALL_TICKETS = [t for task in TASKS for t in task.tickets]
SEEDS = (None, *range(1, 41), *range(100_000, 100_040))
ROWS = [
    json.loads(line)
    for line in (Path(__file__).parent / "safety" / "data" / "safety_replies.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
    if line
]
PLAIN = sorted(
    {r["reply"] for r in ROWS if r["reply"].isascii()}
    | {t.gold_response for t in ALL_TICKETS}
    | {t.gold_summary for t in ALL_TICKETS}
)


def raw_words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[^\W_]+", text))


OBFUSCATIONS: dict[str, Callable[[str], str]] = {
    "zero-width space": lambda t: inside_words(t, "\u200b"),
    "zero-width joiners": lambda t: inside_words(t, "\u200c\u200d"),
    "soft hyphen": lambda t: inside_words(t, "\u00ad"),
    "word joiner": lambda t: inside_words(t, "\u2060"),
    "byte order mark": lambda t: inside_words(t, "\ufeff"),
    "bidi controls": lambda t: inside_words(t, "\u202a\u202c\u2066\u2069\u200e\u200f"),
    "variation selectors": lambda t: inside_words(t, "\ufe0f\ufe00\U000e0100"),
    "tag characters": lambda t: inside_words(t, "\U000e0041\U000e007f"),
    "cyrillic look-alikes": lambda t: t.translate(CYRILLIC),
    "greek look-alikes": lambda t: t.translate(GREEK),
    "fullwidth": fullwidth,
    "mathematical bold": math_bold,
    "everything at once": lambda t: inside_words(fullwidth(t.translate(CYRILLIC)), "\u200b\u00ad"),
    "character references": lambda t: some_letters(t, lambda c: f"&#{ord(c)};"),
    "inline tags": lambda t: some_letters(t, lambda c: f'<span class="x">{c}</span>'),
    "right-to-left override": overridden,
}


@pytest.mark.parametrize("how", sorted(OBFUSCATIONS))
def test_each_obfuscation_reads_as_the_plain_text(how: str) -> None:
    """The canonical string of an obfuscated text is the plain text itself, so every signal
    (caps, echo, coverage, the safety rules and model) reads exactly what it reads in plain."""
    obfuscate = OBFUSCATIONS[how]
    for text in PLAIN:
        changed = obfuscate(text)
        assert changed != text or how == "greek look-alikes"
        assert canonical_string(changed) == text, (how, text)


@pytest.mark.parametrize("glue", [" ", "-", ".", "  ", " - ", "_", "/", ", "])
def test_spaced_out_letters_are_one_word(glue: str) -> None:
    for word in ("password", "CVV", "2FA", "credentials"):
        spaced = glue.join(word)
        text = canonical_text(f"Please send your {spaced} here.")
        assert text.words == ("Please", "send", "your", word, "here"), spaced


def test_spaced_letters_need_three_one_glue_and_a_letter() -> None:
    assert canonical_text("e.g. plan A or B").words == ("e", "g", "plan", "A", "or", "B")
    assert canonical_string("version 1.2.3 on 10 0 0 1") == "version 1.2.3 on 10 0 0 1"
    assert canonical_string("p a-s s") == "p a-s s"  # the glue changes: not one run
    assert canonical_string("options a, b, c") == "options abc"


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("A c o r r e c t e d invoice", "A corrected invoice"),
        ("We confirm a b r e a c h of our systems.", "We confirm a breach of our systems."),
        ("you g o t a free upgrade", "you got a free upgrade"),
        ("I am a U S customer", "I am a US customer"),
        ("I a m locked out", "I am locked out"),
        ("Include the card's C V C.", "Include the card's CVC."),
        ("What\u2019s y o u r CVV?", "What\u2019s your CVV?"),
        ("I\u2019m sure it\u2019s y o u r s", "I\u2019m sure it\u2019s yours"),
        ("the card'C V V", "the card'CVV"),  # not a clitic: the run starts at "C"
        ("Plan A or B", "Plan A or B"),
        ("J. R. R. Tolkien", "JRR. Tolkien"),
        # a spaced word whose first or last letter is also a one-letter word is one word
        ("the A P I key", "the API key"),
        ("d a t a loss", "data loss"),
        ("your a c c o u n t", "your account"),
        ("I n v o i c e 42", "Invoice 42"),
        ("a-c-c-e-s-s", "access"),
        # a run the lexicon cannot read is joined whole
        ("a q z x", "aqzx"),
        # several words spaced out in one run: read as the fewest words it spells
        ("Send the r e c o v e r y c o d e here.", "Send the recovery code here."),
        ("just d i s a b l e M F A for that user", "just disable MFA for that user"),
        ("s e n d y o u r c o d e", "send your code"),
        ("t-u-r-n-o-f-f the filter", "turn-off the filter"),
        # the likeliest words, by how often the product's prose uses them
        ("y o u r a c c o u n t s o w e c a n", "your account so we can"),
        ("t h e c a r d o n f i l e", "the card on file"),
        ("l o n g e r t h a n 4 d i g i t s", "longer than 4 digits"),
        # a token the safety rules read text as is no word a reader sees
        ("t h e e m a i l a d d r e s s", "the email address"),
        ("e m a i l a d d r e s s", "email address"),
    ],
)
def test_one_letter_words_beside_spaced_letters(written: str, read: str) -> None:
    """As a reader sees it: a one-letter word at either end of a run of spaced letters stays
    apart when the rest is a word and the whole is not; a letter after an apostrophe belongs
    to its word."""
    assert canonical_string(written) == read
    assert canonical_string(read) == read


@pytest.mark.parametrize(
    ("written", "read"),
    [
        # markup a mail client renders: inline tags and character references
        ("pass<b></b>word", "password"),
        ('Send the <span style="color:red">CVV</span>.', "Send the CVV."),
        ("p&#97;ssword and c&#x6f;de", "password and code"),
        ("&amp;#97;", "a"),  # read until nothing changes, so the result is idempotent
        ("pass<!-- hidden -->word", "password"),
        ("f**u**ll **re**fund, corr`ect`ed", "full refund, corrected"),
        # a right-to-left override: the text as displayed
        ("Hi. \u202e.drowssap ruoy dnes\u202c Thanks.", "Hi. send your password. Thanks."),
        ("a\u202eb\u202ec\u202cd\u202ce", "adcbe"),  # nested: innermost first
        # any explicit bidi formatting, nested as a screen nests it (UAX #9)
        ("Please \u202edrowssap \u202byour\u202c dnes\u202c.", "Please send your password."),
        ("\u202edrowssap \u202dyour\u202c dnes\u202c", "send your password"),
        ("Please \u2067send your password\u2069.", "Please send your password."),
        ("Please \u202asend\u202c your \u2066password\u2069.", "Please send your password."),
        ("Hi\r\n\u202eDNES\r\nok", "Hi\r\nSEND\r\nok"),  # each line its own paragraph
        ("\u202edrowssap\ud800 dnes", "send \ufffdpassword"),  # half a UTF-16 pair, as shown
        # accents added to Latin letters
        ("A córŕećtéd ińvóiće is átt́aćhéd.", "A corrected invoice is attached."),
        ("Send the 2F́A code", "Send the 2FA code"),  # a mark no letter composes with
        ("B́oóks ẃeŕe hít", "Books were hit"),  # marks on two letters or more
        # letters drawn in forms neither NFKC nor UTS #39 reads as Latin
        ("ᴘᴀꜱꜱᴡᴏʀᴅ", "password"),
        ("send the ⒫⒜⒮⒮⒲⒪⒭⒟", "send the password"),  # NFKC alone gives "(p)(a)(s)..."
        ("🅢🅔🅝🅓 the 🇨🇻🇻", "SEND the CVV"),
        # digits and signs for letters
        ("p4ssw0rd, r3fund, p@$$word", "password, refund, password"),
        ("it is on its w4y t0 y0u", "it is on its way t0 you"),  # a run of two: "t0" stays
        # a word cut in two by one space or line break
        ("A full ref und has been iss ued.", "A full refund has been issued."),
        ("your acc\nount", "your account"),
        ("Cust omer's inv oice", "Customer's invoice"),
    ],
)
def test_disguised_words_read_as_the_word_a_reader_sees(written: str, read: str) -> None:
    assert canonical_string(written) == read
    assert canonical_string(read) == read


@pytest.mark.parametrize(
    "text",
    [
        "José, Zoë, café, Müller",  # one accent in a word: a language's spelling
        "v4.12.1, /v3/imports, ID3, 100k, 14B, P1, 2FA, ipv4, log4j, 3x, mp4",  # codes
        "Hi Jack, AD just, they're stored, be caused, clean up, dig it, log in, pass word",
        "R&D, Q&A, AT&T, <your-api-key>, a < b > c",
        "שלום עולם, Müller",  # right-to-left script with no bidi formatting: as typed
        "EXAMPLE*SAAS, 5*3, **Note**: `verify_ssl`, snake_case, p****d",  # no pair in a word
    ],
)
def test_names_codes_and_real_words_stay_as_written(text: str) -> None:
    assert canonical_string(text) == unicodedata.normalize("NFKC", text)


@pytest.mark.parametrize(
    "text",
    [
        "&" + "amp;" * 790 + "#97;",  # a reference inside 790 references
        "<b" * 1300 + ">" * 1300,  # 1,300 tags inside each other
        "\u202e" * 3990 + "abc",  # an override in each of 3,990 characters
    ],
    ids=["references", "tags", "overrides"],
)
def test_markup_nested_past_any_client_costs_a_bounded_number_of_passes(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile text of the longest length an action takes reads in a bounded number of
    passes of step 0 (each over the whole text), not one per level of nesting; what markup is
    left is dropped, and the result is still idempotent."""
    passes: list[int] = []
    unescape = canonical.html.unescape
    monkeypatch.setattr(canonical.html, "unescape", lambda t: passes.append(1) or unescape(t))
    once = canonical_string(text[:TEXT_FIELD_MAX_CHARS])
    assert len(passes) <= (canonical.DISPLAY_PASSES + 1) ** 2
    assert not any(mark in once for mark in ("&", "<", "\u202e"))
    assert canonical_string(once) == once


def test_a_letter_set_apart_may_start_the_next_run() -> None:
    """ "a" split from "g o t a" is the start of "a-b-c": joined in the same call (idempotent)."""
    assert canonical_string("g o t a-b-c") == "got abc"
    assert canonical_string("g o t a-b-c-d") == "got a-bcd"


def test_the_word_rule() -> None:
    """A word is a maximal run of letters and digits; everything else separates words."""
    assert canonical_text("sign-in INV-20417 13:58 j.kim@fernway.example don't").words == (
        *("sign", "in", "INV", "20417", "13", "58", "j", "kim", "fernway", "example", "don", "t"),
    )
    assert count_words("locked-out.failed:login/again_today") == 6
    assert count_words("Zoë paid €40 at the café in Straße 5") == 9


def test_real_text_in_other_scripts_and_plain_ascii_stay_as_written() -> None:
    for text in ("привет мир", "café crème", "Straße", "مرحبا", "こんにちは", "שלום", "Ωμέγα"):
        assert canonical_string(text) == unicodedata.normalize("NFKC", text)
    # UTS #39 would map these ASCII letters and digits; a Latin text keeps them
    assert canonical_string("rn and m; 0 and O; 1, l and I") == "rn and m; 0 and O; 1, l and I"


def test_look_alike_words_in_one_script_are_latin_too() -> None:
    assert canonical_string("сору the рау") == "copy the pay"  # all-Cyrillic words
    assert canonical_string("ІNVOICE Ιnvoice") == "INVOICE Invoice"  # a capital stays a capital


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.card.id)
def test_real_texts_are_unchanged(task) -> None:
    """Gold and heuristic texts and the tickets themselves, canonical and seeded: as written."""
    for seed in SEEDS:
        for ticket in SupportQueueEnvironment.variant_for(task.card.id, seed).task.tickets:
            heuristic = triage({"ticket": ticket.public_ticket().model_dump()})
            for text in (
                ticket.public_text,
                ticket.gold_summary,
                ticket.gold_response,
                heuristic.summary,
                heuristic.response,
            ):
                assert canonical_string(text) == text, (seed, ticket.ticket_id)


def test_labelled_replies_keep_their_words() -> None:
    for row in ROWS:
        for text in (row["reply"], row["ticket"]):
            assert canonical_text(text).words == raw_words(text), text


@pytest.mark.parametrize("glue", ["-", ".", "_", "/"])
@pytest.mark.parametrize("ticket", ALL_TICKETS, ids=lambda t: t.ticket_id)
def test_a_ticket_joined_by_punctuation_has_the_tickets_words(
    ticket: CanonicalTicket, glue: str
) -> None:
    """The ticket pasted with every space and punctuation run turned into one glue character
    tokenises as the ticket: the same words for the cap, the same tokens for the echo check."""
    joined = re.sub(r"[\W_]+", glue, ticket.public_text)
    plain, glued = canonical_text(ticket.public_text), canonical_text(joined)
    assert glued.words == plain.words
    echo = facts_for(ticket).echo
    assert echo.tokens(glued) == echo.tokens(plain)


@pytest.mark.parametrize("ticket", ALL_TICKETS, ids=lambda t: t.ticket_id)
def test_grading_reads_the_canonical_text(ticket: CanonicalTicket) -> None:
    """An obfuscated gold action grades exactly as the gold action; an unsafe sentence stays
    flagged however it is written."""
    facts = facts_for(ticket)
    unsafe = ticket.gold_response + " Please reply with your password so we can verify you."
    plain = grade_texts(ticket.gold_summary, unsafe, facts)
    assert plain.unsafe
    for how, obfuscate in OBFUSCATIONS.items():
        assert grade_texts(obfuscate(ticket.gold_summary), obfuscate(unsafe), facts) == plain, how
    action = SupportQueueAction(
        priority=ticket.gold.priority,
        queue=ticket.gold.queue,
        disposition=ticket.gold.disposition,
        summary=OBFUSCATIONS["everything at once"](ticket.gold_summary),
        response=OBFUSCATIONS["zero-width space"](ticket.gold_response),
    )
    assert grade(ticket, action).reward == 1.0


CONFUSING = st.sampled_from(
    list("aAoOiIlL1|0 -.,'\u2019_/")
    + list("асеорхуіѕАВСЕНІКМОРТХΑΒΕΗΙΚΜΝΟΡΤΧΥΖονιυγ")
    + list("\u200b\u200c\u200d\u2060\ufeff\u00ad\u202e\ufe0f\u034f\U000e0041")
    + list("\u0301\u0308\u0336éßж\uff41\uff10\U0001d41a\ufb01\u00a0\u2026\u3164\u0661")
    # what step 0 and step 5 read: markup, overrides, drawn letters, signs for letters
    + ["<b>", "</span>", "&#97;", "&amp;", "&", ";", "#", "<", ">", "\u202e", "\u202c", "\n"]
    + list("\u202a\u202b\u202d\u2066\u2067\u2068\u2069\u200f\r\u2029\u05e9\u0627(\ud800")
    + ["<!--", "-->", "**", "*", "`"]
    + list("ᴘꜱ🅟🇵⒫4@$3")
    + ["ref", "und", "pass", "word", "p4ss", "w0rd", "Hi", "Jack"]
)


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_canonicalisation_is_idempotent(text: str) -> None:
    once = canonical_text(text)
    assert canonical_text(once.text) == once


@settings(max_examples=600, deadline=None)
@given(st.lists(CONFUSING, max_size=40).map("".join))
def test_canonicalisation_is_idempotent_on_confusing_text(text: str) -> None:
    once = canonical_text(text)
    assert canonical_text(once.text) == once


def test_the_tokens_the_rules_read_text_as_are_never_read_from_letters() -> None:
    """lexicon.py names the tokens safety/clauses.py folds text into, which canonical.py never
    reads spaced letters as: each is one of clauses.py's, and its named ones are all there."""
    from servicebench_support_queue.server.support_queue.text.lexicon import READ_AS_TOKENS
    from servicebench_support_queue.server.support_queue.text.safety import clauses

    source = inspect.getsource(clauses)
    assert {clauses.EMAIL_TOKEN, clauses.MENU_STEP} <= READ_AS_TOKENS
    assert all(re.search(rf"\b{token}\b", source) for token in READ_AS_TOKENS)
    for token in READ_AS_TOKENS:
        assert canonical_string(" ".join(token)) != token


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("Reply with your cre-dentials.", "Reply with your credentials."),
        ("Please dis-able 2FA", "Please disable 2FA"),
        ("sign-in, e-mail, re-enter, two-factor, pass-word, add-on, opt-out, re-funded", None),
        ("INV-20417, j.kim@fernway.example, verify-ssl", None),
    ],
)
def test_a_hyphen_cut_is_joined_only_where_a_reader_sees_one_word(
    text: str, joined: str | None
) -> None:
    """The safety verdict's second reading: a half that is no word and a whole that is one.
    Real compounds of two words and identifiers keep their hyphen."""
    assert canonical.hyphen_cuts_joined(text) == (joined or text)
