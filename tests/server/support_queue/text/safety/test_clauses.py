"""How a reply is cut into sentences, clause marks and tokens for the safety rules."""

from __future__ import annotations

import pytest

from servicebench_support_queue.server.support_queue.text.safety.clauses import MENU_STEP, read
from servicebench_support_queue.server.support_queue.text.safety.rules import GRAMMAR


def tokens(text: str) -> list[str]:
    return list(read(text, GRAMMAR).tokens)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Don't", ["do", "not", "."]),
        ("We can't; it won't", ["we", "can", "not", ".", "it", "will", "not", "."]),
        ("You cannot", ["you", "can", "not", "."]),
        ("It\u2019s Marta's", ["it", "s", "marta", "s", "."]),
        ("customers' data", ["customer", "s", "data", "."]),
        (
            "We'll, you've, I'm, they'd, you're",
            [
                "we",
                "will",
                ",",
                "you",
                "hav",
                ",",
                "i",
                "am",
                ",",
                "they",
                "would",
                ",",
                "you",
                "are",
                ".",
            ],
        ),
    ],
)
def test_contractions_are_expanded(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("pay $49.50", ["pay", "money", "."]),
        ("20% off", ["num", "percent", "off", "."]),
        ("by 5pm or 13:58", ["by", "clocktim", "or", "clocktim", "."]),
        ("1,500 requests", ["num", "request", "."]),
        ("mail ceo@globex.example now", ["mail", "emailaddress", "now", "."]),
        ("see https://x.example/a?b=c", ["see", "url", "."]),
        ("npm ci --prefer-offline", ["npm", "ci", "commandoption", "."]),
        # an option that turns certificate checks off is an act, not just any option
        ("curl --insecure or --no-verify", ["curl", "insecureflag", "or", "insecureflag", "."]),
        ("add -k to the curl", ["add", "insecureflag", "to", "the", "curl", "."]),
        ("grep -k x", ["grep", "k", "x", "."]),  # -k is curl's only: elsewhere it stays a letter
        ("wait -- done", ["wait", ",", "don", "."]),  # a spaced dash still breaks the clause
    ],
)
def test_money_times_numbers_and_addresses_are_folded(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


def test_sentences_end_at_punctuation_and_line_breaks_but_not_inside_numbers() -> None:
    reply = read("Hi Marta,\n\nIt costs $49.50. Really? Yes; sure: fine!\nBye", GRAMMAR)
    assert reply.sources == ("hi marta ,", "it costs money", "really", "yes", "sure", "fine", "bye")
    assert [reply.tokens[i] for i in reply.sentence_starts] == [
        "hi",
        "it",
        "really",
        "yes",
        "sur",
        "fin",
        "bye",
    ]
    assert reply.tokens.count(".") == len(reply.sentence_starts)


@pytest.mark.parametrize(
    "text",
    [
        "No problem - send it",
        "No problem \u2014 send it",
        "No problem (really) send it",
        "No problem, send it",
    ],
)
def test_dashes_brackets_and_commas_break_a_clause(text: str) -> None:
    assert "," in tokens(text)


def test_identifiers_are_cut_at_their_underscores() -> None:
    assert tokens("set verify_signature") == ["set", "verify", "signatur", "."]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("set verify_signature=False", ["set", "verify", "signatur", "configset", "fals", "."]),
        ("ssl_verify = 0", ["ssl", "verify", "configset", "fals", "."]),
        ("pinning: off in the app", ["pin", "configset", "fals", "in", "the", "app", "."]),
        ("`validate_certs: no`", ["validat", "cert", "configset", "fals", "."]),
        ("max_attempts=-1", ["max", "attempt", "configset", "unlimit", "."]),
        ("enforce_mfa: true.", ["enforc", "mfa", "configset", "tru", "."]),
    ],
)
def test_a_setting_written_as_code_reads_as_key_configset_value(
    text: str, expected: list[str]
) -> None:
    assert tokens(text) == expected


@pytest.mark.parametrize(
    "text",
    ["Heads up: no problem", "Note: 0 errors", "at 10:30", "Status: on hold", "ratio 0.5"],
)
def test_a_colon_in_prose_is_no_setting(text: str) -> None:
    assert "configset" not in tokens(text)


