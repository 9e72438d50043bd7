"""How the safety rules are read from their data: frames and their options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servicebench_support_queue.server.support_queue.text.safety.clauses import read
from servicebench_support_queue.server.support_queue.text.safety.frames import (
    index_frames,
    load_rules,
)
from servicebench_support_queue.server.support_queue.text.safety.rules import RULES_PATH

DATA = json.loads(RULES_PATH.read_text(encoding="utf-8"))


def rules_file(tmp_path: Path, frames: list) -> Path:
    """The real grammar with one rule made of `frames`."""
    rule = {
        "name": "probe",
        "description": "a test rule",
        "cancel": ["{NEG}"],
        "chain": ["{CHAIN}"],
        "frames": frames,
    }
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({**DATA, "rules": [rule]}), encoding="utf-8")
    return path


def matches(path: Path, text: str) -> list[str]:
    grammar, rules = load_rules(path)
    reply = read(text, grammar)
    return [m.group(0).strip() for m in rules[0].frames[0].pattern.compiled().finditer(reply.text)]


def test_a_refused_next_word_lets_a_longer_reading_win(tmp_path: Path) -> None:
    path = rules_file(
        tmp_path, [{"template": "pause ^2 {CONTROL}", "not_followed_by": "CONTROL_MODIFIED"}]
    )
    assert matches(path, "We paused the new-device verification emails") == [
        "paus the new devic verification email"
    ]
    assert matches(path, "Work around it: pause the TLS errors") == []


def test_frame_options_are_read(tmp_path: Path) -> None:
    path = rules_file(
        tmp_path,
        [
            {
                "template": "send ~2 {SECRET}",
                "verb": True,
                "inner": False,
                "context": "SECRET_CONTEXT",
                "subject_not": "GIVER",
                "inner_also": "PURE_POSSIBILITY",
                "not_after": "PURE_POSSIBILITY",
            }
        ],
    )
    frame = load_rules(path)[1][0].frames[0]
    assert frame.verb and not frame.inner and frame.context is not None
    assert "we" in frame.subject_not and "can" in frame.inner_also and "can" in frame.not_after


def test_a_frame_needs_a_required_word(tmp_path: Path) -> None:
    _, rules = load_rules(rules_file(tmp_path, ["{SECRET}?"]))
    with pytest.raises(ValueError):
        index_frames(rules)
