"""Every `inference.py` command of docs/inference.md and of the README's quick start, run exactly
as written by bash, from a working directory of its own (`inference.py` there is the checkout's, and
`UV_PROJECT` points `uv run` at the checkout), against a live server (`ENV_BASE_URL`).

A command's model endpoint is a public service or a local vLLM, which a test cannot reach: the
value of `API_BASE_URL=` in the text, and the environment's `API_BASE_URL` for commands that leave
the default, point at a scripted fake model instead (as the curl walkthrough's host is a free
port). Its answers are quick, not good: Support Queue's are the heuristic's, ServiceBench's are
unusable text, so a run is short and ends well (exit 0) without measuring anything. The console
example of an unreachable endpoint runs untouched, and prints what the page shows.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from checkout import REPO
from doc_commands import user_environment
from fake_openai import FakeOpenAI, Recorded, Reply, Text
from inference_support import heuristic_brain, parse_episodes
from readme_support import code_blocks, commands, normalized, page, section
from server_process import CHILD_TIMEOUT
from test_readme_report import REPORT_COMMAND

from servicebench_support_queue.agents.config import DEFAULT_MODEL_NAME, DEFAULT_OUTPUT

SECTION = page("docs/inference.md")
QUICK_START = section("An agent, without a model")
NOT_OURS = ("vllm serve ",)
"""Lines of the section's blocks that start something else than this project."""
RUN_ELSEWHERE = (REPORT_COMMAND,)
"""Lines another test runs: the report's command needs the results of the line before it."""


