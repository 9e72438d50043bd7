"""Keep credentials out of every log line.

The server takes no credentials, but clients put them where they should not: an
`?api_key=` or `?token=` in a URL is printed by uvicorn's access log *and* by its
WebSocket handshake line (`"WebSocket /ws?session_id=...&api_key=..." [accepted]`, on
the `uvicorn.error` logger); at `--log-level trace` uvicorn prints each request's
headers (`Authorization`, `Cookie` ...) and websockets the handshake and the first
bytes of each frame. So the redaction is not a filter on one logger: it is the
process's log-record factory, and every record of every logger passes through it
before any handler sees it. It replaces, in the message and in each argument:

* the value of every query parameter whose name looks like a credential
  (`CREDENTIAL_NAME`: api_key, token, hf_token, key, secret, password, auth...);
* the value of a header or a JSON/Python key of such a name (`'authorization',
  'Bearer ...'`, `"api_key": "..."`, `Authorization: Basic ...`);
* anything after `Bearer ` / `Basic `, and strings shaped like Hugging Face or OpenAI
  tokens (`hf_...`, `sk-...`);
* the values of this process's own credential-like environment variables (HF_TOKEN,
  API_KEY, ...), wherever they appear.

with `[redacted]`. Tracebacks are formatted and redacted the same way.
"""

from __future__ import annotations

import logging
import os
import re
import traceback
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

NAME_WORDS = (
    r"token|key|secret|passw|pwd|auth|credential|signature|session|cookie|bearer|jwt|private"
)
CREDENTIAL_NAME = re.compile(NAME_WORDS, re.I)
REDACTED = "[redacted]"
ACCESS_LOGGER = "uvicorn.access"
MIN_SECRET_LENGTH = 8
"""Environment values shorter than this are not searched for (they would match ordinary text)."""

_QUERY_PAIR = re.compile(
    r"(?P<lead>^|[?&;'\"\s])(?P<name>[^=&?;#\s\"'<>]+)=(?P<value>[^&;#\s\"'<>]*)"
)
"""A `name=value` pair: in a query (after `?`, `&`, `;`), first in a quoted query string (trace
logs), or in free text."""
_NAME = rf"[\w.-]*(?:{NAME_WORDS})[\w.-]*"
_QUOTED_PAIR = re.compile(
    rf"(?P<q>['\"])(?P<name>{_NAME})(?P=q)\s*[:,]\s*b?(?P<vq>['\"])(?P<value>(?:\\.|(?!(?P=vq)).)*)(?P=vq)",
    re.I,
)
_HEADER_NAME = r"(?:[\w-]*-)?(?:authorization|cookie|api-?key|token|secret|password)"
_HEADER_LINE = re.compile(rf"(?P<name>(?<![\w-]){_HEADER_NAME}):[ \t]*(?P<value>[^\r\n]+)", re.I)
"""A header as `Name: value` (websockets' debug log of a handshake)."""
_SCHEME_VALUE = re.compile(r"\b(?P<scheme>Bearer|Basic|Token)\s+(?P<value>[^\s'\",;]+)", re.I)
_TOKEN_SHAPES = re.compile(r"\b(?:hf_[A-Za-z0-9]{16,}|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_\w{20,})\b")
_TRIGGER = re.compile(rf"{NAME_WORDS}|basic|%|hf_|sk-|gh[pousr]_", re.I)
"""Text without any of these cannot hold anything redacted (most log lines): a fast exit."""


def _query_value(match: re.Match[str]) -> str:
    if CREDENTIAL_NAME.search(unquote(match["name"])):
        return f"{match['lead']}{match['name']}={REDACTED}"
    return match[0]


def _quoted_value(match: re.Match[str]) -> str:
    start, end = match.span("value")
    whole = match[0]
    offset = match.start()
    return whole[: start - offset] + REDACTED + whole[end - offset :]


def _header_value(match: re.Match[str]) -> str:
    return f"{match['name']}: {REDACTED}"


def secrets_of(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the credential-like environment variables (longest first)."""
    values = {
        value
        for name, value in environ.items()
        if CREDENTIAL_NAME.search(name) and len(value) >= MIN_SECRET_LENGTH
    }
    return tuple(sorted(values, key=len, reverse=True))


_ENV_SECRETS: tuple[str, ...] = secrets_of(os.environ)


def redact(text: str, known: tuple[str, ...] | None = None) -> str:
    """`text` with every credential it shows replaced by `[redacted]`."""
    for secret in _ENV_SECRETS if known is None else known:
        if secret in text:
            text = text.replace(secret, REDACTED)
    if not _TRIGGER.search(text):
        return text
    if "=" in text:  # a %-encoded name is decoded before it is judged
        text = _QUERY_PAIR.sub(_query_value, text)
    text = _QUOTED_PAIR.sub(_quoted_value, text)
    text = _HEADER_LINE.sub(_header_value, text)
    text = _SCHEME_VALUE.sub(lambda m: f"{m['scheme']} {REDACTED}", text)
    return _TOKEN_SHAPES.sub(REDACTED, text)


def redact_query(path: str) -> str:
    """`path?query` with the values of credential-like parameters replaced."""
    return _QUERY_PAIR.sub(_query_value, path) if "?" in path else path


PLAIN = (int, float, bool, type(None))


def _redacted_arg(arg: Any) -> Any:
    """An argument as it may be formatted: strings redacted, anything else redacted as text."""
    if isinstance(arg, str):
        return redact(arg)
    if isinstance(arg, PLAIN):
        return arg
    text = arg.decode("latin-1") if isinstance(arg, (bytes, bytearray)) else str(arg)
    cleaned = redact(text)
    return arg if cleaned == text else cleaned


def redact_record(record: logging.LogRecord) -> None:
    """Redact a record in place: its message as it will print, and its traceback.

    The message is judged once formatted (a header's name and value may be two arguments).
    A record that shows a credential is rewritten as its redacted text, except uvicorn's
    access records, whose formatter needs their arguments: each of those is redacted."""
    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 - a malformed record: its handler reports it; redact parts
        message = None
    if message is None or redact(message) != message:
        if record.name == ACCESS_LOGGER and isinstance(record.args, tuple):
            record.args = tuple(_redacted_arg(arg) for arg in record.args)
        elif message is not None:
            record.msg, record.args = redact(message), None
        else:
            record.msg = redact(str(record.msg))
            record.args = None
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip())
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


class _RedactingFactory:
    """Wraps the log-record factory in place when installed, so every record is redacted."""

    def __init__(self, inner: Callable[..., logging.LogRecord]) -> None:
        self.inner = inner

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.inner(*args, **kwargs)
        redact_record(record)
        return record


def install() -> None:
    """Redact every log record of this process from now on (idempotent)."""
    factory = logging.getLogRecordFactory()
    if not isinstance(factory, _RedactingFactory):
        logging.setLogRecordFactory(_RedactingFactory(factory))
