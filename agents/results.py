"""The run's files: the results document, the trajectory log (JSONL) and atomic writes.

The results file keeps every episode's record plus the mean scores per
environment and overall, and the evaluation tables (`aggregate`). The
trajectory log gets one line per episode as soon as that episode is printed,
so a long sweep that dies half way keeps what it played.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from types import TracebackType
from typing import Any, TextIO

from .config import ENV_NAMES, Config
from .fault_blame import failure_counts
from .model import endpoint_label
from .output import Redactor


def summarize(tasks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean score per environment (of the episodes run) and overall, the success count, and the
    failures by cause: ServiceBench's injected faults, or the agent's own (fault_blame.py)."""
    mean_score: dict[str, float] = {}
    for env in ENV_NAMES:
        scores = [t["score"] for t in tasks if t["env"] == env]
        if scores:
            mean_score[env] = round(fmean(scores), 6)
    mean_score["overall"] = round(fmean(t["score"] for t in tasks), 6) if tasks else 0.0
    return {
        "tasks": len(tasks),
        "successes": sum(1 for t in tasks if t["success"]),
        "mean_score": mean_score,
        "failures": failure_counts(tasks),
    }


def seeds_label(config: Config) -> str:
    """How the report names the run's seeds."""
    if config.split is not None:
        count = f"the first {config.limit} tasks" if config.limit else "the first task"
        if config.family is not None:
            which = f"{count} of family {config.family}"
        else:
            which = (
                f"{count} (its families interleaved)" if config.limit else f"{count} of each family"
            )
        return f"split {config.split}: {which}; each task's seed is in its spec"
    if config.seed_spec is not None:
        return f"{config.seed_spec} ({len(config.seeds)} seeds)"
    return "canonical tasks" if config.seed is None else str(config.seed)


def results_document(
    config: Config,
    model_label: str,
    tasks: Sequence[dict[str, Any]],
    duration_s: float,
    aggregate: dict[str, Any],
    run_facts: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The results file: the run's settings and facts, the summary, the tables, every episode."""
    return {
        "model": model_label,
        "api_base_url": None if config.fallback else endpoint_label(config.api_base_url),
        "env_base_url": config.env_base_url,
        "fallback": config.fallback,
        "faults": config.faults,
        "seed": config.seed,
        "seeds": list(config.seeds) if config.split is None else None,
        "split": config.split,
        "family": config.family,
        "limit": config.limit,
        "repeats": config.repeats,
        "duration_s": round(duration_s, 3),
        **(run_facts or {}),
        "summary": summarize(tasks),
        "aggregate": aggregate,
        "tasks": list(tasks),
    }


def write_atomically(path: str, text: str) -> Path:
    """Write `text` to `path` through a temporary file, so a reader never sees half a file."""
    target = Path(path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def write_results(path: str, document: dict[str, Any], redactor: Redactor) -> Path:
    """Write `document` (redacted) atomically."""
    text = json.dumps(redactor.data(document), indent=2, ensure_ascii=False, default=str)
    return write_atomically(path, text + "\n")


class TrajectoryLog:
    """The JSONL file of a run: one redacted, compact JSON line per episode, flushed."""

    def __init__(self, path: str, redactor: Redactor) -> None:
        self.path = Path(path).resolve()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._redact = redactor
        # open until close(): the log is written one episode at a time over the whole run
        self._stream: TextIO | None = open(self.path, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, record: dict[str, Any]) -> None:
        if self._stream is None:
            raise ValueError("the trajectory log is closed")
        # ASCII-escaped: no Unicode line separator can split a line for a reader using splitlines
        self._stream.write(
            json.dumps(self._redact.data(record), ensure_ascii=True, default=str) + "\n"
        )
        self._stream.flush()

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def __enter__(self) -> TrajectoryLog:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
