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
    "sq_one_garbage_ticket": Scenario(
        ("--task", "easy_inbox_cleanup"),  # whose first ticket the neutral action scores > 0 on
        lambda c: ([INVALID_TRIAGE, INVALID_TRIAGE], heuristic_brain),
    ),
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
    results = run.results
    for episode, task in zip(run.episodes, results["tasks"], strict=True):
        assert not episode.success, "every ticket was processed, but none by the model"
        assert episode.score == 0.0 and task["score"] == 0.0
        assert task["completed"] and task["stand_in_steps"] == task["steps"]
        assert 0.0 < task["env_score"] < heuristic_scores[episode.task], (
            "the environment graded the neutral action; the model is credited nothing"
        )
    overall = results["aggregate"]["overall"]
    assert overall["successes"] == 0 and overall["pass_hat_k"] == {"1": 0.0}
    assert overall["mean_score"] == 0.0 and results["summary"]["successes"] == 0
    report = (run.cwd / "report.md").read_text()
    assert "(0 successful)" in report


def test_one_stand_in_ticket_costs_the_success_and_that_tickets_credit(
    runs: dict[str, Run], heuristic_scores: dict[str, float]
) -> None:
    run = completed(runs["sq_one_garbage_ticket"])
    [episode] = run.episodes
    [task] = run.results["tasks"]
    stand_ins = [s for s in task["trajectory"] if s["stand_in"]]
    assert len(stand_ins) == 1 and stand_ins[0]["step"] == 1
    assert task["completed"] and not episode.success
    assert task["env_score"] == pytest.approx(fmean(task["rewards"]), abs=1e-6)
    model_rewards = [s["reward"] for s in task["trajectory"] if not s["stand_in"]]
    assert task["score"] == pytest.approx(sum(model_rewards) / task["steps"], abs=1e-6)
    assert task["score"] < task["env_score"]
