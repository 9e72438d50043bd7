"""The evaluation harness: pass^k and standard errors by hand, the tables, and sweeps of inference.py."""

from __future__ import annotations

import io
import json
import math
import re
from itertools import product
from typing import Any

import pytest
from fake_openai import Status, Text
from inference_support import OracleBrain, Run, Scenario, assert_clean, completed, ids

from servicebench_support_queue.agents.config import load_config
from servicebench_support_queue.agents.evaluation import evaluate
from servicebench_support_queue.agents.progress import Progress
from servicebench_support_queue.agents.report import render_report
from servicebench_support_queue.agents.stats import (
    combined_standard_error,
    pass_hat_curve,
    pass_hat_k,
    standard_error,
)
from servicebench_support_queue.agents.sweep import TimeBudget, plan_episodes, plan_split_episodes
from servicebench_support_queue.models import TaskCard

SEEDS, REPEATS = (0, 1, 2), 2
SWEEP = ("--fallback", "--seeds", "0-2", "--repeats", str(REPEATS), "--no-progress")
FLAKY_TASK = "order_status_lookup"

SCENARIOS: dict[str, Scenario] = {
    "sweep": Scenario(SWEEP, lambda c: ([], Status(500))),
    "sweep_concurrent": Scenario((*SWEEP, "--concurrency", "3"), lambda c: ([], Status(500))),
    # The model's first two replies are unusable: the first episode (seed 0, repeat 0) is abandoned
    # after one failed turn, every later one is played by the optimal policy.
    "flaky_model": Scenario(
        ("--task", FLAKY_TASK, "--seeds", "0-1", "--repeats", "3", "--no-progress"),
        lambda c: ([Text("no idea"), Text("still no idea")], OracleBrain(c, "tools", FLAKY_TASK)),
        env=(("AGENT_MAX_FAILED_TURNS", "1"),),
    ),
}


def trajectories(run: Run) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run.cwd / "trajectories.jsonl").read_text().splitlines()]


def table(report: str, heading: str) -> list[dict[str, str]]:
    """The rows of the markdown table under `## heading`, as column -> cell."""
    section = report.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert re.fullmatch(r"\|( -{3}:? \|)+", lines[1]), lines[1]
    return [
        dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
        for line in lines[2:]
    ]


# ----------------------------------------------------------------------------- statistics by hand


def test_pass_hat_k_on_hand_computed_instances() -> None:
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_hat_k(4, 2, 1) == 0.5
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)  # C(2,2)/C(4,2)
    assert pass_hat_k(4, 3, 3) == pytest.approx(1 / 4)  # C(3,3)/C(4,3)
    assert pass_hat_k(4, 2, 3) == 0.0
    # instances (n, c): (4, 4), (4, 2), (4, 3)
    curve = pass_hat_curve([(4, 4), (4, 2), (4, 3)], 4)
    assert curve[1] == pytest.approx((1 + 0.5 + 0.75) / 3)
    assert curve[2] == pytest.approx((1 + 1 / 6 + 3 / 6) / 3)
    assert curve[3] == pytest.approx((1 + 0 + 1 / 4) / 3)
    assert curve[4] == pytest.approx(1 / 3)
    assert pass_hat_curve([(1, 1), (3, 1)], 2) == {1: pytest.approx((1 + 1 / 3) / 2), 2: 0.0}
    assert pass_hat_curve([(1, 1)], 2)[2] is None, "no instance was tried twice"
    for bad in ((2, 3, 1), (2, 1, 3), (2, 1, 0)):
        with pytest.raises(ValueError):
            pass_hat_k(*bad)


def test_standard_errors_on_hand_computed_samples() -> None:
    # mean 0.5; squared deviations .09 + .01 + .16 = .26; variance .13; se sqrt(.13 / 3)
    assert standard_error([0.2, 0.4, 0.9]) == pytest.approx(math.sqrt(0.13 / 3))
    assert standard_error([1.0, 0.0]) == pytest.approx(0.5)
    assert standard_error([0.7, 0.7, 0.7]) == pytest.approx(0.0, abs=1e-12)
    assert standard_error([0.3]) is None and standard_error([]) is None
    assert combined_standard_error([0.3, 0.4]) == pytest.approx(0.25)  # sqrt(.09 + .16) / 2
    assert combined_standard_error([0.3, None]) is None


