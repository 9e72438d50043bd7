"""inference.py without a model (--fallback) through the real entry point, its files, flags and pieces."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from statistics import fmean

import pytest
from fake_openai import Status
from inference_support import (
    END,
    REPO,
    START,
    STEP,
    TOKEN,
    OracleBrain,
    Run,
    Scenario,
    assert_clean,
    closed_port,
    completed,
    ids,
    measure_heuristic_scores,
)
from server_process import CHILD_TIMEOUT

from servicebench_support_queue.models import TaskCard
from servicebench_support_queue.report import render_html

SCENARIOS: dict[str, Scenario] = {
    "fallback": Scenario(
        ("--fallback",), lambda c: ([], Status(500)), subprocess=True, default_output=True
    ),
    "flags": Scenario(
        ("--task", "3", "--seed", "0", "--max-steps", "2"), lambda c: ([], OracleBrain(c, "tools"))
    ),
    "no_server": Scenario(
        ("--fallback",),
        lambda c: ([], Status(500)),
        env=(("ENV_BASE_URL", f"http://127.0.0.1:{closed_port()}"),),
    ),
}


def test_every_run_logs_only_structured_lines_and_hides_the_token(runs: dict[str, Run]) -> None:
    assert_clean(runs)


def test_fallback_solves_servicebench_and_runs_the_heuristic(
    live_server: str, runs: dict[str, Run], cards: list[TaskCard]
) -> None:
    run = completed(runs["fallback"])
    heuristic_scores = measure_heuristic_scores(live_server, cards)
    assert not run.requests, "--fallback needs no model"
    assert [e.task for e in run.episodes] == ids(cards)
    for episode in run.episodes:
        assert episode.model == "fallback" and episode.success
        assert all(s["error"] is None and s["action"] is not None for s in episode.steps)
        if episode.env == "servicebench":
            assert episode.score == 1.0
        else:
            assert episode.score == pytest.approx(heuristic_scores[episode.task], abs=5e-4)


def test_results_file_records_every_task_and_the_means(
    runs: dict[str, Run], cards: list[TaskCard]
) -> None:
    run = completed(runs["fallback"])
    results = run.results  # written to the working directory by default
    assert results["model"] == "fallback" and results["fallback"] is True
    assert [t["task_id"] for t in results["tasks"]] == ids(cards)
    for task, episode in zip(results["tasks"], run.episodes, strict=True):
        assert task["env"] == episode.env and task["model"] == "fallback" and task["seed"] is None
        assert task["success"] is episode.success and task["steps"] == len(episode.steps)
        assert f"{task['score']:.3f}" == f"{episode.score:.3f}"
        assert [f"{r:.2f}" for r in task["rewards"]] == [s["reward"] for s in episode.steps]
        assert [t["action"] for t in task["trajectory"]] == [s["action"] for s in episode.steps]
        assert all(t["observation"] and "error" in t for t in task["trajectory"])
        assert task["duration_s"] >= 0
    summary = results["summary"]
    for env in ("servicebench", "support_queue"):
        expected = fmean(t["score"] for t in results["tasks"] if t["env"] == env)
        assert summary["mean_score"][env] == pytest.approx(expected)
    assert summary["mean_score"]["overall"] == pytest.approx(
        fmean(t["score"] for t in results["tasks"])
    )
    assert summary["tasks"] == len(cards) and summary["successes"] == len(cards)


def test_default_run_writes_its_trajectories_and_report_next_to_the_results(
    runs: dict[str, Run], cards: list[TaskCard]
) -> None:
    run = completed(runs["fallback"])
    lines = (run.cwd / "inference_trajectories.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == run.results["tasks"]
    report = (run.cwd / "inference_report.md").read_text()
    assert (
        "Seeds: canonical tasks" in report and "| pass^1 |" in report and "| pass^2 |" not in report
    )
    assert all(f"`{task_id}`" in report for task_id in ids(cards))
    assert run.results["aggregate"]["repeats"] == 1 and run.results["seeds"] == [None]


def test_default_run_writes_the_html_report_next_to_the_results(
    runs: dict[str, Run], cards: list[TaskCard]
) -> None:
    run = completed(runs["fallback"])
    html = (run.cwd / "inference_report.html").read_text()
    assert html.count("<details class='episode'") == len(cards) == len(run.results["tasks"])
    assert all(f"<th>{task_id}</th>" in html for task_id in ids(cards))
    assert (
        html.count("<svg") == 4 and "Run with --repeats K" in html
    )  # tasks, envs, curve, histogram
    assert "End state matches</strong>: yes" in html and "Ticket SQ-" in html
    assert not re.search(r"""(src|href)=["']?https?:""", html), "nothing fetched"
    assert html == render_html(run.results), "the CLI renders the same report from the file"


