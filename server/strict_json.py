"""Untrusted JSON in: the one parser of every transport (HTTP, WebSocket, MCP).

Python's `json` accepts more than JSON, and more than the rest of the server
survives: NaN and Infinity; duplicate keys (the last one wins); lone surrogates
written as `\\ud800` escapes (and, from bytes, as CESU-8), which parse fine and
break UTF-8 encoding later (of `/state`, for the rest of the episode); nesting
about 1,000 deep, which raises RecursionError, and about 500 deep, which parses
and then breaks encoding later; integers past 4,300 digits, which raise
ValueError. `loads` refuses each of them before anything recursive runs, so
nothing it returns can poison an episode:

* `MalformedJsonError` (400): not JSON, or not interoperable JSON (RFC 8259 /
  I-JSON, RFC 7493): a syntax error or truncation, bytes that are not UTF-8, a
  byte order mark, NaN or Infinity, a lone surrogate, a duplicate key.
* `UnsupportedMediaTypeError` (415): an HTTP request (every one that carries a body
  changes state: /reset, /step, /mcp) whose Content-Type is not JSON in UTF-8, or that
  has none, even without a body. A web page can send another origin only the types of
  an HTML form (text/plain, form data) or none, without asking the server first (a CORS
  preflight, refused unless CORS_ORIGINS allows that origin): so no page can reset or
  step a server it merely reaches, e.g. one on the visitor's localhost.
* `JsonLimitError` (422): JSON beyond this server's limits: nesting deeper than
  `MAX_DEPTH`, an integer outside the signed 64-bit range, a number beyond the
  range of a double (1e400).

The parser is jiter (pydantic's, in Rust, not recursive in Python), which refuses
NaN, lone surrogates, bad UTF-8 and, asked to, duplicate keys, and is faster than
`json` without any of those checks. Around it, the checks cost little on ordinary
bodies: one `translate` of the body to the shapes that matter, then two `count`s
and a substring search decide that it cannot nest too deep and that no number in it
can be out of range (only then are the numbers walked).
"""

from __future__ import annotations

import math
import re
from itertools import accumulate
from typing import Any

import jiter