def record(
    task_id: str, seed: int, score: float, success: bool, env: str = "servicebench"
) -> dict[str, Any]:
    return {"env": env, "task_id": task_id, "seed": seed, "score": score, "success": success}


def test_evaluation_groups_repeats_into_instances_and_weighs_tasks_equally() -> None:
    records = [
        record("a", 1, 1.0, True),
        record("a", 1, 0.0, False),  # instance mean 0.5, 1 of 2
        record("a", 2, 1.0, True),
        record("a", 2, 1.0, True),  # instance mean 1.0, 2 of 2
        record("b", 1, 0.2, False, "support_queue"),
        record("b", 1, 0.4, True, "support_queue"),
    ]
    evaluation = evaluate(records, repeats=2)
    a, b = evaluation.tasks
    assert (a.label, a.instances, a.episodes, a.successes) == ("a", 2, 4, 3)
    assert a.mean_score == pytest.approx(0.75) and a.stderr == pytest.approx(0.25)
    assert a.pass_hat[1] == pytest.approx(0.75) and a.pass_hat[2] == pytest.approx(0.5)
    assert (b.mean_score, b.stderr, b.pass_hat[2]) == (pytest.approx(0.3), None, 0.0)
    assert [row.label for row in evaluation.envs] == ["servicebench", "support_queue"]
    overall = evaluation.overall
    assert overall.mean_score == pytest.approx((0.75 + 0.3) / 2), "each task weighs the same"
    assert overall.stderr is None, "task b has one instance: its spread is unknown"
    assert overall.pass_hat[1] == pytest.approx((0.75 + 0.5) / 2)
    assert overall.success_rate == pytest.approx(4 / 6)
    rows = table(
        render_report(evaluation, {"model": "m", "seeds": "1-2", "duration_s": 1.0}), "Per task"
    )
    assert rows[0]["pass^2"] == "0.500" and rows[1]["Std. error"] == "n/a"


def test_a_split_run_is_tabled_per_family_and_split_each_family_weighing_the_same() -> None:
    def record(env: str, family: str, seed: int, score: float, success: bool) -> dict[str, Any]:
        return {
            "env": env,
            "task_id": "billing_discrepancy" if env == "servicebench" else "single_ticket",
            "split": "test",
            "index": 0,
            "family": family,
            "seed": seed,
            "score": score,
            "success": success,
        }

    records = [  # two families of one task that play the same seed are two instances
        record("servicebench", "stale_price", 100_000, 1.0, True),
        record("servicebench", "stale_price", 100_000, 0.0, False),
        record("servicebench", "coupon_added_flat", 100_000, 1.0, True),
        record("servicebench", "coupon_added_flat", 100_000, 1.0, True),
        record("servicebench", "coupon_added_flat", 100_001, 0.5, False),
        record("servicebench", "coupon_added_flat", 100_001, 0.5, True),
        record("support_queue", "abuse_report", 100_000, 0.8, True),
        record("support_queue", "abuse_report", 100_000, 0.6, True),
    ]
    evaluation = evaluate(records, repeats=2)
    stale, flat, abuse = evaluation.families
    assert [(r.env, r.split, r.label) for r in evaluation.families] == [
        ("servicebench", "test", "stale_price"),
        ("servicebench", "test", "coupon_added_flat"),
        ("support_queue", "test", "abuse_report"),
    ]
    assert (stale.instances, stale.mean_score, stale.pass_hat[2]) == (1, 0.5, 0.0)
    assert (flat.instances, flat.mean_score) == (2, pytest.approx(0.75))
    assert flat.pass_hat[1] == pytest.approx(0.75) and flat.pass_hat[2] == pytest.approx(0.5)
    (task,) = [row for row in evaluation.tasks if row.label == "billing_discrepancy"]
    assert task.instances == 3, "instances are (family, seed), not seeds"
    sb_split, sq_split = evaluation.splits
    assert (sb_split.label, sb_split.split, sb_split.tasks) == ("test", "test", 2)
    assert sb_split.mean_score == pytest.approx((0.5 + 0.75) / 2), "each family weighs the same"
    assert sb_split.pass_hat[2] == pytest.approx((0.0 + 0.5) / 2)
    assert evaluation.envs[0].mean_score == sb_split.mean_score
    assert evaluation.overall.mean_score == pytest.approx((0.5 + 0.75 + 0.7) / 3)
    report = render_report(evaluation, {"model": "m", "seeds": "split", "duration_s": 1.0})
    rows = table(report, "Per family")
    assert [(r["Split"], r["Family"], r["pass^2"]) for r in rows] == [
        ("`test`", "`stale_price`", "0.000"),
        ("`test`", "`coupon_added_flat`", "0.500"),
        ("`test`", "`abuse_report`", "1.000"),
    ]
    assert [r["Families"] for r in table(report, "Per split")] == ["2", "1"]
    as_json = evaluation.as_json()
    assert as_json["families"][0]["split"] == "test" and len(as_json["splits"]) == 2


