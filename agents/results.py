"""The results file: every task's record plus the mean scores per environment and overall."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from statistics import fmean
from typing import Any, Sequence

from agents.config import ENV_NAMES, Config
from agents.output import Redactor


def summarize(tasks: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean score per environment (of the tasks run) and overall, and the success count."""
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
    }


def results_document(config: Config, model_label: str, tasks: Sequence[dict[str, Any]],
                     duration_s: float) -> dict[str, Any]:
    return {
        "model": model_label,
        "api_base_url": None if config.fallback else config.api_base_url,
        "env_base_url": config.env_base_url,
        "fallback": config.fallback,
        "seed": config.seed,
        "duration_s": round(duration_s, 3),
        "summary": summarize(tasks),
        "tasks": list(tasks),
    }


def write_results(path: str, document: dict[str, Any], redactor: Redactor) -> Path:
    """Write `document` (redacted) atomically, so a reader never sees half a file."""
    target = Path(path).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(redactor.data(document), indent=2, ensure_ascii=False, default=str)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text + "\n")
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
