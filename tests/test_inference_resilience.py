"""inference.py when the model misbehaves: errors and timeouts retried, a dead model bounded, the time budget kept."""

from __future__ import annotations

import itertools
from typing import Any

from fake_openai import Delay, RawBody, Reply, Responder, Status, Text
from inference_support import OracleBrain, Run, Scenario, assert_clean, completed, ids

from servicebench_support_queue.models import TaskCard

TIME_BUDGET_S = 3
MODEL_FAILED_STATUS = 3


def answer_first(cards: list[TaskCard], then: Reply) -> Responder:
    """The optimal call for the first request (the model is up), `then` for every later one."""
    oracle, count = OracleBrain(cards, "tools"), itertools.count()

    def respond(body: dict[str, Any]) -> Reply:
        return oracle(body) if next(count) == 0 else then

    return respond


SCENARIOS: dict[str, Scenario] = {
    "model_down": Scenario(
        (),
        lambda c: ([], Status(503, "overloaded", echo_auth=True)),
        env=(("MODEL_MAX_RETRIES", "1"), ("AGENT_MAX_FAILED_TURNS", "2")),
    ),
    "key_refused": Scenario((), lambda c: ([], Status(401, "invalid api key"))),
    "model_dies": Scenario(
        (),
        lambda c: ([], answer_first(c, Status(503, "overloaded"))),
        env=(("MODEL_MAX_RETRIES", "1"), ("AGENT_MAX_FAILED_TURNS", "1")),
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
        lambda c: ([], answer_first(c, Delay(1.0, Text("still thinking...")))),
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


def error_line(run: Run) -> str:
    """The one stderr line that says why the run measured no model."""
    [line] = [line for line in run.stderr.splitlines() if " ERROR " in line]
    return line


def test_a_model_that_never_answers_stops_the_run_after_one_episode(
    runs: dict[str, Run], cards: list[TaskCard]
) -> None:
    run = runs["model_down"]
    assert run.returncode == MODEL_FAILED_STATUS
    [episode] = run.episodes  # the first episode shows it; no other starts
    assert episode.task == ids(cards)[0] and not episode.success and episode.score == 0.0
    assert [s["action"] for s in episode.steps] == [None, None]
    assert all("HTTP 503" in s["error"] and "Bearer ***" in s["error"] for s in episode.steps)
    assert len(run.requests) == 2 * 2, "2 attempts for each of the 2 turns, nothing more"
    line = error_line(run)
    assert "no model call to http://127.0.0.1:" in line and "InternalServerError (HTTP 503)" in line
    assert f"played 1 of {len(cards)} episodes" in line
    results = run.results
    assert results["model_calls"] == {
        "succeeded": 0,
        "failed": 2,
        "last_error_class": "InternalServerError (HTTP 503)",
        "unreachable": None,
    }
    assert results["episodes_planned"] == len(cards) and len(results["tasks"]) == 1
    assert results["stopped_early"] and results["summary"]["successes"] == 0


def test_a_refused_key_proves_the_endpoint_unusable_at_once(
    runs: dict[str, Run], cards: list[TaskCard]
) -> None:
    run = runs["key_refused"]
    assert run.returncode == MODEL_FAILED_STATUS
    [episode] = run.episodes
    assert len(run.requests) == 1, "a 401 is not retried, and no later call is sent"
    assert "not called again" in episode.steps[-1]["error"]
    line = error_line(run)
    assert "is unreachable (AuthenticationError (HTTP 401))" in line
    assert run.results["model_calls"]["unreachable"] == "AuthenticationError (HTTP 401)"


def test_a_model_that_answered_once_is_not_unreachable(
    runs: dict[str, Run], cards: list[TaskCard]
) -> None:
    run = completed(runs["model_dies"])
    assert [e.task for e in run.episodes] == ids(cards), "the run goes on after later failures"
    first, *rest = run.steps()
    assert first["error"] is None and first["action"] is not None
    assert rest and all("HTTP 503" in s["error"] for s in rest)
    assert run.results["model_calls"]["succeeded"] == 1
    assert not any(e.success for e in run.episodes)
    assert " ERROR " not in run.stderr


def test_the_run_keeps_to_its_time_budget(runs: dict[str, Run], cards: list[TaskCard]) -> None:
    run = completed(runs["time_budget"])
    assert [e.task for e in run.episodes] == ids(cards), "every task still starts and ends"
    assert run.results["duration_s"] < TIME_BUDGET_S + 5
    assert len(run.requests) <= 2 * len(cards), "no model call once a task's share is spent"
    for episode, task in zip(run.episodes, run.results["tasks"], strict=True):
        assert not episode.success
        if episode.env == "servicebench":
            assert "INFERENCE_TIME_BUDGET_S" in task["error"]
        else:  # the queue is moved on by stand-ins, which earn the model nothing
            assert all("INFERENCE_TIME_BUDGET_S" in s["error"] for s in episode.steps)
            assert task["stand_in_steps"] == task["steps"] and episode.score == 0.0
            assert task["env_score"] > 0.0