def test_task_alias_seed_and_max_steps(runs: dict[str, Run]) -> None:
    run = completed(runs["flags"])
    [episode] = run.episodes
    assert episode.task == "billing_discrepancy" and len(episode.steps) == 2
    assert not episode.success and 0 < episode.score < 1
    [task] = run.results["tasks"]
    assert task["seed"] == 0 and task["steps"] == 2
    assert task["score"] == pytest.approx(sum(task["rewards"]))


def test_unreachable_environment_server(runs: dict[str, Run]) -> None:
    run = runs["no_server"]
    assert run.returncode == 1 and run.stdout == ""
    assert "cannot list the tasks" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    "args, env, complaint",
    [
        ((), {"MODEL_TIMEOUT_S": "soon"}, "MODEL_TIMEOUT_S"),
        ((), {"MODEL_TOOLS": "maybe"}, "MODEL_TOOLS"),
        (("--seed", "-1"), {}, "--seed"),
        (("--env", "chess"), {}, "--env"),
        (("--seeds", "9-3"), {}, "--seeds"),
        (("--seeds", "1,2,2"), {}, "--seeds"),
        (("--seeds", "0-4", "--seed", "2"), {}, "--seed"),
        (("--repeats", "0"), {}, "--repeats"),
        (("--concurrency", "1000"), {}, "--concurrency"),
    ],
)
def test_bad_configuration_fails_before_any_work(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], complaint: str
) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "inference.py"), *args],
        cwd=tmp_path,
        env={**os.environ, **env, "HF_TOKEN": TOKEN},
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert complaint in done.stderr and TOKEN not in done.stderr
    assert not list(tmp_path.iterdir()), "no file is written"


# ----------------------------------------------------------------------------- pieces, in process


def test_json_is_found_wherever_the_model_put_it() -> None:
    from servicebench_support_queue.agents.parsing import ParseError, extract_json_object

    assert extract_json_object('{"a": 1}') == {"a": 1}
    assert extract_json_object('Sure!\n```json\n{"a": {"b": [1, 2]}}\n```\nDone.') == {
        "a": {"b": [1, 2]}
    }
    assert extract_json_object('<think>maybe {"a": 0}</think>I pick {"a": 2} then {"a": 3}') == {
        "a": 2
    }
    assert (
        extract_json_object('<tool_call>{"name": "x", "arguments": {}}</tool_call>')["name"] == "x"
    )
    for bad in ("", "no json here", "[1, 2]", '{"unterminated": '):
        with pytest.raises(ParseError):
            extract_json_object(bad)


def test_log_lines_and_redaction() -> None:
    from servicebench_support_queue.agents.output import (
        Redactor,
        format_end,
        format_start,
        format_step,
    )

    assert START.match(format_start("t", "servicebench", "org/model"))
    line = format_step(3, {"reason": "two\nlines \u2028 here"}, -0.0001, True, "bad\nthing")
    assert STEP.match(line) and len(line.splitlines()) == 1 and " reward=0.00 " in line
    assert line.endswith("error=bad thing")
    assert END.match(format_end(False, 0, 0.0, []))
    assert format_end(True, 2, 1, [0.5, 0.5]).endswith("score=1.000 rewards=0.50,0.50")
    redact = Redactor([TOKEN, ""])
    assert redact(f"key {TOKEN}!") == "key ***!"
    assert redact.data({"a": [TOKEN, 1], TOKEN: None}) == {"a": ["***", 1], "***": None}
