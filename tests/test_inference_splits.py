"""inference.py over the Task API's splits: --split, --family, --limit; the fallback policies on
every family; results and pass^k per split and per family."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Status
from inference_support import REPO, TOKEN, Run, Scenario, assert_clean, completed
from server_process import CHILD_TIMEOUT

from servicebench_support_queue.client import EnvHttpClient
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.heuristic import triage

NO_MODEL = lambda cards: ([], Status(500))  # noqa: E731 - the fallback calls no model
SCENARIOS: dict[str, Scenario] = {
    "held_out_families": Scenario(
        ("--fallback", "--split", "test_families", "--limit", "5", "--repeats", "2"), NO_MODEL
    ),
    "one_family": Scenario(
        ("--fallback", "--split", "test", "--family", "damaged_item", "--limit", "3"), NO_MODEL
    ),
    "one_per_family": Scenario(
        ("--fallback", "--split", "validation", "--env", "servicebench"), NO_MODEL
    ),
    "unknown_split": Scenario(("--fallback", "--split", "holdout"), NO_MODEL),
    "unknown_family": Scenario(
        ("--fallback", "--split", "test", "--family", "price_drop_after_window"), NO_MODEL
    ),
}


def specs(live_server: str, env: str, split: str, stop: int) -> list[dict[str, Any]]:
    with EnvHttpClient(live_server) as client:
        return client.task_range(env, split, 0, stop)


def split_named(live_server: str, env: str, name: str) -> dict[str, Any]:
    with EnvHttpClient(live_server) as client:
        (split,) = [s for s in client.splits(env) if s["name"] == name]
    return split


def heuristic_score(spec: dict[str, Any]) -> float:
    """The Support Queue heuristic's score on a split task, played in process."""
    env = SupportQueueEnvironment()
    observation = env.reset(split=spec["split"], index=spec["index"])
    while not observation.done:
        observation = env.step(triage(observation))
    return env.score


def test_split_runs_log_only_structured_lines(runs: dict[str, Run]) -> None:
    assert_clean(runs)


def test_a_split_run_plays_the_splits_first_tasks_by_index_in_plan_order(
    live_server: str, runs: dict[str, Run]
) -> None:
    run = completed(runs["held_out_families"])
    expected = {
        env: specs(live_server, env, "test_families", 5)
        for env in ("servicebench", "support_queue")
    }
    planned = [
        expected[env][k]
        for k in range(5)
        for _ in range(2)
        for env in ("servicebench", "support_queue")
    ]
    assert [(e.task, e.env) for e in run.episodes] == [(s["id"], s["env"]) for s in planned]
    assert not run.requests, "--fallback needs no model"
    records = run.results["tasks"]
    for record, spec, episode in zip(records, planned, run.episodes, strict=True):
        assert {k: record[k] for k in ("split", "index", "family", "seed", "task_id")} == {
            k: spec[k] for k in ("split", "index", "family", "seed", "task_id")
        }
        assert episode.success and record["success"]
        if spec["env"] == "servicebench":  # the oracle on every family, held out or not
            assert episode.score == 1.0
        else:
            assert record["score"] == pytest.approx(heuristic_score(spec), abs=1e-6)
    assert run.results["split"] == "test_families" and run.results["limit"] == 5


def test_results_and_report_give_pass_k_per_split_and_per_family(runs: dict[str, Run]) -> None:
    run = completed(runs["held_out_families"])
    aggregate = run.results["aggregate"]
    records = run.results["tasks"]
    families = {(row["env"], row["label"]): row for row in aggregate["families"]}
    assert set(families) == {(r["env"], r["family"]) for r in records}
    for (env, family), row in families.items():
        mine = [r for r in records if (r["env"], r["family"]) == (env, family)]
        assert row["split"] == "test_families" and row["episodes"] == len(mine)
        assert row["instances"] == len({r["seed"] for r in mine}) and row["tasks"] == 1
        assert row["mean_score"] == pytest.approx(sum(r["score"] for r in mine) / len(mine))
        assert set(row["pass_hat_k"]) == {"1", "2"}
    for row in aggregate["splits"]:
        mine = [f for f in families.values() if f["env"] == row["env"]]
        assert row["label"] == row["split"] == "test_families" and row["tasks"] == len(mine)
        assert row["mean_score"] == pytest.approx(sum(f["mean_score"] for f in mine) / len(mine))
    report = (run.cwd / "report.md").read_text()
    assert "## Per split" in report and "## Per family" in report
    assert all(f"`{family}`" in report for _, family in families)
    assert "split test_families: the first 5 tasks (its families interleaved)" in report


def test_family_picks_that_familys_tasks_in_index_order(
    live_server: str, runs: dict[str, Run]
) -> None:
    run = completed(runs["one_family"])
    split = split_named(live_server, "servicebench", "test")
    position, m = split["families"].index("damaged_item"), len(split["families"])
    records = run.results["tasks"]
    assert [r["index"] for r in records] == [position + k * m for k in range(3)]
    assert {r["family"] for r in records} == {"damaged_item"} and {r["env"] for r in records} == {
        "servicebench"
    }  # Support Queue has no such family: skipped
    assert all(e.score == 1.0 for e in run.episodes)


def test_without_limit_a_split_run_plays_one_task_of_each_family(
    live_server: str, runs: dict[str, Run]
) -> None:
    run = completed(runs["one_per_family"])
    split = split_named(live_server, "servicebench", "validation")
    assert [r["family"] for r in run.results["tasks"]] == split["families"]


def test_an_unknown_split_or_family_is_a_usage_error_naming_the_known_ones(
    runs: dict[str, Run],
) -> None:
    split, family = runs["unknown_split"], runs["unknown_family"]
    assert split.returncode == family.returncode == 2 and split.stdout == family.stdout == ""
    assert "train, validation, test, test_families" in split.stderr
    assert "'price_drop_after_window' is not a family of split 'test'" in family.stderr
    assert "coupon_added_flat" in family.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--family", "stale_price"),
        ("--limit", "3"),
        ("--split", "test", "--seed", "3"),
        ("--split", "test", "--seeds", "1-3"),
        ("--split", "test", "--task", "1"),
        ("--split", "test", "--limit", "0"),
    ],
)
def test_split_flags_that_do_not_fit_together_fail_before_any_work(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "inference.py"), *args],
        cwd=tmp_path,
        env={**os.environ, "HF_TOKEN": TOKEN},
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert ("--split" in done.stderr or "--limit" in done.stderr) and TOKEN not in done.stderr
    assert not list(tmp_path.iterdir())