def test_a_run_by_task_and_seed_has_no_split_tables() -> None:
    evaluation = evaluate(
        [{"env": "servicebench", "task_id": "a", "seed": 1, "score": 1.0, "success": True}], 1
    )
    assert evaluation.splits == evaluation.families == ()
    assert "## Per family" not in render_report(
        evaluation, {"model": "m", "seeds": "1", "duration_s": 1.0}
    )


# ----------------------------------------------------------------------------- configuration and plan


def test_seed_specs() -> None:
    assert load_config(["--seeds", "1,5,9-12"], {}).seeds == (1, 5, 9, 10, 11, 12)
    assert load_config(["--seeds", "0-49"], {}).seeds == tuple(range(50))
    assert load_config(["--seed", "7"], {}).seeds == (7,)
    assert load_config([], {}).seeds == (None,)
    for bad in ("3-1", "x", "1,,2", "-4", "1,2-3,3"):
        with pytest.raises(SystemExit):
            load_config(["--seeds", bad], {})


def test_a_split_plan_is_position_then_repeat_then_environment() -> None:
    def spec(env: str, index: int) -> dict[str, Any]:
        return {
            "id": f"f{index}-{100 + index}",
            "env": env,
            "split": "test",
            "index": index,
            "family": f"f{index}",
            "task_id": "t",
            "title": "T",
            "difficulty": "easy",
            "max_steps": 3,
            "seed": 100 + index,
        }

    tasks = {"servicebench": [spec("servicebench", i) for i in range(3)]}
    tasks["support_queue"] = [spec("support_queue", 7)]
    plan = plan_split_episodes(tasks, repeats=2)
    assert [(p.card.env, p.split_task["index"], p.repeat) for p in plan] == [
        ("servicebench", 0, 0),
        ("support_queue", 7, 0),
        ("servicebench", 0, 1),
        ("support_queue", 7, 1),
        ("servicebench", 1, 0),
        ("servicebench", 1, 1),
        ("servicebench", 2, 0),
        ("servicebench", 2, 1),
    ]
    assert [p.index for p in plan] == list(range(8))
    assert plan[1].seed == 107 and plan[1].card.max_steps == 3 and plan[1].card.id == "t"


def test_split_flags() -> None:
    config = load_config(["--split", "test", "--family", "x", "--limit", "4"], {})
    assert (config.split, config.family, config.limit) == ("test", "x", 4)
    assert load_config(["--split", "train"], {}).limit is None
    for bad in (["--family", "x"], ["--limit", "2"], ["--split", "test", "--seeds", "1-2"]):
        with pytest.raises(SystemExit):
            load_config(bad, {})


def test_the_plan_is_seed_then_repeat_then_task() -> None:
    cards = [
        TaskCard(
            id=name,
            env="servicebench",
            title=name,
            difficulty="easy",
            description=name,
            max_steps=3,
        )
        for name in ("x", "y")
    ]
    plan = plan_episodes(cards, (5, 9), 2)
    assert [(p.seed, p.repeat, p.card.id) for p in plan] == list(
        product((5, 9), (0, 1), ("x", "y"))
    )
    assert [p.index for p in plan] == list(range(8))


