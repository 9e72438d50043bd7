"""Reading a JSON action out of free model text.

Models that do not (or cannot) use tool calls still tend to write a JSON
object somewhere in their reply: bare, in a ```json fence, after some prose,
or wrapped in `<tool_call>` tags; reasoning models add a `<think>` block
first. This finds the first JSON object that parses, in that order of
preference, and says clearly why when there is none.
"""

from __future__ import annotations

import json
import re
from typing import Any

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_DECODER = json.JSONDecoder()


class ParseError(ValueError):
    """The reply holds no usable JSON object; the message says what was wrong."""


def _objects_in(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object embedded in `text`, left to right."""
    found: list[dict[str, Any]] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = _DECODER.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        position = text.find("{", end)
    return found


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in `text`: fenced blocks first, then anywhere."""
    cleaned = _THINK.sub("", text or "").strip()
    if not cleaned:
        raise ParseError("the reply is empty")
    for block in _FENCE.findall(cleaned):
        objects = _objects_in(block)
        if objects:
            return objects[0]
    objects = _objects_in(cleaned)
    if objects:
        return objects[0]
    preview = cleaned[:80] + ("..." if len(cleaned) > 80 else "")
    raise ParseError(f"no JSON object found in the reply {preview!r}")


def parse_arguments(arguments: str) -> dict[str, Any]:
    """A tool call's arguments as a dict (an empty string means no arguments)."""
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise ParseError(f"tool call arguments are not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ParseError(f"tool call arguments must be a JSON object, got {type(value).__name__}")
    return value


def validation_message(exc: Exception, limit: int = 400) -> str:
    """A compact, model-readable summary of a pydantic ValidationError (or any error)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        parts = []
        for error in errors():
            where = ".".join(str(p) for p in error.get("loc", ())) or "(object)"
            parts.append(f"{where}: {error.get('msg', 'invalid')}")
        text = "; ".join(parts)
    else:
        text = str(exc)
    return text if len(text) <= limit else text[: limit - 3] + "..."
