"""inference.py --faults: the level on every ServiceBench reset, the oracle through the faults,
the LLM agent told the rules, and the failures' causes in the results and both reports."""

from __future__ import annotations

import json
import logging

import pytest
from fake_openai import Status
from inference_support import (
    Run,
    Scenario,
    assert_clean,
    completed,
    ids,
    run_in_process,
)

from servicebench_support_queue.agents.batch import fault_note
from servicebench_support_queue.agents.config import FAULT_LEVELS, ConfigError, load_config
from servicebench_support_queue.agents.evaluation import evaluate
from servicebench_support_queue.agents.fault_blame import failure_counts
from servicebench_support_queue.agents.report import render_report
from servicebench_support_queue.agents.runner import TaskRun
from servicebench_support_queue.agents.servicebench_llm import (
    FAULTS_RULES,
    ServiceBenchLLMAgent,
)
from servicebench_support_queue.agents.sweep import plan_episodes
from servicebench_support_queue.models import ServiceBenchObservation, TaskCard
from servicebench_support_queue.report import render_html
from servicebench_support_queue.server.servicebench.faults.schedule import LEVELS

SEEDS = "1-2"
SCENARIOS: dict[str, Scenario] = {
    "heavy": Scenario(
        ("--fallback", "--env", "servicebench", "--faults", "heavy", "--seeds", SEEDS),
        lambda c: ([], Status(500)),
    ),
}


def test_the_levels_are_the_servers() -> None:
    assert FAULT_LEVELS == LEVELS


def test_the_oracle_plays_through_heavy_faults_and_the_results_say_so(
    runs: dict[str, Run], cards: list[TaskCard]
) -> None:
    assert_clean(runs)
    run = completed(runs["heavy"])
    results = run.results
    assert results["faults"] == "heavy"
    tasks = results["tasks"]
    assert [t["task_id"] for t in tasks] == ids(cards, "servicebench") * 2
    assert all(t["faults"] == "heavy" and t["success"] and t["score"] == 1.0 for t in tasks)
    assert all(t["failure_cause"] is None for t in tasks)
    served = sum(sum(t["faults_served"].values()) for t in tasks)
    assert served > 0, "heavy faults on 18 episodes serve some"
    assert results["summary"]["failures"] == {
        "fault_double_write": 0,
        "fault_unretried": 0,
        "agent": 0,
    }
    report = (run.cwd / "report.md").read_text()
    assert "- ServiceBench faults: heavy" in report and "## Failures by cause" in report
    html = (run.cwd / "report.html").read_text()
    assert "<dt>ServiceBench faults</dt><dd>heavy</dd>" in html


def test_the_runner_plays_to_the_budget_the_server_states(cards: list[TaskCard]) -> None:
    """Faults grow the server's budget past the task card's; --max-steps still caps it."""
    card = next(c for c in cards if c.env == "servicebench")
    grown = ServiceBenchObservation(info={"max_steps": card.max_steps + 5})
    run = TaskRun(card, None, None, load_config([], {}), None, "m")  # type: ignore[arg-type]
    assert run._budget(grown) == card.max_steps + 5
    assert run._budget(ServiceBenchObservation()) == card.max_steps  # nothing stated: the card's
    capped = TaskRun(card, None, None, load_config(["--max-steps", "3"], {}), None, "m")  # type: ignore[arg-type]
    assert capped._budget(grown) == 3


def test_a_run_without_faults_records_off_and_changes_no_reset(live_server: str, tmp_path) -> None:
    """Off is the default: the reset carries no `faults`, so the episode is the one of before."""
    environ = {"ENV_BASE_URL": live_server, "INFERENCE_TIME_BUDGET_S": "60"}
    out = tmp_path / "r.json"
    code, _, err = run_in_process(
        environ,
        ["--fallback", "--env", "servicebench", "--task", "1", "--output", str(out),
         "--trajectories", str(tmp_path / "t.jsonl"), "--report", str(tmp_path / "r.md"),
         "--html-report", str(tmp_path / "r.html")],
    )  # fmt: skip
    assert code == 0, err
    [task] = json.loads(out.read_text())["tasks"]
    assert task["faults"] == "off" and task["faults_served"] == {} and task["success"]


