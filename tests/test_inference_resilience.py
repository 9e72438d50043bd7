"""inference.py when the model misbehaves: errors and timeouts retried, a dead model bounded, the time budget kept."""

from __future__ import annotations

from fake_openai import Delay, RawBody, Status, Text
from inference_support import OracleBrain, Run, Scenario, assert_clean, completed, ids

from servicebench_support_queue.models import TaskCard

TIME_BUDGET_S = 3

SCENARIOS: dict[str, Scenario] = {
    "model_down": Scenario(
        (),
        lambda c: ([], Status(503, "overloaded", echo_auth=True)),
        env=(("MODEL_MAX_RETRIES", "1"), ("AGENT_MAX_FAILED_TURNS", "2")),
    ),
    "sb_flaky_model": Scenario(
        ("--task", "order_status_lookup"),
        lambda c: (
            [
                Status(500),
                Status(429, headers=(("Retry-After", "0.01"),)),
                Delay(6.0, Text("too late")),
                RawBody(b'{"choices": []}'),
                RawBody(b"<html>bad gateway</html>"),
            ],
            OracleBrain(c, "tools"),
        ),
        env=(("MODEL_TIMEOUT_S", "1.5"), ("MODEL_MAX_RETRIES", "5")),
    ),
    "time_budget": Scenario(
        (),
        lambda c: ([], Delay(1.0, Text("still thinking..."))),
        env=(("INFERENCE_TIME_BUDGET_S", str(TIME_BUDGET_S)),),
    ),
}


def test_every_run_logs_only_structured_lines_and_hides_the_token(runs: dict[str, Run]) -> None:
    assert_clean(runs)


def test_model_errors_timeouts_and_malformed_bodies_are_retried(runs: dict[str, Run]) -> None:
    run = completed(runs["sb_flaky_model"])
    [episode] = run.episodes
    assert episode.success and episode.score == 1.0
    assert all(s["error"] is None for s in episode.steps)
    assert len(run.requests) == 5 + len(episode.steps)
    assert run.stderr.count("retrying") == 5
    for symptom in ("HTTP 500", "HTTP 429", "APITimeoutError", "no message", "unusable response"):
        assert symptom in run.stderr


def test_model_down_is_bounded_and_logged(runs: dict[str, Run], cards: list[TaskCard]) -> None:
    run = completed(runs["model_down"])
    assert [e.task for e in run.episodes] == ids(cards)
    for episode in run.episodes:
        assert episode.steps
        assert all("HTTP 503" in s["error"] and "Bearer ***" in s["error"] for s in episode.steps)
        if episode.env == "servicebench":
            assert not episode.success and episode.score == 0.0
            assert [s["action"] for s in episode.steps] == [None, None]
        else:
            assert all(s["action"] is not None for s in episode.steps), (
                "the queue goes on, neutrally"
            )
    tickets = sum(len(e.steps) for e in run.episodes if e.env == "support_queue")
    assert len(run.requests) == 2 * (2 * len(ids(cards, "servicebench")) + tickets), (
        "2 attempts per turn"
    )
    assert all(t["error"] for t in run.results["tasks"] if t["env"] == "servicebench")


def test_the_run_keeps_to_its_time_budget(runs: dict[str, Run], cards: list[TaskCard]) -> None:
    run = completed(runs["time_budget"])
    assert [e.task for e in run.episodes] == ids(cards), "every task still starts and ends"
    assert run.results["duration_s"] < TIME_BUDGET_S + 5
    assert len(run.requests) <= 2 * len(cards), "no model call once a task's share is spent"
    for episode, task in zip(run.episodes, run.results["tasks"], strict=True):
        if episode.env == "servicebench":
            assert not episode.success and "INFERENCE_TIME_BUDGET_S" in task["error"]
        else:
            assert episode.success and all(
                "INFERENCE_TIME_BUDGET_S" in s["error"] for s in episode.steps
            )
