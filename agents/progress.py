"""Progress of a run on stderr, without a dependency.

On a terminal: one bar redrawn in place (erased before any log record is
written, so diagnostics stay readable). Elsewhere (a CI log, a file): a plain
line at every tenth of the run, which is readable and short. `--no-progress`:
nothing. stdout is never touched: it belongs to the [START]/[STEP]/[END] lines.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TextIO

BAR_WIDTH = 28
ERASE_LINE = "\r\x1b[K"
LINE_STEPS = 10


def _clock_text(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress(logging.Filter):
    """Counts finished episodes and shows it; also a logging filter that erases the bar first."""

    def __init__(
        self,
        total: int,
        stream: TextIO,
        enabled: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.total, self.stream, self.clock = total, stream, clock
        self.mode = (
            "off" if not enabled or total <= 0 else ("bar" if _is_terminal(stream) else "lines")
        )
        self.done = self.successes = 0
        self.score_sum = 0.0
        self.started = clock()
        self._lock = threading.Lock()
        self._drawn = False
        self._handlers: list[logging.Handler] = []

    def __enter__(self) -> Progress:
        if self.mode == "bar":
            self._handlers = list(logging.getLogger().handlers)
            for handler in self._handlers:
                handler.addFilter(self)
            self._draw()
        return self

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            if self._drawn:
                self.stream.write("\n")
                self.stream.flush()
                self._drawn = False
        for handler in self._handlers:
            handler.removeFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        """Erase the bar so that the log record gets a line of its own; the next update redraws it."""
        with self._lock:
            if self._drawn:
                self.stream.write(ERASE_LINE)
                self._drawn = False
        return True

    def advance(self, score: float, success: bool) -> None:
        """One more episode finished."""
        self.done += 1
        self.score_sum += score
        self.successes += int(success)
        if self.mode == "bar":
            self._draw()
        elif self.mode == "lines" and (
            self.done * LINE_STEPS // self.total != (self.done - 1) * LINE_STEPS // self.total
        ):
            with self._lock:
                self.stream.write(f"progress: {self.status()}\n")
                self.stream.flush()

    def status(self) -> str:
        elapsed = self.clock() - self.started
        text = f"{self.done}/{self.total} episodes ({100 * self.done // self.total}%)"
        if self.done:
            text += f", mean score {self.score_sum / self.done:.3f}, {self.successes} successful"
        text += f", {_clock_text(elapsed)} elapsed"
        if 0 < self.done < self.total:
            text += f", eta {_clock_text(elapsed / self.done * (self.total - self.done))}"
        return text

    def _draw(self) -> None:
        filled = BAR_WIDTH * self.done // self.total
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        with self._lock:
            self.stream.write(f"{ERASE_LINE}[{bar}] {self.status()}")
            self.stream.flush()
            self._drawn = True
