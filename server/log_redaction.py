"""Keep credentials out of the access log.

The server takes no credentials, but clients put them where they should not: an
`?api_key=` or `?token=` in a URL would be written verbatim by uvicorn's access
log (the only place a request reaches a log; headers and bodies never do). This
filter replaces the value of every query parameter whose name looks like a
credential with `[redacted]` before the line is formatted.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import unquote

CREDENTIAL_NAME = re.compile(
    r"token|key|secret|passw|auth|credential|signature|session|cookie", re.I
)
ACCESS_LOGGER = "uvicorn.access"
REDACTED = "[redacted]"


def redact_query(path: str) -> str:
    """`path?query` with the values of credential-like parameters replaced."""
    path_only, separator, query = path.partition("?")
    if not separator:
        return path
    pairs = []
    for pair in query.split("&"):
        name, equals, _ = pair.partition("=")
        pairs.append(
            f"{name}={REDACTED}" if equals and CREDENTIAL_NAME.search(unquote(name)) else pair
        )
    return f"{path_only}?{'&'.join(pairs)}"


class RedactCredentials(logging.Filter):
    """For uvicorn's access records: args are (client, method, path?query, http version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(
                redact_query(arg) if isinstance(arg, str) and "?" in arg else arg for arg in args
            )
        return True


def install() -> None:
    """Attach the filter to uvicorn's access logger, once (idempotent)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if not any(isinstance(existing, RedactCredentials) for existing in logger.filters):
        logger.addFilter(RedactCredentials())