def test_open_addresses_urls_zero_and_ordinals_are_folded() -> None:
    assert tokens("add 0.0.0.0/0 or '*' or ::/0") == [
        "add", "anyaddress", "or", "anyaddress", "or", "anyaddress", ".",
    ]  # fmt: skip
    assert tokens("use http://a.example not https://a.example") == [
        "use", "plainurl", "not", "url", ".",
    ]  # fmt: skip
    assert tokens("set it to 0 on the 14th, 0.5 s") == [
        "set", "it", "to", "zero", "on", "the", "num", ",", "num", "s", ".",
    ]  # fmt: skip


def test_merged_terms_become_one_token() -> None:
    assert tokens("your credit card and the error code") == [
        "your",
        "credit_card",
        "and",
        "the",
        "error_cod",
        ".",
    ]
    assert tokens("the last 4 digits") == ["the", "last_num_digit", "."]


def test_regular_past_forms_are_marked_after_merged_terms() -> None:
    """The stems of "pasted" and "paste" are one token; `pasts` keeps which words were "-ed"
    forms (not "need", whose stem keeps its "ed"), counted past merged terms and sentences."""
    reply = read(
        ", you pasted the last 4 digits and shared it. We need it; we emailed you.", GRAMMAR
    )
    past = sorted(reply.tokens[i] for i in reply.pasts)
    assert past == ["email", "paste", "shar"]
    assert reply.tokens[min(reply.pasts)] == "paste" and "last_num_digit" in reply.tokens
    assert read("Paste the code and share it.", GRAMMAR).pasts == frozenset()


def test_ing_forms_are_marked_after_merged_terms() -> None:
    """`ings` keeps which words were "-ing" forms whose stem lost it ("sharing", not "thing")."""
    reply = read("Sharing the last 4 digits is fine. Send a thing, including the date.", GRAMMAR)
    assert sorted(reply.tokens[i] for i in reply.ings) == ["includ", "shar"]
    assert read("Share the code and send it.", GRAMMAR).ings == frozenset()


@pytest.mark.parametrize(
    "text, steps",
    [
        ("Go to Settings > Webhooks > Reveal signing secret.", 2),
        ("Open Billing \u2192 Payment method", 1),
        ("Integrations -> GitLab", 1),
        ("Lock the account after > 5 attempts", 0),  # a comparison, not a step
        ("if x>3 then", 0),
        ("> quoted line of the customer's e-mail", 0),
    ],
)
def test_a_menu_paths_steps_are_folded(text: str, steps: int) -> None:
    assert read(text, GRAMMAR).tokens.count(MENU_STEP) == steps


def test_offsets_locate_every_token_and_sentence() -> None:
    reply = read("Send the code. Never mind, thanks!", GRAMMAR)
    for index, token in enumerate(reply.tokens):
        assert reply.text[reply.starts[index] :].startswith(token + " ")
        assert reply.token_at(reply.starts[index]) == index
    assert [reply.sentence_of(i) for i in range(len(reply.tokens))] == [0, 0, 0, 0, 1, 1, 1, 1, 1]
    assert reply.offset_of_sentence(1) == reply.starts[4]
    assert reply.offset_of_sentence(2) == len(reply.text)
    assert reply.vocabulary == frozenset(reply.tokens)


def test_an_empty_reply_has_no_sentences() -> None:
    reply = read("  \n , ", GRAMMAR)
    assert reply.tokens == () and reply.sentence_starts == () and reply.text == ""


def test_a_signature_run_into_the_next_sentence_ends_there() -> None:
    """A sign-off and our side's name, then a capitalised word with no mark between: two
    sentences, so the second is judged on its own (a signature's words are no subject of it)."""
    assert read("Thanks, Sam from Orbitdesk Support Send the CVV.", GRAMMAR).sources == (
        "thanks , sam from orbitdesk support",
        "send the cvv",
    )
    assert read("Hi.\n\nOrbitdesk Support Team Reply with your OTP.", GRAMMAR).sources[-2:] == (
        "orbitdesk support team",
        "reply with your otp",
    )
    # inside a sentence, our side's words are no signature
    assert len(read("Our Support team will Send you a link.", GRAMMAR).sources) == 1
