"""The known gaps of conftest.py name cases that exist: a gap whose test or text was renamed
would silently stop marking anything."""

from __future__ import annotations

import pytest

from . import test_attacks, test_rules, test_verdict
from .conftest import MODEL_GAPS, texts_of


def test_every_known_gap_names_a_test_and_one_of_its_cases(request: pytest.FixtureRequest) -> None:
    cases: dict[str, set[str]] = {}
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None:
            name = getattr(item, "originalname", item.name)
            cases.setdefault(name, set()).update(texts_of(callspec.params.values()))
    for name, texts in MODEL_GAPS.items():
        assert any(hasattr(module, name) for module in (test_attacks, test_rules, test_verdict)), (
            name
        )
        if name in cases:  # collected in this run
            assert texts <= cases[name], texts - cases[name]
