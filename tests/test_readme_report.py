"""The "The HTML report" block of docs/inference.md, run as written by bash from a working directory of its
own (`inference.py` there is the checkout's, `UV_PROJECT` points `uv run` at the checkout)
against a live server: the run writes its HTML report, and the command renders its results again."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from checkout import REPO
from readme_support import code_blocks, commands, section

REPORT_COMMAND = "uv run --frozen python -m servicebench_support_queue.report "


def report_block() -> str:
    [block] = code_blocks(section("The HTML report", "docs/inference.md"), "bash")
    return block


RUNS = commands(report_block(), "bash")
"""The commands this module runs (tests/test_docs.py checks that every command is run)."""


def test_the_report_block_runs_as_written(live_server: str, tmp_path: Path) -> None:
    block = report_block()
    lines = [line for line in block.splitlines() if line.strip()]
    assert len(lines) == 2 and lines[1].startswith(REPORT_COMMAND), block
    (tmp_path / "inference.py").symlink_to(REPO / "inference.py")
    environ = {
        k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV", "API_"))
    }
    environ.update(UV_PROJECT=str(REPO), ENV_BASE_URL=live_server)
    done = subprocess.run(
        ["bash", "-ec", block],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    first, again = (tmp_path / name for name in ("inference_report.html", "fallback_report.html"))
    assert done.stdout.strip().endswith(str(again.resolve())), "the command names what it wrote"
    assert first.read_text() == again.read_text(), "the same results, the same report"
    episodes = json.loads((tmp_path / "inference_results.json").read_text())["tasks"]
    assert len(episodes) == len({e["task_id"] for e in episodes}) * 10 * 2, "ten seeds, two tries"
    assert first.read_text().count("<details class='episode'") == len(episodes)