@pytest.mark.parametrize(
    "args",
    [("--env", "support_queue", "--faults", "light"), ("--faults", "loud")],
)
def test_a_level_that_cannot_apply_is_refused_before_anything_runs(args, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        load_config(list(args), {})
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--faults" in err


def test_a_support_queue_task_alone_with_faults_is_refused_with_a_reason(
    live_server: str, cards: list[TaskCard], tmp_path
) -> None:
    task = next(card.id for card in cards if card.env == "support_queue")
    code, out, err = run_in_process(
        {"ENV_BASE_URL": live_server},
        ["--fallback", "--task", task, "--faults", "light", "--output-dir", str(tmp_path)],
    )
    assert code == 2 and out == ""
    assert "no ServiceBench task" in err and "Traceback" not in err


def test_a_run_of_both_environments_notes_that_support_queue_has_no_faults(
    cards: list[TaskCard], caplog: pytest.LogCaptureFixture
) -> None:
    config = load_config(["--faults", "light"], {})
    plan = plan_episodes(cards, [None], 1)
    with caplog.at_level(logging.INFO):
        fault_note(plan, config, logging.getLogger("test"))
    assert "Support Queue's play as usual" in caplog.text
    sq_only = [item for item in plan if item.card.env == "support_queue"]
    with pytest.raises(ConfigError, match="no ServiceBench task"):
        fault_note(sq_only, config, logging.getLogger("test"))
    fault_note(sq_only, load_config([], {}), logging.getLogger("test"))  # off: nothing to say


def _system_prompt(faults: str) -> str:
    agent = ServiceBenchLLMAgent(None, "on", deadline=float("inf"), faults=faults)  # type: ignore[arg-type]
    agent.task = "Refund ORD-1."
    return agent._messages()[0]["content"]


def test_the_llm_agent_is_told_the_fault_rules_only_when_faults_are_on() -> None:
    for level in ("light", "heavy"):
        prompt = _system_prompt(level)
        assert FAULTS_RULES in prompt
        for must in ("503", "429", "retry_after_steps", "504", "idempotency_key", "look"):
            assert must in prompt
    assert FAULTS_RULES not in _system_prompt("off") and "idempotency_key" not in _system_prompt(
        "off"
    )


def test_the_reports_count_failures_by_cause() -> None:
    def record(seed: int, success: bool, cause: str | None) -> dict:
        return {
            "env": "servicebench",
            "task_id": "damage_claim",
            "seed": seed,
            "score": 1.0 if success else 0.4,
            "success": success,
            "faults": "heavy",
            "failure_cause": cause,
            "trajectory": [],
        }

    records = [
        record(1, True, None),
        record(2, False, "fault_double_write"),
        record(3, False, "fault_unretried"),
        record(4, False, "fault_unretried"),
        record(5, False, "agent"),
    ]
    document = {"model": "m", "faults": "heavy", "repeats": 1, "tasks": records}
    html = render_html(document)
    assert "<dt>ServiceBench faults</dt><dd>heavy</dd>" in html
    assert "id='failures'" in html
    for label, count in (
        ("Fault: a write applied twice after a 504", 1),
        ("Fault: not retried", 2),
        ("The agent&#x27;s own", 1),
    ):
        assert f"<tr><th>{label}</th><td class='num'>{count}</td></tr>" in html
    markdown = render_report(
        evaluate(records, 1),
        {
            "model": "m",
            "seeds": "1-5",
            "duration_s": 1.0,
            "faults": "heavy",
            "failures": failure_counts(records),
        },
    )
    assert "| Fault: not retried | 2 |" in markdown and "| The agent's own | 1 |" in markdown
