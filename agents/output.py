"""What the run prints: the structured stdout lines, and redacted diagnostics on stderr.

stdout carries exactly the [START]/[STEP]/[END] lines, one per call, each
flushed, so that a harness can parse them; everything else goes to stderr.
Every string that leaves the process passes through a `Redactor`, so the API
token never appears even if an endpoint echoes it back in an error message.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

REDACTED = "***"
_WHITESPACE = re.compile(r"\s+")


class Redactor:
    """Replaces every occurrence of the given secrets with `***`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = tuple(
            sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)
        )

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        return text

    def data(self, value: Any) -> Any:
        """`value` (JSON-like) with every string redacted, for the results file."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self(str(k)): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) collapsed to one space."""
    return _WHITESPACE.sub(" ", text).strip()


def compact_json(value: Any) -> str:
    """One-line compact JSON; ASCII-escaped so that no Unicode line separator sneaks in."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True, default=str)


def _fixed(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def format_start(task_id: str, env: str, model: str) -> str:
    return f"[START] task={task_id} env={env} model={one_line(model)}"


def format_step(step: int, action: Any, reward: float, done: bool, error: str | None) -> str:
    error_text = "null" if not error else one_line(error)
    return (
        f"[STEP] step={step} action={compact_json(action)} reward={_fixed(reward, 2)} "
        f"done={'true' if done else 'false'} error={error_text}"
    )


def format_end(success: bool, steps: int, score: float, rewards: Iterable[float]) -> str:
    joined = ",".join(_fixed(r, 2) for r in rewards)
    return f"[END] success={'true' if success else 'false'} steps={steps} score={_fixed(score, 3)} rewards={joined}"


class StructuredLog:
    """Writes the structured lines to stdout (redacted, flushed)."""

    def __init__(self, redactor: Redactor, stream: TextIO | None = None) -> None:
        self.redact = redactor
        self.stream = stream

    def _emit(self, line: str) -> None:
        stream = self.stream or sys.stdout
        stream.write(self.redact(line) + "\n")
        stream.flush()

    def start(self, task_id: str, env: str, model: str) -> None:
        self._emit(format_start(task_id, env, model))

    def step(self, step: int, action: Any, reward: float, done: bool, error: str | None) -> None:
        self._emit(format_step(step, action, reward, done, error))

    def end(self, success: bool, steps: int, score: float, rewards: Iterable[float]) -> None:
        self._emit(format_end(success, steps, score, rewards))

    def buffered(self) -> StructuredLog:
        """A log with the same redaction that collects its lines, for an episode played concurrently."""
        return StructuredLog(self.redact, io.StringIO())

    def print_block(self, collected: StructuredLog) -> None:
        """Print, in one write, the lines a `buffered()` log collected (already redacted)."""
        text = collected.stream.getvalue() if isinstance(collected.stream, io.StringIO) else ""
        if text:
            stream = self.stream or sys.stdout
            stream.write(text)
            stream.flush()


class RedactingStream:
    """A text stream wrapper that redacts everything written through it (used for stderr)."""

    def __init__(self, inner: TextIO, redactor: Redactor) -> None:
        self._inner = inner
        self._redact = redactor

    def write(self, text: str) -> int:
        self._inner.write(self._redact(text))
        return len(text)

    def flush(self) -> None:
        self._inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@contextlib.contextmanager
def diagnostics(redactor: Redactor, stream: TextIO | None = None) -> Iterator[logging.Logger]:
    """Route diagnostics (ours and the libraries') to a redacted stderr for the duration.

    sys.stderr itself is wrapped too, so that whatever a library prints is redacted;
    everything is restored afterwards (which matters when a test calls `main` in process).
    """
    redacted = RedactingStream(stream or sys.stderr, redactor)
    root = logging.getLogger()
    saved = (sys.stderr, root.handlers[:], root.level)
    noisy = {
        name: logging.getLogger(name).level for name in ("httpx", "httpcore", "openai", "httpx2")
    }
    handler = logging.StreamHandler(redacted)  # type: ignore[arg-type]
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    sys.stderr = redacted  # type: ignore[assignment]
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    for name in noisy:
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        yield logging.getLogger("inference")
    finally:
        handler.flush()
        sys.stderr, root.handlers[:] = saved[0], saved[1]
        root.setLevel(saved[2])
        for name, level in noisy.items():
            logging.getLogger(name).setLevel(level)
