"""Untrusted JSON in: the one parser of every transport (HTTP, WebSocket, MCP).

Python's `json` accepts more than JSON, and more than the rest of the server
survives: NaN and Infinity; duplicate keys (the last one wins); lone surrogates
written as `\\ud800` escapes, which parse fine and break UTF-8 encoding later
(of `/state`, for the rest of the episode); nesting about 1,000 deep, which raises
RecursionError, and about 500 deep, which parses and then breaks encoding later;
integers past 4,300 digits, which raise ValueError. `loads` refuses each of them
before anything recursive runs, so nothing it returns can poison an episode:

* `MalformedJsonError` (400): not JSON, or not interoperable JSON (RFC 8259 /
  I-JSON, RFC 7493): a syntax error or truncation, bytes that are not UTF-8, a
  byte order mark, NaN or Infinity, a lone surrogate, a duplicate key.
* `UnsupportedMediaTypeError` (415): an HTTP body declared as something else
  than JSON in UTF-8 (a missing Content-Type is read as JSON).
* `JsonLimitError` (422): JSON beyond this server's limits: nesting deeper than
  `MAX_DEPTH`, an integer outside the signed 64-bit range, a number beyond the
  range of a double (1e400).

The checks cost little on ordinary bodies: two `count`s decide that a body cannot
be deep, the hooks run once per object and per number, and the surrogate check
runs only when the text escapes one.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from itertools import accumulate
from typing import Any, Optional, Union

from server.episode import EpisodeError
from server.gateway import InvalidRequestError
from services.registry import shown

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted, the outermost one counting as 1."""
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
"""Integers are accepted within the signed 64-bit range."""
_MAX_INT_CHARS = len(str(INT_MIN))  # a longer literal is out of range: no need to convert it

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class JsonInputError(EpisodeError):
    """A body or message that is not JSON this server accepts."""


class MalformedJsonError(JsonInputError):
    status = 400


class UnsupportedMediaTypeError(JsonInputError):
    status = 415


class JsonLimitError(JsonInputError, InvalidRequestError):
    status = 422

    def __init__(self, message: str) -> None:
        super().__init__(message, [{"loc": ["body"], "msg": message, "type": "json_limit"}])


def _integer(literal: str) -> int:
    value = int(literal) if len(literal) <= _MAX_INT_CHARS else None
    if value is None or not INT_MIN <= value <= INT_MAX:
        raise JsonLimitError(f"integer {shown(literal)} is outside the accepted range "
                             f"[-2^63, 2^63 - 1]")
    return value


def _number(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise JsonLimitError(f"number {shown(literal)} is beyond the range of a double")
    return value


def _constant(name: str) -> Any:
    raise MalformedJsonError(f"malformed JSON: {name} is not a JSON value (JSON numbers are finite)")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        duplicate = next(key for key, count in Counter(key for key, _ in pairs).items() if count > 1)
        raise MalformedJsonError(f"malformed JSON: duplicate key {shown(duplicate)} in an object")
    return result


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_int=_integer, parse_float=_number,
                            parse_constant=_constant)


def nesting_depth(text: str) -> int:
    """How deep arrays and objects nest in `text`, brackets inside strings not counted.

    An unterminated string (a truncated body) ends the count where it starts.
    """
    outside = _STRING.sub("", text)
    quote = outside.find('"')
    if quote >= 0:
        outside = outside[:quote]
    steps = map(_DEPTH_STEP.__getitem__, _BRACKET.findall(outside))
    return max(accumulate(steps, initial=0))


def check_depth(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH, before any recursive parsing."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:  # cannot nest deeper: the usual case
        return
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise JsonLimitError(f"JSON nested {depth} levels deep; at most {MAX_DEPTH} are accepted")


def _check_unicode(value: Any) -> None:
    """Refuse a lone surrogate anywhere in `value` (keys included): it has no UTF-8 encoding."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise MalformedJsonError(f"malformed JSON: a string holds the lone surrogate "
                                 f"{exc.object[exc.start]!r}, which is not Unicode text") from None


def decode_text(raw: bytes) -> str:
    """`raw` as UTF-8 text, or a 400 saying where it is not."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedJsonError(f"malformed JSON: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def loads(raw: Union[bytes, str]) -> Any:
    """The JSON value of `raw`, or a `JsonInputError` saying what is wrong with it."""
    if isinstance(raw, bytes):
        text = decode_text(raw)
    else:
        text = raw
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise MalformedJsonError(f"malformed JSON: the lone surrogate {exc.object[exc.start]!r} "
                                     "is not Unicode text") from None
    if text.startswith("\ufeff"):
        raise MalformedJsonError("malformed JSON: it starts with a byte order mark (U+FEFF)")
    check_depth(text)
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise MalformedJsonError(f"malformed JSON: {exc}") from None
    except RecursionError:  # unreachable past check_depth; kept so that it could never be a 500
        raise JsonLimitError(f"JSON nested too deep; at most {MAX_DEPTH} levels are accepted") from None
    if _SURROGATE_ESCAPE.search(text):
        _check_unicode(value)
    return value


def check_media_type(content_type: Optional[str]) -> None:
    """Refuse a body declared as anything but JSON in UTF-8; an undeclared one is read as JSON."""
    if content_type is None or content_type == "application/json":  # nearly every request
        return
    media, *parameters = content_type.split(";")
    media = media.strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise UnsupportedMediaTypeError(
            f"Content-Type must be application/json, got {shown(content_type)}")
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            raise UnsupportedMediaTypeError(f"JSON must be UTF-8, got {shown(parameter.strip())}")


def body_json(raw: bytes, content_type: Optional[str]) -> Any:
    """An HTTP request body's JSON value (None if the body is empty), or a 4xx naming the problem."""
    if not raw.strip():
        return None
    check_media_type(content_type)
    return loads(raw)
