"""The report's numbers on a constructed results file, against values worked out by hand
(tests/report_results.py), and what it makes of a file that is not results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_results import results_document

from servicebench_support_queue.report.aggregate import (
    ResultsError,
    build,
    load_results,
    trials_per_instance,
)


def rows_by_label(table_title: str, families: bool = False) -> dict:
    data = build(results_document(families))
    [table] = [t for t in data.tables if t.title == table_title]
    return {row.label: row for row in table.rows}


def test_task_rows_mean_standard_error_and_pass_hat_by_hand() -> None:
    rows = rows_by_label("Score per task")
    a, b = rows["t_a"], rows["t_b"]
    assert (a.instances, a.episodes, a.successes) == (2, 6, 2)
    assert a.mean_score == pytest.approx(7 / 15)
    assert a.stderr == pytest.approx(11 / 30)
    assert [a.pass_hat[k] for k in (1, 2, 3)] == pytest.approx([1 / 3, 1 / 6, 0.0])
    assert b.mean_score == pytest.approx(0.9) and b.stderr == pytest.approx(0.0)
    assert [b.pass_hat[k] for k in (1, 2, 3)] == pytest.approx([1.0, 1.0, 1.0])


def test_environment_and_overall_rows_weigh_tasks_equally() -> None:
    rows = rows_by_label("Score per environment")
    assert list(rows) == ["servicebench", "support_queue", "all"]
    overall = rows["all"]
    assert overall.mean_score == pytest.approx(41 / 60)
    assert overall.stderr == pytest.approx(11 / 60)
    assert overall.pass_hat[2] == pytest.approx(7 / 12)
    assert overall.success_rate == pytest.approx(8 / 12)


def test_no_family_or_split_tables_without_them_in_the_records() -> None:
    titles = [t.title for t in build(results_document()).tables]
    assert titles == ["Score per task", "Score per environment"]


def test_family_and_split_tables_when_the_records_carry_them() -> None:
    families = rows_by_label("Score per family", families=True)
    assert list(families) == ["f1", "f2", "g1"]
    assert [row.split for row in families.values()] == ["test", "test", "train"]
    assert families["f1"].mean_score == pytest.approx(5 / 6)
    assert families["f1"].stderr is None  # one instance: undefined, never 0
    assert families["f1"].pass_hat[2] == pytest.approx(1 / 3)
    assert families["f2"].mean_score == pytest.approx(0.1) and families["f2"].pass_hat[1] == 0
    assert families["g1"].mean_score == pytest.approx(0.9) and families["g1"].instances == 2
    splits = rows_by_label("Score per split", families=True)
    assert list(splits) == ["test", "train"]
    assert splits["test"].mean_score == pytest.approx((5 / 6 + 0.1) / 2)
    assert splits["test"].tasks == 2 and splits["test"].episodes == 6
    assert splits["test"].pass_hat[2] == pytest.approx(1 / 6)


def test_repeats_follow_the_records_when_the_file_understates_them() -> None:
    document = results_document()
    document["repeats"] = 1
    assert trials_per_instance(document["tasks"]) == 3
    data = build(document)
    assert data.repeats == 3 and set(data.evaluation.overall.pass_hat) == {1, 2, 3}


def test_an_empty_run_builds_without_rows() -> None:
    data = build({"tasks": [], "repeats": 1})
    assert [t.title for t in data.tables] == ["Score per task"] and data.scores == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not a JSON file"),
        ("[1, 2]", "no `tasks` list"),
        ('{"tasks": [{"env": "servicebench"}]}', "episode 0 of `tasks` lacks task_id, seed"),
        (
            '{"tasks": [{"env": "x", "task_id": "t", "seed": null, "score": "high", "success": true}]}',
            "`score` is not a number",
        ),
    ],
)
def test_a_file_that_is_not_results_is_named(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "results.json"
    path.write_text(content)
    with pytest.raises(ResultsError, match=message.replace("`", ".").replace("(", r"\(")):
        load_results(path)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="cannot read"):
        load_results(tmp_path / "nowhere.json")


def test_load_results_reads_what_build_takes(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results_document()))
    assert build(load_results(path)).evaluation.overall.episodes == 12
