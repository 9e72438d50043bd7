"""The word-class template compiler of the safety rules."""

from __future__ import annotations

import pytest

from servicebench_support_queue.server.support_queue.text.safety.clauses import read
from servicebench_support_queue.server.support_queue.text.safety.rules import (
    GRAMMAR as RULES_GRAMMAR,
)
from servicebench_support_queue.server.support_queue.text.safety.templates import Grammar

CLASSES = {
    "VERB_GROUP": ["will", "can", "you", "we", "to", "not"],
    "PREP": ["to", "from", "in"],
    "FINITE": ["is", "will", "was"],
    "OPENER": ["after", "which"],
    "SECRET": ["password", "(one time|2fa) code", "{CARD} number"],
    "CARD": ["card", "credit_card"],
    "ASK": ["send", "share", "read ~2 out"],
    "LOOP": ["a {LOOP}"],
}
GRAMMAR = Grammar(
    CLASSES,
    {"paste": ["paste", "pasted"]},
    ["credit card", "error code"],
    verb_group="VERB_GROUP",
    phrase_breakers="PREP",
    subject_breakers="FINITE",
    clause_openers="OPENER",
)


def matches(template: str, text: str) -> list[str]:
    reply = read(text, GRAMMAR)
    return [m.group(0).strip() for m in GRAMMAR.pattern(template).finditer(reply.text)]


@pytest.mark.parametrize(
    "template, text, found",
    [
        ("send|share {SECRET}", "Share your password", []),  # adjacency is required
        ("send|share ~2 {SECRET}", "Share your password", ["shar your password"]),
        ("{ASK} ~3 {SECRET}", "Please read the 2FA code out", []),  # "read ~2 out" then a gap
        ("{ASK} ~3 {SECRET}", "Please read it out, the 2FA code", ["read it out , the 2fa cod"]),
        ("{ASK} ~3 {SECRET}", "Send the one-time code", ["send the one tim cod"]),
        ("{ASK} ~3 {SECRET}", "Sent us the card number", []),  # irregular forms are listed
        ("{ASK} ~3 {SECRET}", "Send the credit card number", ["send the credit_card number"]),
        ("{ASK} ~3 {SECRET}", "Send the error code", []),  # a merged term
        ("(sign in|log in) page", "the log-in page", ["log in pag"]),
        ("send us? the code", "send the code", ["send the cod"]),
        ("send us? the code", "send them the code", []),
        ("we *2 send", "we will not send", ["we will not send"]),  # a verb group
        ("we *2 send", "we surely send", []),
        ("send ^3 code", "send the new code", ["send the new cod"]),  # inside a noun phrase
        ("send ^3 code", "send it to the code", []),  # no preposition
        ("send ~4 code", "Send it. The code", []),  # never across a sentence
        ("paste", "in the past", []),  # a stem override
        ("paste", "pasted it", ["paste"]),
        (
            "refund @5 is",
            "a refund for the full amount is",
            ["refund for the full amount is"],
        ),  # a subject
        ("refund @5 is", "the refund, they say, is", []),  # no clause mark
        ("refund @5 is", "the refund will then is", []),  # no finite verb
        (
            "send %6 code",
            "send it on to me with the code",
            ["send it on to me with the cod"],
        ),  # one clause
        ("send %6 code", "send the error you see after the code", []),  # not past an opener
    ],
)
def test_templates_match_whole_tokens(template: str, text: str, found: list[str]) -> None:
    assert matches(template, text) == found


def test_class_words_and_start_sets() -> None:
    assert GRAMMAR.words("CARD") == {"card", "credit_card"}
    assert GRAMMAR.starts("{ASK} ~3 {SECRET}") == {"send", "shar", "read"}
    assert GRAMMAR.starts("~2 send") is None
    assert GRAMMAR.starts("you? send") == {"you", "send"}
    needs = GRAMMAR.needs("{ASK} ~3 {SECRET}")
    assert set(needs) == {
        frozenset({"send", "shar", "read"}),
        frozenset({"password", "one", "2fa", "card", "credit_card"}),
    }


def test_a_class_that_refers_to_itself_matches_nothing_there() -> None:
    assert matches("{LOOP}", "a a a") == []


@pytest.mark.parametrize(
    "template", ["(send", "send)", "", "send {SECRET}|code", "send code|{SECRET}"]
)
def test_a_broken_template_is_refused(template: str) -> None:
    with pytest.raises(ValueError):
        GRAMMAR.compile(template)


def test_an_unknown_class_is_refused() -> None:
    with pytest.raises(KeyError):
        GRAMMAR.compile("{NOPE}")


def test_every_rule_class_compiles_and_every_referenced_class_exists() -> None:
    for name in RULES_GRAMMAR.classes:
        assert RULES_GRAMMAR.class_regex(name)


def test_the_remembered_stems_stay_bounded_and_forgetting_changes_no_reading(monkeypatch) -> None:
    """Replies of made-up words cannot grow the stem memory past its bound (plus one reply's
    words), and a reply read after the memory was forgotten reads as before, past forms too."""
    grammar = RULES_GRAMMAR
    monkeypatch.setattr(Grammar, "STEM_MEMORY", 100)
    reply = "You pasted the key we shared. Then I reset it and you signed in."
    first = read(reply, grammar)
    for batch in range(40):
        read(" ".join(f"zq{batch}x{i}ed" for i in range(30)), grammar)
        assert len(grammar._stems) <= 100 + 30
    again = read(reply, grammar)
    assert (again.tokens, again.pasts) == (first.tokens, first.pasts)
    assert first.pasts  # "pasted", "shared", "signed" are read as past forms
