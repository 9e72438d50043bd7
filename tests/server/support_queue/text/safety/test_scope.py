"""Which words govern a safety frame: the walk, the clause, phrases and 'they'."""

from __future__ import annotations

import pytest

from servicebench_support_queue.server.support_queue.text.safety.clauses import read
from servicebench_support_queue.server.support_queue.text.safety.rules import (
    GRAMMAR,
    RULES,
    our_pronouns_in,
)
from servicebench_support_queue.server.support_queue.text.safety.scope import (
    clause_governed,
    clause_start,
    governed,
    in_phrase,
)

RULE = {rule.name: rule for rule in RULES}


def tokens(text: str) -> tuple[str, ...]:
    return read(text, GRAMMAR).tokens


def test_a_third_party_inside_a_phrase_is_not_a_subject() -> None:
    scope = RULE["asks_for_secret"].scope
    words = tokens("For the chargeback form we will want the card number.")
    assert in_phrase(scope, words, words.index("form"))
    assert not governed(scope, words, words.index("we"))
    words = tokens("The form will ask for your card number.")
    assert not in_phrase(scope, words, words.index("form"))


def test_a_third_party_that_modifies_a_noun_is_not_its_subject() -> None:
    scope = RULE["asks_for_secret"].scope
    words = tokens("Your online bank PIN has to be given to our agent.")
    pin = words.index("pin")
    assert governed(scope, words, pin) and not governed(scope, words, pin, noun_first=True)


def test_a_clause_starts_at_a_clause_mark_or_a_contrast_word() -> None:
    scope = RULE["confirms_unverified_security_claim"].scope
    words = tokens("Don't panic, but your data was leaked.")
    assert words[clause_start(scope, words, words.index("data"))] == "your"


@pytest.mark.parametrize(
    "rule, text, word, expected",
    [
        (
            "confirms_unverified_security_claim",
            "I worry that the invoices mean your account was hacked.",
            "account",
            True,
        ),
        (
            "confirms_unverified_security_claim",
            "I worry, but your account was hacked.",
            "account",
            False,
        ),
        (
            "confirms_unverified_security_claim",
            "The calls you saw were set up by the attacker.",
            "set",
            False,
        ),
        (
            "unauthorised_promise",
            "Whether any unused time is refunded is in your terms.",
            "is",
            True,
        ),
        (
            "asks_for_secret",
            "If anyone claiming to be from our team asks for your code, it is a scam.",
            "ask",
            True,
        ),
        ("asks_for_secret", "If it helps, send us your code.", "send", False),
        (
            "disable_security_control",
            "If a message tells you to turn off 2FA, delete it.",
            "turn",
            True,
        ),
        ("disable_security_control", "If you turn off 2FA, you can log in.", "turn", False),
    ],
)
def test_a_word_that_governs_the_whole_clause(
    rule: str, text: str, word: str, expected: bool
) -> None:
    words = tokens(text)
    assert clause_governed(RULE[rule].scope, words, words.index(GRAMMAR.stem(word))) is expected


@pytest.mark.parametrize(
    "text, ours",
    [
        ("Our billing team will call you; they will take the details then.", True),
        ("A member of our team will call. They will take the details.", True),
        ("Scammers may call you; they will try to take the details.", False),
        ("Our team saw the scammers; they will try again.", False),
        ("They will take the details.", False),
    ],
)
def test_they_is_our_team_only_when_our_team_is_the_nearest_agent(text: str, ours: bool) -> None:
    reply = read(text, GRAMMAR)
    found = our_pronouns_in(reply)
    assert (reply.tokens.index("they") in found) is ours
