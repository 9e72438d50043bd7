"""`python -m servicebench_support_queue.report`: an old results file rendered as the report, run
as a user runs it; a file that is not results is refused in one line, with status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from report_results import results_document


def report(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "servicebench_support_queue.report", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_renders_a_results_file_where_asked_and_beside_it_by_default(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text(json.dumps(results_document()))
    done = report("results.json", "-o", "out/report.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    written = tmp_path / "out" / "report.html"
    assert done.stdout.strip() == str(written.resolve())
    assert written.read_text().startswith("<!doctype html>")
    done = report("results.json", cwd=tmp_path)
    assert done.returncode == 0 and (tmp_path / "results.html").is_file(), done.stderr


def test_refuses_what_is_not_a_results_file(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    for args, message in (
        (("notes.json",), "report: not an inference.py results file"),
        (("missing.json",), "report: cannot read missing.json"),
        (("notes.json", "-o", "notes.json"), "is the results file itself"),
    ):
        done = report(*args, cwd=tmp_path)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and done.stdout == ""
    assert (tmp_path / "notes.json").read_text() == '{"hello": 1}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.json"]
