"""Per-step cost of the Support Queue grader: `grade`, and its text parts alone.

The parts: the canonical text of the summary and the reply (`canonical_text`, read once per
grade); the safety rules alone (`unsafe_hits`) and the whole verdict (`verdict`: the rules and
the model's scoring of each sentence and each two in a row); coverage of both texts
(`score_text`, which canonicalises its text too). Side by side with another checkout:
bench/sq_grader_versus.py.

    .venv/bin/python -m bench.sq_grader_bench             # seeds 1-100 of every task
    .venv/bin/python -m bench.sq_grader_bench --seeds 1-300 --json

Grading runs on every `step`, so its cost is part of every step. This grades a fixed
set of actions (each ticket's gold action and the heuristic's action, on the canonical
tasks and the seeds' variants), after a warm-up that fills the stemming and fact
caches, and reports microseconds per call: the best of several rounds of process CPU
time (the least disturbed round on a shared machine). Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from typing import Any

from bench.sq_variants_bench import seed_range
from servicebench_support_queue.models import SupportQueueAction
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.grader import grade, score_text
from servicebench_support_queue.server.support_queue.heuristic import triage
from servicebench_support_queue.server.support_queue.scenarios import COMPOSITIONS
from servicebench_support_queue.server.support_queue.tasks import PRODUCT_DOMAINS
from servicebench_support_queue.server.support_queue.text import canonical_text
from servicebench_support_queue.server.support_queue.text.safety.rules import unsafe_hits
from servicebench_support_queue.server.support_queue.text.safety.verdict import verdict


def seeded_cases(seeds: range) -> list[tuple[str, int | None, Any, SupportQueueAction, Any]]:
    """(task, seed, ticket, action, facts) for the gold and the heuristic action of every
    ticket of the canonical tasks (seed None) and of the seeds' variants."""
    out = []
    for task_id in COMPOSITIONS:
        for seed in (None, *seeds):
            variant = SupportQueueEnvironment.variant_for(task_id, seed)
            for ticket in variant.task.tickets:
                facts = variant.facts[ticket.ticket_id]
                gold = SupportQueueAction(
                    priority=ticket.gold.priority,
                    queue=ticket.gold.queue,
                    disposition=ticket.gold.disposition,
                    summary=ticket.gold_summary,
                    response=ticket.gold_response,
                )
                heuristic = triage(type("Observation", (), {"ticket": ticket.public_ticket()})())
                out += [(task_id, seed, ticket, a, facts) for a in (gold, heuristic)]
    return out


def cases(seeds: range) -> list[tuple[Any, SupportQueueAction, Any]]:
    """(ticket, action, facts) for the gold and the heuristic action of every ticket."""
    return [(ticket, action, facts) for _, _, ticket, action, facts in seeded_cases(seeds)]


def best_us(run: Callable[[], None], calls: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return round(best / calls * 1e6, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=seed_range, default=seed_range("1-100"))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    graded = cases(args.seeds)
    n = len(graded)

    def grade_all() -> None:
        for ticket, action, facts in graded:
            grade(ticket, action, facts)

    def canonical_all() -> None:
        for _, action, _ in graded:
            canonical_text(action.summary)
            canonical_text(action.response)

    def safety_all() -> None:
        for ticket, action, _ in graded:
            unsafe_hits(action.response, ticket.public_text, PRODUCT_DOMAINS)

    def verdict_all() -> None:
        for ticket, action, _ in graded:
            verdict(action.response, ticket.public_text, PRODUCT_DOMAINS)

    def coverage_all() -> None:
        for ticket, action, facts in graded:
            score_text(action.summary, ticket, "summary", facts)
            score_text(action.response, ticket, "response", facts)

    grade_all()  # warm the caches
    report = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "actions": n,
        "grade_us": best_us(grade_all, n, args.rounds),
        "canonical_text_us": best_us(canonical_all, n, args.rounds),
        "unsafe_hits_us": best_us(safety_all, n, args.rounds),
        "verdict_us": best_us(verdict_all, n, args.rounds),
        "coverage_us": best_us(coverage_all, n, args.rounds),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"Python {report['python']} on {report['machine']}, {n} actions: grade "
        f"{report['grade_us']} us, canonical texts {report['canonical_text_us']} us, "
        f"unsafe_hits {report['unsafe_hits_us']} us, the verdict (rules and model) "
        f"{report['verdict_us']} us, coverage "
        f"(summary + reply) {report['coverage_us']} us per action"
    )


if __name__ == "__main__":
    main()
