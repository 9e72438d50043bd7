"""inference.py's Support Queue LLM agent: one retry on invalid output, then the neutral action."""

from __future__ import annotations

import json
from statistics import fmean
from typing import Any

import pytest
from fake_openai import Reply, Text
from inference_support import (
    Run,
    Scenario,
    assert_clean,
    completed,
    heuristic_brain,
    ids,
    measure_heuristic_scores,
)

from servicebench_support_queue.models import TaskCard

INVALID_TRIAGE = Text('{"priority": "URGENT", "queue": "billing", "disposition": "respond"}')


def invalid_first(body: dict[str, Any]) -> Reply:
    return INVALID_TRIAGE if len(body["messages"]) == 2 else heuristic_brain(body)


SCENARIOS: dict[str, Scenario] = {
    "sq_retry_once": Scenario(("--env", "support_queue"), lambda c: ([], invalid_first)),
    "sq_garbage": Scenario(
        ("--env", "support_queue"),
        lambda c: ([], Text("This ticket looks urgent, route it to security.")),
    ),
}


@pytest.fixture(scope="module")
def heuristic_scores(live_server: str, cards: list[TaskCard]) -> dict[str, float]:
    return measure_heuristic_scores(live_server, cards)


def test_every_run_logs_only_structured_lines_and_hides_the_token(runs: dict[str, Run]) -> None:
    assert_clean(runs)


def test_support_queue_invalid_output_is_retried_once(
    runs: dict[str, Run], cards: list[TaskCard], heuristic_scores: dict[str, float]
) -> None:
    run = completed(runs["sq_retry_once"])
    assert [e.task for e in run.episodes] == ids(cards, "support_queue")
    for episode in run.episodes:
        assert episode.success and all(s["error"] is None for s in episode.steps)
        assert episode.score == pytest.approx(heuristic_scores[episode.task], abs=5e-4)
    assert len(run.requests) == 2 * len(run.steps())
    first, retry = run.requests[0].body["messages"], run.requests[1].body["messages"]
    assert all(q in first[0]["content"] for q in ("billing", "trust_safety", "P4", "request_info"))
    assert retry[:2] == first
    assert retry[2] == {"role": "assistant", "content": INVALID_TRIAGE.content}
    assert retry[3]["role"] == "user" and "priority" in retry[3]["content"]


def test_support_queue_garbage_gets_the_neutral_action(
    runs: dict[str, Run], heuristic_scores: dict[str, float]
) -> None:
    run = completed(runs["sq_garbage"])
    actions = {json.dumps(s["action"], sort_keys=True) for s in run.steps()}
    assert len(actions) == 1, "the neutral action does not depend on the ticket"
    assert all("invalid model output" in s["error"] for s in run.steps())
    assert len(run.requests) == 2 * len(run.steps()), (
        "one retry per ticket, then the neutral action"
    )
    for episode in run.episodes:
        assert episode.success, "every ticket was processed"
        assert episode.score < heuristic_scores[episode.task]
    assert fmean(e.score for e in run.episodes) < fmean(heuristic_scores.values()) - 0.25, (
        "a model emitting garbage must not score like the heuristic"
    )