def test_concurrent_episodes_print_whole_blocks_in_plan_order() -> None:
    """The first planned episode finishes last; stdout still starts with it, block by block."""
    import time

    from servicebench_support_queue.agents.output import Redactor, StructuredLog
    from servicebench_support_queue.agents.sweep import play_all

    cards = [
        TaskCard(
            id=f"t{i}",
            env="servicebench",
            title="t",
            difficulty="easy",
            description="t",
            max_steps=3,
        )
        for i in range(6)
    ]
    plan = plan_episodes(cards, (None,), 1)
    clients_used: list[Any] = []

    def play(item: Any, out: StructuredLog, client: Any) -> dict[str, Any]:
        out.start(item.card.id, "servicebench", "m")
        time.sleep(0.05 * (len(plan) - item.index))  # later episodes finish first
        out.step(1, {"i": item.index}, 0.5, True, None)
        out.end(True, 1, 0.5, [0.5])
        clients_used.append(client)
        return {"index": item.index, "score": 0.5, "success": True}

    stdout = io.StringIO()
    printed, finished = [], []
    play_all(
        plan,
        play,
        StructuredLog(Redactor(), stdout),
        ["c1", "c2", "c3"],  # type: ignore[list-item]
        lambda r: printed.append(r["index"]),
        lambda r: finished.append(r["index"]),
    )
    assert printed == list(range(6)) and finished != printed and sorted(finished) == printed
    assert set(clients_used) == {"c1", "c2", "c3"}
    lines = stdout.getvalue().splitlines()
    assert [line.split()[0] for line in lines] == ["[START]", "[STEP]", "[END]"] * 6
    assert [line for line in lines if line.startswith("[START]")] == [
        f"[START] task=t{i} env=servicebench model=m" for i in range(6)
    ]


def test_time_budget_is_shared_among_the_episodes_still_to_come() -> None:
    now = [0.0]
    budget = TimeBudget(120.0, episodes=4, concurrency=2, clock=lambda: now[0])
    assert budget.next_deadline() == 60.0  # 120 s left, 2 rounds of 2 to go
    now[0] = 10.0
    assert budget.next_deadline() == 65.0  # 110 s left, still 2 rounds (3 episodes)
    now[0] = 30.0
    assert budget.next_deadline() == 120.0  # the last round gets the rest
    now[0] = 200.0
    assert budget.next_deadline() == 200.0, "a spent budget leaves no time"


def test_progress_lines_when_stderr_is_not_a_terminal() -> None:
    stream = io.StringIO()
    with Progress(20, stream, enabled=True, clock=lambda: 0.0) as progress:
        for index in range(20):
            progress.advance(1.0 if index % 2 else 0.0, bool(index % 2))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10 and lines[-1].startswith(
        "progress: 20/20 episodes (100%), mean score 0.500, 10 successful"
    )
    quiet = io.StringIO()
    with Progress(20, quiet, enabled=False) as progress:
        progress.advance(1.0, True)
    assert quiet.getvalue() == ""


# ----------------------------------------------------------------------------- sweeps end to end


def test_every_sweep_logs_only_structured_lines_and_hides_the_token(runs: dict[str, Run]) -> None:
    assert_clean(runs)


def test_sweep_plays_every_task_on_every_seed_k_times(
    runs: dict[str, Run], cards: list[TaskCard]
) -> None:
    run = completed(runs["sweep"])
    episodes, lines = run.episodes, trajectories(run)
    expected = [
        (seed, repeat, task) for seed, repeat, task in product(SEEDS, range(REPEATS), ids(cards))
    ]
    assert [(line["seed"], line["repeat"], line["task_id"]) for line in lines] == expected
    assert len(episodes) == len(expected) == len(cards) * len(SEEDS) * REPEATS
    for episode, line in zip(episodes, lines, strict=True):
        assert (episode.task, episode.env, episode.model) == (
            line["task_id"],
            line["env"],
            "fallback",
        )
        assert (
            episode.success is line["success"] and f"{line['score']:.3f}" == f"{episode.score:.3f}"
        )
        assert [s["action"] for s in episode.steps] == [t["action"] for t in line["trajectory"]]
        assert [f"{r:.2f}" for r in line["rewards"]] == [s["reward"] for s in episode.steps]
    assert run.results["tasks"] == lines, "the results file keeps every episode's record"
    assert run.results["seeds"] == list(SEEDS) and run.results["repeats"] == REPEATS
    assert not run.requests and "progress:" not in run.stderr


