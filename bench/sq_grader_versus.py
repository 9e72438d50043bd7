"""The Support Queue grader of this checkout against another checkout's, side by side.

    git worktree add /tmp/sq-main main       # or: git archive main | tar -x -C /tmp/sq-main
    .venv/bin/python -m bench.sq_grader_versus /tmp/sq-main --seeds 1-30

Both graders run in one process on the same actions (this checkout's gold and heuristic
action of every ticket of the canonical tasks and the seeds' variants; each checkout grades
them against its own tickets, which must be the same), in interleaved rounds, so a busy
machine slows both alike. Reports the best round of each in process CPU time per action and
the ratio this/other (below 1: this checkout grades faster). The other checkout is imported
under another package name, so it needs only relative imports inside its package (as
`server/` has). Nothing here is a test.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.sq_grader_bench import seeded_cases
from bench.sq_variants_bench import seed_range
from servicebench_support_queue.server.support_queue.grader import grade

OTHER = "sq_grader_other"


def other_checkout(path: Path) -> tuple[ModuleType, ModuleType, ModuleType]:
    """The other checkout's models, grader and environment, imported as package `OTHER`."""
    alias = Path(tempfile.mkdtemp(prefix="sq-versus-")) / OTHER
    alias.symlink_to(path.resolve(), target_is_directory=True)
    sys.path.insert(0, str(alias.parent))
    return tuple(
        importlib.import_module(f"{OTHER}.{name}")
        for name in ("models", "server.support_queue.grader", "server.support_queue.environment")
    )  # type: ignore[return-value]


def round_seconds(grade_one: Callable[..., Any], graded: list[tuple[Any, Any, Any]]) -> float:
    started = time.process_time()
    for ticket, action, facts in graded:
        grade_one(ticket, action, facts)
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout's root directory")
    parser.add_argument("--seeds", type=seed_range, default=seed_range("1-30"))
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    models, other_grader, other_environment = other_checkout(args.other)
    mine, theirs = [], []
    for task_id, seed, ticket, action, facts in seeded_cases(args.seeds):
        variant = other_environment.SupportQueueEnvironment.variant_for(task_id, seed)
        other_ticket = next(t for t in variant.task.tickets if t.ticket_id == ticket.ticket_id)
        if other_ticket.public_text != ticket.public_text:
            raise SystemExit(f"the checkouts' tickets differ: {task_id} {seed} {ticket.ticket_id}")
        mine.append((ticket, action, facts))
        theirs.append(
            (
                other_ticket,
                models.SupportQueueAction(**action.model_dump()),
                variant.facts[ticket.ticket_id],
            )
        )
    for side in ((grade, mine), (other_grader.grade, theirs)):
        round_seconds(*side)  # warm the caches
    best = {"this": float("inf"), "other": float("inf")}
    for _ in range(args.rounds):
        best["this"] = min(best["this"], round_seconds(grade, mine))
        best["other"] = min(best["other"], round_seconds(other_grader.grade, theirs))
    n = len(mine)
    print(
        json.dumps(
            {
                "actions": n,
                "this_us": round(best["this"] / n * 1e6, 2),
                "other_us": round(best["other"] / n * 1e6, 2),
                "ratio": round(best["this"] / best["other"], 3),
            }
        )
    )


if __name__ == "__main__":
    main()
