"""inference.py as a user runs it, against a model endpoint that is not there, and where its files go.

Each run has its own working directory, a live environment server, and sentinel
keys in HF_TOKEN and API_KEY (the default run is a child process, as a user starts
it; the variations go through `inference.main` in this process, the same code): the run must say on stderr, in one
line, which endpoint failed and how, exit 3, keep the stdout contract, write its
files only where it was told to, and never print or write a key.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from inference_support import REPO, closed_port, parse_episodes, run_in_process
from server_process import CHILD_TIMEOUT

from servicebench_support_queue.models import TaskCard

MODEL_FAILED_STATUS = 3
USAGE_STATUS = 2
SECRETS = {"HF_TOKEN": "hf_SENTINEL_inference_4b1d9e", "API_KEY": "sk-SENTINEL_inference_77a0c3"}
FILES = (
    "inference_results.json",
    "inference_trajectories.jsonl",
    "inference_report.md",
    "inference_report.html",
)


@dataclass
class ChildRun:
    returncode: int
    stdout: str
    stderr: str
    cwd: Path
    model_url: str

    def files(self) -> set[Path]:
        return {path.relative_to(self.cwd) for path in self.cwd.rglob("*") if path.is_file()}

    def everything_written(self) -> str:
        texts = [self.stdout, self.stderr]
        texts += [(self.cwd / path).read_text(errors="replace") for path in self.files()]
        return "\n".join(texts)


@dataclass(frozen=True)
class Invocation:
    cwd: Path
    args: tuple[str, ...]
    model_url: str
    env: tuple[tuple[str, str], ...] = ()


def environment(live_server: str, invocation: Invocation) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "INFERENCE_"))}
    environ.update(SECRETS, ENV_BASE_URL=live_server, API_BASE_URL=invocation.model_url)
    environ.update(dict(invocation.env))
    return environ


def start(live_server: str, invocation: Invocation) -> subprocess.Popen:
    """inference.py in a child process, its output in files beside (not in) its working directory."""
    invocation.cwd.mkdir(parents=True, exist_ok=True)
    with (
        open(f"{invocation.cwd}.stdout", "w") as out,
        open(f"{invocation.cwd}.stderr", "w") as err,
    ):
        return subprocess.Popen(
            [sys.executable, str(REPO / "inference.py"), "--no-progress", *invocation.args],
            cwd=invocation.cwd,
            env=environment(live_server, invocation),
            stdout=out,
            stderr=err,
        )


def finish(invocation: Invocation, child: subprocess.Popen) -> ChildRun:
    code = child.wait(timeout=CHILD_TIMEOUT)
    stdout, stderr = (Path(f"{invocation.cwd}.{name}").read_text() for name in ("stdout", "stderr"))
    return ChildRun(code, stdout, stderr, invocation.cwd, invocation.model_url)


def run_here(live_server: str, invocation: Invocation) -> ChildRun:
    """The same run through `inference.main` in this process, from its own working directory."""
    invocation.cwd.mkdir(parents=True, exist_ok=True)
    with contextlib.chdir(invocation.cwd):
        code, stdout, stderr = run_in_process(
            environment(live_server, invocation), ["--no-progress", *invocation.args]
        )
    return ChildRun(code, stdout, stderr, invocation.cwd, invocation.model_url)


def run_inference(cwd: Path, live_server: str, *args: str) -> ChildRun:
    invocation = Invocation(cwd, args, f"http://127.0.0.1:{closed_port()}/v1")
    return finish(invocation, start(live_server, invocation))


def error_lines(run: ChildRun) -> list[str]:
    return [line for line in run.stderr.splitlines() if " ERROR " in line]


def assert_no_secret(run: ChildRun) -> None:
    written = run.everything_written()
    for secret in SECRETS.values():
        assert secret not in written


def invocations(root: Path) -> dict[str, Invocation]:
    def closed() -> str:
        return f"http://127.0.0.1:{closed_port()}/v1"

    quick = (("MODEL_BACKOFF_S", "0.01"),)
    return {
        # the default run: all six tasks, default retries and backoff
        "unreachable": Invocation(root / "unreachable", ("--output-dir", "out"), closed()),
        "concurrent": Invocation(
            root / "concurrent", ("--concurrency", "3", "--output-dir", "o"), closed(), quick
        ),
        "support_queue": Invocation(
            root / "support_queue", ("--task", "easy_inbox_cleanup", "--output-dir", "."), closed()
        ),
        "renamed": Invocation(
            root / "renamed" / "cwd",
            (
                "--fallback",
                "--task",
                "1",
                "--output-dir",
                "runs/a",
                "--output",
                "r.json",
                "--report",
                "sub/report.md",
                "--html-report",
                str(root / "renamed" / "elsewhere" / "report.html"),
                "--trajectories",
                str(root / "renamed" / "elsewhere" / "t.jsonl"),
            ),
            closed(),
        ),
        "default_dir": Invocation(
            root / "default_dir", ("--fallback", "--task", "1", "--output", "x.json"), closed()
        ),
    }


@pytest.fixture(scope="module")
def runs(live_server: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, ChildRun]:
    """The default run as a user starts it (a child process); the others in this process meanwhile."""
    planned = invocations(tmp_path_factory.mktemp("inference_runs"))
    child = start(live_server, planned["unreachable"])
    finished = {
        name: run_here(live_server, invocation)
        for name, invocation in planned.items()
        if name != "unreachable"
    }
    return {"unreachable": finish(planned["unreachable"], child), **finished}


def test_an_unreachable_model_is_one_clear_line_and_exit_3(
    runs: dict[str, ChildRun], cards: list[TaskCard]
) -> None:
    run = runs["unreachable"]
    assert run.returncode == MODEL_FAILED_STATUS, run.stderr
    [line] = error_lines(run)
    assert f"the model endpoint {run.model_url} is unreachable (APIConnectionError)" in line
    assert f"played 1 of {len(cards)} episodes (exit status 3)" in line
    assert "Traceback" not in run.stderr


def test_the_run_stops_after_the_episode_that_proves_it(
    runs: dict[str, ChildRun], cards: list[TaskCard]
) -> None:
    run = runs["unreachable"]
    [episode] = parse_episodes(run.stdout)  # the whole stdout is well-formed structured lines
    assert episode.task == cards[0].id and not episode.success and episode.score == 0.0
    assert [step["action"] for step in episode.steps] == [None, None]
    assert "APIConnectionError" in episode.steps[0]["error"]
    assert "not called again" in episode.steps[1]["error"], "the second turn costs nothing"


def test_its_files_are_all_in_the_output_dir_and_hold_no_key(runs: dict[str, ChildRun]) -> None:
    run = runs["unreachable"]
    assert run.files() == {Path("out") / name for name in FILES}
    assert_no_secret(run)


def test_concurrent_episodes_under_way_finish_and_no_new_one_starts(
    runs: dict[str, ChildRun], cards: list[TaskCard]
) -> None:
    run = runs["concurrent"]
    assert run.returncode == MODEL_FAILED_STATUS
    episodes = parse_episodes(run.stdout)
    assert [e.task for e in episodes] == [c.id for c in cards[:3]], "the three begun, in order"
    assert not any(e.success for e in episodes) and all(e.score == 0.0 for e in episodes)
    [line] = error_lines(run)
    assert f"played 3 of {len(cards)} episodes" in line
    assert run.files() == {Path("o") / name for name in FILES}
    assert_no_secret(run)


def test_a_support_queue_episode_without_the_model_is_no_success(
    runs: dict[str, ChildRun],
) -> None:
    run = runs["support_queue"]
    assert run.returncode == MODEL_FAILED_STATUS
    [episode] = parse_episodes(run.stdout)
    assert episode.steps and all(s["action"] is not None for s in episode.steps), (
        "the queue is moved on with the neutral action"
    )
    assert not episode.success and episode.score == 0.0
    assert run.files() == {Path(name) for name in FILES}
    assert_no_secret(run)


def test_each_file_can_be_renamed_relative_to_the_dir_or_anywhere(
    runs: dict[str, ChildRun],
) -> None:
    run = runs["renamed"]
    assert run.returncode == 0, run.stderr
    assert run.files() == {Path("runs/a/r.json"), Path("runs/a/sub/report.md")}
    elsewhere = run.cwd.parent / "elsewhere" / "t.jsonl"
    assert elsewhere.read_text().count("\n") == 1
    assert (elsewhere.parent / "report.html").read_text().count("<details") == 1
    assert str(elsewhere) in run.stderr
    assert_no_secret(run)


def test_without_output_dir_the_files_go_to_the_working_directory(
    runs: dict[str, ChildRun],
) -> None:
    run = runs["default_dir"]
    assert run.returncode == 0, run.stderr
    assert run.files() == {Path("x.json"), *(Path(name) for name in FILES[1:])}


@pytest.mark.parametrize(
    "args, complaint",
    [
        (("--output", "same.txt", "--report", "same.txt"), "--output and --report name the same"),
        (("--report", "r.md", "--html-report", "./r.md"), "--report and --html-report name the"),
        (("--output-dir", "a_file"), "is not a directory"),
        (("--output-dir", ".", "--trajectories", "a_dir"), "--trajectories"),
    ],
)
def test_a_bad_file_layout_is_a_usage_error_before_anything_runs(
    live_server: str, tmp_path: Path, args: tuple[str, ...], complaint: str
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "a_file").write_text("keep me")
    (cwd / "a_dir").mkdir()
    run = run_inference(cwd, live_server, "--fallback", *args)
    assert run.returncode == USAGE_STATUS and run.stdout == ""
    assert complaint in run.stderr
    assert run.files() == {Path("a_file")} and (cwd / "a_file").read_text() == "keep me"
    assert_no_secret(run)
