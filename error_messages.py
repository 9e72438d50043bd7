"""How an error message quotes what a client sent: short, and never failing on it.

Shared by the server's request checks and the services' parameter checks, so every
4xx names the offending value the same way. This module imports nothing of the
package's.
"""

from __future__ import annotations

from typing import Any

SHOWN_CHARS = 140
"""Error messages quote a value up to this many characters (a whole client-chosen episode id)."""


def shown(value: Any) -> str:
    """A value as an error message quotes it: short, and never a huge int's digits
    (whose conversion to text raises ValueError past 4,300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except ValueError:  # a huge int somewhere inside a container
        return f"a {type(value).__name__} holding an integer too long to show"
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}... ({len(text)} characters)"


def shown_names(names: list[str], limit: int = 5) -> str:
    """Names as an error message lists them: the first `limit`, then how many more."""
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(shown(name) for name in names[:limit]) + more