from ..error_messages import shown
from .lifecycle.episode import EpisodeError
from .lifecycle.episodes import InvalidRequestError

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted, the outermost one counting as 1."""
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
"""Integers are accepted within the signed 64-bit range."""

_BOM = b"\xef\xbb\xbf"
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_DEPTH_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_SHAPES = bytes.maketrans(b"0123456789Ee{", b"0000000000ee[")
"""Every digit a 0, every e an e and every opening bracket a [, for the checks to count them."""
_INT64_DIGITS = 19
_LIMIT_MESSAGES = ("number out of range", "recursion limit exceeded")
_NON_FINITE = re.compile(rb"\bNaN\b|\bInfinity\b")


class JsonInputError(EpisodeError):
    """A body or message that is not JSON this server accepts."""


class MalformedJsonError(JsonInputError):
    status = 400


class UnsupportedMediaTypeError(JsonInputError):
    status = 415


class JsonLimitError(JsonInputError, InvalidRequestError):
    """JSON beyond the limits; `path` locates a number that is (in `value`, the parsed JSON,
    so that a transport can still answer the request it belongs to)."""

    status = 422

    def __init__(self, message: str, path: tuple[str | int, ...] = (), value: Any = None) -> None:
        where = ".".join(map(str, path))
        super().__init__(
            f"{where}: {message}" if where else message,
            [{"loc": ["body", *path], "msg": message, "type": "json_limit"}],
        )
        self.path = path
        self.value = value


def nesting_depth(data: bytes) -> int:
    """How deep arrays and objects nest in `data`, brackets inside strings not counted.

    An unterminated string (a truncated body) ends the count where it starts.
    """
    outside = _STRING.sub(b"", data)
    quote = outside.find(b'"')
    if quote >= 0:
        outside = outside[:quote]
    steps = map(_DEPTH_STEP.__getitem__, outside.translate(None, _NOT_BRACKETS))
    return max(accumulate(steps, initial=0))


def check_depth(data: bytes, shapes: bytes | None = None) -> None:
    """Refuse nesting deeper than MAX_DEPTH, before any recursive parsing."""
    shapes = data.translate(_SHAPES) if shapes is None else shapes
    if shapes.count(b"[") <= MAX_DEPTH:  # cannot nest deeper: the usual case
        return
    depth = nesting_depth(data)
    if depth > MAX_DEPTH:
        raise JsonLimitError(f"JSON nested {depth} levels deep; at most {MAX_DEPTH} are accepted")


def _may_hold_big_numbers(shapes: bytes) -> bool:
    """False if no integer can be outside int64 (19+ digits) nor a float overflow (an exponent:
    a digit then e). True now and then for nothing (19 digits in all, "1e" in a string)."""
    return shapes.count(b"0") >= _INT64_DIGITS or b"0e" in shapes


def _check_numbers(value: Any, path: tuple[str | int, ...] = ()) -> None:
    """Refuse an integer outside int64 or a float that overflowed, anywhere in `value`,
    naming where (e.g. `params.arguments.seed`)."""
    if isinstance(value, dict):
        for key, item in value.items():
            _check_numbers(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_numbers(item, (*path, index))
    elif isinstance(value, float) and math.isinf(value):
        raise JsonLimitError("a number is beyond the range of a double", path)
    elif isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX:
        raise JsonLimitError(
            f"an integer is outside the accepted range [-2^63, 2^63 - 1]: {shown(value)}", path
        )


def _refusal(message: str, data: bytes) -> JsonInputError:
    """The error for jiter's `message` about `data`, with a hint where its words are terse."""
    if message.startswith(_LIMIT_MESSAGES):
        return JsonLimitError(f"JSON beyond the limits: {message}")
    if "surrogate" in message or "hex escape" in message:
        message += " (a \\u escape of U+D800-U+DFFF must be half of a valid surrogate pair)"
    elif _NON_FINITE.search(data):
        message += " (NaN and Infinity are not JSON: JSON numbers are finite)"
    return MalformedJsonError(f"malformed JSON: {message}")


def loads(raw: bytes | str) -> Any:
    """The JSON value of `raw`, or a `JsonInputError` saying what is wrong with it."""
    if isinstance(raw, bytes):
        data = raw
    else:
        try:
            data = raw.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise MalformedJsonError(
                f"malformed JSON: the lone surrogate {exc.object[exc.start]!r} is not Unicode text"
            ) from None
    if data.startswith(_BOM):
        raise MalformedJsonError("malformed JSON: it starts with a byte order mark (U+FEFF)")
    shapes = data.translate(_SHAPES)
    check_depth(data, shapes)
    try:
        value = jiter.from_json(
            data, allow_inf_nan=False, catch_duplicate_keys=True, cache_mode="none"
        )
    except ValueError as exc:
        raise _refusal(str(exc), data) from None
    if _may_hold_big_numbers(shapes):
        try:
            _check_numbers(value)
        except JsonLimitError as exc:
            exc.value = value
            raise
    return value


JSON_REQUIRED = (
    "send Content-Type: application/json (a state-changing request must declare JSON, even "
    "with an empty body, so that no web page can send it from another site)"
)


def check_media_type(content_type: str | None) -> None:
    """Refuse a request not declared as JSON in UTF-8, or not declared at all."""
    if content_type == "application/json":  # nearly every request
        return
    if content_type is None:
        raise UnsupportedMediaTypeError(f"no Content-Type: {JSON_REQUIRED}")
    media, *parameters = content_type.split(";")
    media = media.strip().lower()
    if media != "application/json" and not (
        media.startswith("application/") and media.endswith("+json")
    ):
        raise UnsupportedMediaTypeError(
            f"Content-Type must be application/json, got {shown(content_type)}: {JSON_REQUIRED}"
        )
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            raise UnsupportedMediaTypeError(f"JSON must be UTF-8, got {shown(parameter.strip())}")


def body_json(raw: bytes, content_type: str | None) -> Any:
    """An HTTP request body's JSON value (None if the body is empty), or a 4xx naming the
    problem; a request that does not declare JSON is refused, empty or not (415)."""
    check_media_type(content_type)
    if not raw.strip():
        return None
    return loads(raw)
