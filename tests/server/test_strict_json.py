"""server/strict_json.py: the one parser of untrusted JSON, its rules and their statuses."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from robustness_support import ANY_TEXT

from servicebench_support_queue.server.strict_json import (
    INT_MAX,
    INT_MIN,
    MAX_DEPTH,
    JsonInputError,
    JsonLimitError,
    MalformedJsonError,
    UnsupportedMediaTypeError,
    body_json,
    loads,
    nesting_depth,
)

PROPERTY = settings(max_examples=300, deadline=None, derandomize=True, database=None)


def nested(depth: int, leaf: str = "0") -> str:
    return "[" * depth + leaf + "]" * depth


@pytest.mark.parametrize(
    ("text", "error", "needle"),
    [
        (nested(MAX_DEPTH + 1), JsonLimitError, f"at most {MAX_DEPTH}"),
        ('{"a":' * 600 + "1" + "}" * 600, JsonLimitError, "600 levels"),
        (
            "[" * 100_000,
            JsonLimitError,
            "100000 levels",
        ),  # truncated too, but the depth is refused first
        (str(INT_MAX + 1), JsonLimitError, "range"),
        (str(INT_MIN - 1), JsonLimitError, "range"),
        ("9" * 5000, JsonLimitError, "number out of range"),  # past Python's 4,300-digit int limit
        ("1e400", JsonLimitError, "double"),
        ("-1e400", JsonLimitError, "double"),
        ("NaN", MalformedJsonError, "NaN and Infinity are not JSON"),
        ("[Infinity]", MalformedJsonError, "NaN and Infinity are not JSON"),
        ('{"x": -Infinity}', MalformedJsonError, "NaN and Infinity are not JSON"),
        ('"\\ud800"', MalformedJsonError, "surrogate"),
        ('{"\\udfff": 1}', MalformedJsonError, "surrogate"),
        ('["\\udc00\\ud800"]', MalformedJsonError, "surrogate"),  # a pair in the wrong order
        ('{"a": 1, "a": 2}', MalformedJsonError, 'duplicate key "a"'),
        ('{"a": {"b": 1, "b": 1}}', MalformedJsonError, 'duplicate key "b"'),
        ("\ufeff{}", MalformedJsonError, "byte order mark"),
        ('{"a": [1, 2', MalformedJsonError, "malformed JSON"),
        (
            '{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[',
            MalformedJsonError,
            "EOF while parsing a string",
        ),
        ("", MalformedJsonError, "EOF while parsing a value"),
        ("{'a': 1}", MalformedJsonError, "malformed JSON"),
    ],
)
def test_each_rule_has_its_error_and_status(text: str, error: type, needle: str) -> None:
    for raw in (text, text.encode()):
        with pytest.raises(error, match=re.escape(needle)) as caught:
            loads(raw)
        assert caught.value.status == (422 if error is JsonLimitError else 400)


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff{}",
        b'"\xed\xa0\x80"',  # a surrogate in CESU-8 bytes, which json.loads(bytes) lets through
        b'"\xc0\xaf"',
        '{"a": 1}'.encode("utf-16"),
        b'"\x80"',
    ],
)
def test_bytes_that_are_not_utf8_are_400(raw: bytes) -> None:
    with pytest.raises(MalformedJsonError) as caught:
        loads(raw)
    assert caught.value.status == 400


def test_a_lone_surrogate_in_text_already_decoded_is_400() -> None:
    with pytest.raises(MalformedJsonError, match="surrogate"):
        loads('["\ud800"]')  # as an in-process WebSocket message delivers it


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (nested(MAX_DEPTH), json.loads(nested(MAX_DEPTH))),
        (str(INT_MAX), INT_MAX),
        (str(INT_MIN), INT_MIN),
        ("-0", 0),
        ("1e308", 1e308),
        ("5e-324", 5e-324),
        ('"\\ud83d\\ude00"', "\U0001f600"),  # a proper pair is one non-BMP character
        ('"\\\\ud800"', "\\ud800"),  # an escaped backslash, not a surrogate
        (
            '"\\u0000\\ufeff\\u200f\\u202e\\uffff"',
            "\x00\ufeff\u200f\u202e\uffff",
        ),  # odd, yet Unicode
        ('["' + "[" * 50 + '"]', ["[" * 50]),  # brackets in a string are not nesting
        (
            '{"a": "\\"' + "[" * 50 + '\\""}',
            {"a": '"' + "[" * 50 + '"'},
        ),  # nor after an escaped quote
    ],
)
def test_valid_json_within_the_limits_is_read_as_json_reads_it(text: str, value: Any) -> None:
    assert loads(text) == value == json.loads(text)
    assert loads(text.encode()) == value


@pytest.mark.parametrize(
    ("content_type", "accepted"),
    [
        (None, False),
        ("application/json", True),
        ("Application/JSON; charset=UTF-8", True),
        ('application/json; charset="utf-8"', True),
        ("application/merge-patch+json", True),
        ("text/plain", False),
        ("application/x-www-form-urlencoded", False),
        ("multipart/form-data", False),
        ("application/json; charset=utf-16", False),
        ("", False),
        ("json", False),
    ],
)
def test_a_body_declared_as_anything_but_json_is_415(content_type: Any, accepted: bool) -> None:
    if accepted:
        assert body_json(b'{"a": 1}', content_type) == {"a": 1}
    else:
        with pytest.raises(UnsupportedMediaTypeError) as caught:
            body_json(b'{"a": 1}', content_type)
        assert caught.value.status == 415
    if accepted:
        assert body_json(b"  \n", content_type) is None  # no body: `{}`
    else:  # a request must declare JSON even without a body: no web page can send it
        with pytest.raises(UnsupportedMediaTypeError):
            body_json(b"", content_type)


@pytest.mark.parametrize(
    "number",
    [
        str(INT_MAX + 1),
        str(INT_MIN - 1),
        "1e309",
        "1E309",
        "1e+309",
        "-1e309",
        "10e308",
        "0.1e310",
        "1" + "0" * 309,
        "1" + "0" * 309 + ".5",
        "-" + "9" * 4000,
    ],
)
def test_a_number_out_of_range_is_422_however_it_is_spelled(number: str) -> None:
    for text in (number, f'{{"a": [1, {number}]}}', f'{{"id": "x", "n": {{"m": {number}}}}}'):
        with pytest.raises(JsonLimitError):
            loads(text)


@PROPERTY
@given(
    st.integers(-(2**70), 2**70) | st.integers(),
    st.sampled_from(["{}", '{{"ORD-1e5": [{}]}}', '["a0e", {}]']),
)
def test_an_integer_is_accepted_exactly_within_int64(number: int, template: str) -> None:
    text = template.format(number)
    if INT_MIN <= number <= INT_MAX:
        assert loads(text) == json.loads(text)
    else:
        with pytest.raises(JsonLimitError):
            loads(text)


def _reference_depth(text: str) -> int:
    """Depth by a plain character walk that tracks strings and escapes."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