def pass_hat_by_hand(lines: list[dict[str, Any]], task_id: str, k: int) -> float:
    """Independent of agents.stats: C(c, k) / C(n, k) per seed, averaged."""
    values = []
    for seed in SEEDS:
        trials = [
            line["success"] for line in lines if line["task_id"] == task_id and line["seed"] == seed
        ]
        values.append(math.comb(sum(trials), k) / math.comb(len(trials), k))
    return sum(values) / len(values)


def test_sweep_tables_match_its_trajectories(runs: dict[str, Run], cards: list[TaskCard]) -> None:
    run = completed(runs["sweep"])
    lines, aggregate = trajectories(run), run.results["aggregate"]
    report = (run.cwd / "report.md").read_text()
    rows = table(report, "Per task")
    assert [row["Task"] for row in rows] == [f"`{task_id}`" for task_id in ids(cards)]
    for row, task in zip(rows, aggregate["tasks"], strict=True):
        task_id = row["Task"].strip("`")
        scores = [line["score"] for line in lines if line["task_id"] == task_id]
        assert (row["Instances"], row["Episodes"]) == (str(len(SEEDS)), str(len(scores)))
        # the mean recomputed from the trajectories and the aggregate's, within the table's rounding
        assert float(row["Mean score"]) == pytest.approx(sum(scores) / len(scores), abs=5e-4 + 1e-9)
        assert float(row["Mean score"]) == pytest.approx(task["mean_score"], abs=5e-4 + 1e-9)
        for k in range(1, REPEATS + 1):
            assert row[f"pass^{k}"] == f"{pass_hat_by_hand(lines, task_id, k):.3f}"
        assert "pass^3" not in row
    envs = table(report, "Per environment")
    assert [row["Environment"] for row in envs] == ["servicebench", "support_queue", "all"]
    assert envs[-1]["Episodes"] == str(len(lines)) and envs[-1]["Tasks"] == str(len(cards))
    assert envs[-1]["Mean score"] == f"{aggregate['overall']['mean_score']:.3f}"
    assert "Seeds: 0-2 (3 seeds)" in report and f"Repeats per (task, seed): {REPEATS}" in report


def test_concurrent_sweep_prints_the_same_blocks_in_the_same_order(runs: dict[str, Run]) -> None:
    sequential, concurrent = completed(runs["sweep"]), completed(runs["sweep_concurrent"])
    assert concurrent.stdout == sequential.stdout
    timing = ("duration_s",)

    def stable(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in line.items() if k not in timing} for line in lines]

    assert stable(trajectories(concurrent)) == stable(trajectories(sequential))


def test_pass_hat_k_of_an_inconsistent_model(runs: dict[str, Run]) -> None:
    run = completed(runs["flaky_model"])
    outcomes = [(e.success, e.score) for e in run.episodes]
    assert outcomes == [(False, 0.0)] + [(True, 1.0)] * 5
    # seed 0: 2 of 3 tries succeed (mean 2/3); seed 1: 3 of 3 (mean 1)
    [task] = run.results["aggregate"]["tasks"]
    assert task["mean_score"] == pytest.approx(5 / 6, abs=1e-6)
    assert task["stderr"] == pytest.approx(1 / 6, abs=1e-6)  # stdev(2/3, 1) / sqrt(2)
    expected: dict[str, float | None] = {
        "1": (2 / 3 + 1) / 2,
        "2": (1 / 3 + 1) / 2,
        "3": (0 + 1) / 2,
    }
    assert task["pass_hat_k"] == pytest.approx(expected, abs=1e-6)
    [row] = table((run.cwd / "report.md").read_text(), "Per task")
    assert [
        row[c] for c in ("Mean score", "Std. error", "Success rate", "pass^1", "pass^2", "pass^3")
    ] == ["0.833", "0.167", "0.833", "0.833", "0.667", "0.500"]
    assert run.results["aggregate"]["overall"]["pass_hat_k"] == task["pass_hat_k"]