@dataclass(frozen=True)
class Command:
    setup: tuple[str, ...]  # the `export` lines before it in its paragraph
    line: str

    @property
    def script(self) -> str:
        return "\n".join((*self.setup, self.line))

    @property
    def args(self) -> list[str]:
        words = shlex.split(self.line, comments=True)
        return words[words.index("inference.py") + 1 :]

    @property
    def key(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The command without its comment: the same run, documented twice, plays once."""
        return self.setup, tuple(shlex.split(self.line, comments=True))

    def assigned(self, name: str) -> str | None:
        values = re.findall(rf"\b{name}=(\S+)", self.script)
        return values[-1] if values else None


def documented_commands() -> list[Command]:
    found: list[Command] = []
    for block in code_blocks(QUICK_START, "bash") + code_blocks(SECTION, "bash"):
        for paragraph in block.split("\n\n"):
            setup: list[str] = []
            for line in paragraph.strip().splitlines():
                if line.startswith("#"):
                    continue
                if line.startswith("export "):
                    setup.append(line)
                elif "inference.py" in line:
                    command = Command(tuple(setup), line)
                    if command.key not in {other.key for other in found}:
                        found.append(command)
                else:
                    assert line.startswith(NOT_OURS + RUN_ELSEWHERE), (
                        f"a documented line that no test runs: {line}"
                    )
    return found


COMMANDS = documented_commands()
RUNS = [
    line
    for block in code_blocks(QUICK_START, "bash") + code_blocks(SECTION, "bash")
    for line in commands(block, "bash")
    if not line.startswith(NOT_OURS + RUN_ELSEWHERE)
] + commands(code_blocks(SECTION, "console")[0], "console")
"""The commands this module runs (tests/test_docs.py checks that every command is run)."""


def quick_model(body: dict[str, Any]) -> Reply:
    """The fake model: Support Queue gets the heuristic's triage, ServiceBench (the agent that
    offers tools) a reply with no action in it, so its episodes end after two turns."""
    if body.get("tools"):
        return Text("I have no idea which endpoint to call.")
    return heuristic_brain(body)


def environment(live_server: str, model_url: str) -> dict[str, str]:
    return user_environment(ENV_BASE_URL=live_server, API_BASE_URL=model_url)


@dataclass
class Run:
    command: Command
    cwd: Path
    fake: FakeOpenAI
    process: subprocess.Popen[str]
    stdout: str = ""
    stderr: str = ""


def start(command: Command, cwd: Path, fake: FakeOpenAI, live_server: str) -> Run:
    """The command run by bash in `cwd`, whose `inference.py` is the checkout's."""
    (cwd / "inference.py").symlink_to(REPO / "inference.py")
    script = re.sub(r"\bAPI_BASE_URL=\S+", f"API_BASE_URL={fake.url}", command.script)
    process = subprocess.Popen(
        ["bash", "-c", script],
        cwd=cwd,
        env=environment(live_server, fake.url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return Run(command, cwd, fake, process)


@pytest.fixture(scope="module")
def runs(live_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Run]]:
    """Every command at once (each spends seconds starting Python), each with its own fake."""
    with ExitStack() as stack:
        started = []
        for command in COMMANDS:
            fake = stack.enter_context(FakeOpenAI())
            fake.program(default=quick_model)
            started.append(start(command, tmp_path_factory.mktemp("run"), fake, live_server))
        for run in started:
            run.stdout, run.stderr = run.process.communicate(timeout=1800)
        yield started


def test_the_section_documents_the_runs_a_user_needs() -> None:
    runs = [" ".join(command.args) for command in COMMANDS]
    assert "" in runs and "--fallback" in runs and any("--seeds" in run for run in runs)
    assert all(
        command.line.startswith(("uv run --frozen python inference.py", "API_BASE_URL"))
        for command in COMMANDS
    ), "every command runs in the project's environment"


@pytest.mark.parametrize("index", range(len(COMMANDS)), ids=[c.line for c in COMMANDS])
def test_each_documented_command_runs_as_written(runs: list[Run], index: int) -> None:
    run = runs[index]
    assert run.process.returncode == 0, run.stderr[-4000:]
    episodes = parse_episodes(run.stdout)
    assert episodes
    args = run.command.args
    for flag, field in (("--env", "env"), ("--task", "task")):
        if flag in args:
            assert {getattr(e, field) for e in episodes} == {args[args.index(flag) + 1]}
    output = args[args.index("--output") + 1] if "--output" in args else DEFAULT_OUTPUT
    assert (run.cwd / output).is_file(), "the results file, where the command says"
    calls: list[Recorded] = run.fake.completions()
    if "--fallback" in args:
        assert not calls, "a fallback run never calls the model"
        return
    model = run.command.assigned("MODEL_NAME") or DEFAULT_MODEL_NAME
    assert calls and {call.body["model"] for call in calls} == {model}
    assert {e.model for e in episodes} == {model}
    key = run.command.assigned("HF_TOKEN") or run.command.assigned("API_KEY")
    if key:
        assert {call.headers.get("authorization") for call in calls} == {f"Bearer {key}"}


def console_example() -> tuple[str, list[str]]:
    """The section's console block: its one command and the lines the page shows it print."""
    [block] = code_blocks(SECTION, "console")
    first, *shown = block.strip().splitlines()
    assert first.startswith("$ ")
    return first.removeprefix("$ "), shown


def test_the_unreachable_endpoint_example_prints_what_the_page_shows(
    live_server: str, tmp_path: Path
) -> None:
    """Run untouched: its endpoint is a closed port of this machine."""
    command, shown = console_example()
    (tmp_path / "inference.py").symlink_to(REPO / "inference.py")
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=tmp_path,
        env=environment(live_server, "http://127.0.0.1:9/unused"),
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
    )
    elided = [line.removeprefix("... ") for line in shown if line.startswith("... ")]
    assert done.stdout.splitlines() == [line for line in shown if not line.startswith("... ")]
    assert elided and all(
        any(line.endswith(text) for line in done.stderr.splitlines()) for text in elided
    ), done.stderr[-4000:]


def test_the_quick_starts_fallback_run_prints_what_the_readme_says(runs: list[Run]) -> None:
    """The README quotes the first task's [END] line and Support Queue's three scores."""
    [run] = [run for run in runs if run.command.args == ["--fallback"]]
    quoted = re.search(r"\(`(\[END\] [^`]+)` for the task above", normalized(QUICK_START))[1]
    assert quoted in run.stdout.splitlines()
    episodes = parse_episodes(run.stdout)
    servicebench = [e.score for e in episodes if e.env == "servicebench"]
    assert len(servicebench) == 9 and set(servicebench) == {1.0}, "1.000 on every task"
    said = re.search(r"Support Queue (\d\.\d+) / (\d\.\d+) / (\d\.\d+)", normalized(QUICK_START))
    shown = [f"{e.score:.3f}" for e in episodes if e.env == "support_queue"]
    assert shown == list(said.groups())