JSON_TEXT_PIECES = st.lists(
    st.sampled_from(["[", "]", "{", "}", '"', "\\", '\\"', ",", ":", "a", "1", " "]), max_size=80
).map("".join)


@PROPERTY
@given(JSON_TEXT_PIECES)
def test_nesting_depth_agrees_with_a_character_walk(text: str) -> None:
    assert nesting_depth(text.encode()) == max(_reference_depth(text), 0)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(INT_MIN, INT_MAX)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@PROPERTY
@given(JSON, st.booleans())
def test_json_within_the_limits_round_trips(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, allow_nan=False)
    if nesting_depth(text.encode()) <= MAX_DEPTH:
        assert loads(text.encode()) == value


TEXTS = st.one_of(
    ANY_TEXT,
    st.recursive(
        st.none() | st.integers() | st.floats() | ANY_TEXT,
        lambda c: st.lists(c, max_size=3) | st.dictionaries(ANY_TEXT, c, max_size=3),
        max_leaves=10,
    ).map(json.dumps),
    JSON_TEXT_PIECES,
)


@PROPERTY
@given(TEXTS)
def test_any_text_is_either_refused_with_a_4xx_or_strictly_encodable_json(text: str) -> None:
    for raw in (text, text.encode("utf-8", "surrogatepass")):
        try:
            value = loads(raw)
        except JsonInputError as exc:
            assert exc.status in (400, 422) and str(exc)
            continue
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
        assert nesting_depth(encoded) <= MAX_DEPTH
        assert all(
            math.isfinite(x) and (isinstance(x, float) or INT_MIN <= x <= INT_MAX)
            for x in _numbers(value)
        )


def _numbers(value: Any) -> list[float]:
    if isinstance(value, dict):
        return [x for item in value.values() for x in _numbers(item)]
    if isinstance(value, list):
        return [x for item in value for x in _numbers(item)]
    return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []
