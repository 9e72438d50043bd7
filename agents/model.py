"""One chat-completions call through the `openai` client, with bounded retries.

Timeouts, rate limits, connection errors and 5xx answers are retried with a
doubling, capped backoff; other errors (a 400, a 401) fail at once since
asking again cannot help. Every call also respects the task's deadline, so a
dead endpoint costs bounded time. The openai client's own retries are off:
the retry policy is ours, configurable and logged.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai

from .config import Config
from .output import one_line

log = logging.getLogger("inference.model")

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
TIME_SPENT = "the task's share of INFERENCE_TIME_BUDGET_S is spent"


class ModelCallError(Exception):
    """The model gave no answer: after the retries, or because retrying cannot help."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelReply:
    """The assistant message: its text and its tool calls (arguments still as JSON text)."""

    content: str
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {})


def reply_from_response(response: Any) -> ModelReply:
    """The first choice's message, or a ModelCallError if the response has none."""
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    if message is None:
        raise ModelCallError("the model's response has no message")
    calls = []
    for index, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if not name:
            continue
        call_id = getattr(call, "id", None) or f"call_{index}"
        calls.append(
            ToolCall(str(call_id), str(name), _arguments_text(getattr(function, "arguments", None)))
        )
    return ModelReply(content=str(getattr(message, "content", None) or ""), tool_calls=tuple(calls))


def _status_of(exc: Exception) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def is_retryable(exc: Exception) -> bool:
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    status = _status_of(exc)
    return status is not None and (status >= 500 or status in RETRYABLE_STATUS)


def describe(exc: Exception) -> str:
    """A one-line description of a model error, at most 300 characters."""
    status = _status_of(exc)
    prefix = f"HTTP {status} " if status is not None else ""
    text = one_line(f"{prefix}{type(exc).__name__}: {exc}")
    return text if len(text) <= 300 else text[:297] + "..."


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    raw = headers.get("retry-after") if headers is not None else None
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


class ChatModel:
    """Calls the configured endpoint; `complete` returns a reply or raises ModelCallError."""

    def __init__(self, config: Config, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self._sleep = sleep
        self._client = openai.OpenAI(
            base_url=config.api_base_url,
            api_key=config.api_key or "not-needed",
            timeout=config.model_timeout_s,
            max_retries=0,
        )

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        deadline: float | None = None,
    ) -> ModelReply:
        config = self.config
        attempts = config.model_max_retries + 1
        last_error = "no attempt made"
        for attempt in range(attempts):
            remaining = (
                (deadline - time.monotonic()) if deadline is not None else config.model_timeout_s
            )
            if remaining <= 0:
                raise ModelCallError(f"{TIME_SPENT} ({last_error})")
            request: dict[str, Any] = {
                "model": config.model_name,
                "messages": messages,
                "temperature": config.model_temperature,
                "max_tokens": config.model_max_tokens,
                "timeout": min(config.model_timeout_s, remaining),
            }
            if tools:
                request["tools"] = tools
            try:
                return reply_from_response(self._client.chat.completions.create(**request))
            except openai.OpenAIError as exc:
                failure, last_error = exc, describe(exc)
                if not is_retryable(exc):
                    raise ModelCallError(last_error, _status_of(exc)) from None
            except (
                Exception
            ) as exc:  # a malformed body or an empty answer: retried like any model error
                failure = exc
                last_error = (
                    str(exc)
                    if isinstance(exc, ModelCallError)
                    else f"unusable response: {describe(exc)}"
                )
            if attempt + 1 < attempts:
                self._back_off(failure, attempt, attempts, last_error, deadline)
        raise ModelCallError(f"model call failed after {attempts} attempts: {last_error}")

    def _back_off(
        self, exc: Exception, attempt: int, attempts: int, error: str, deadline: float | None
    ) -> None:
        """Sleep before the next attempt: doubling, capped, honouring Retry-After, within the deadline."""
        config = self.config
        delay = min(config.model_backoff_s * 2**attempt, config.model_backoff_max_s)
        delay = min(max(delay, _retry_after(exc) or 0.0), config.model_backoff_max_s)
        if deadline is not None:
            delay = min(delay, max(0.0, deadline - time.monotonic()))
        log.warning(
            "model call failed (attempt %d/%d): %s; retrying in %.2fs",
            attempt + 1,
            attempts,
            error,
            delay,
        )
        self._sleep(delay)
