"""The README and docs/ as a whole: every command block is run by a test or says why it cannot be,
every link between the pages resolves, every page is in the index, and the commands no other test
runs are run here as written.

A module that runs documented commands lists them in `RUNS` (taken from the text it runs, never
copied); a command no test can run here is in NOT_RUNNABLE with the reason and the test that checks
what it relies on instead."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from checkout import REPO
from doc_commands import run_as_written
from readme_support import (
    COMMAND_LANGUAGES,
    DOCS,
    code_blocks,
    commands,
    documentation,
    headings,
    normalized,
    page,
    section,
    slug,
)
from server_process import CHILD_TIMEOUT

RUNNERS = (
    "test_readme",
    "test_readme_inference",
    "test_readme_report",
    "test_curl_walkthrough",
    "test_push",
    "test_docs",
)
"""The modules that run documented commands, each listing them in `RUNS`."""

NO_ENGINE = (
    "no Docker engine where the tests run: tests/test_dockerfile.py checks the Dockerfile's facts, "
    "lints it with hadolint and replays its install and start steps in a fresh venv "
    "(scripts/replay_dockerfile.py), then smoke-tests the server it started"
)

NOT_RUNNABLE = {
    "pip install uv": "installs uv into the user's Python; the tests already run under uv, which "
    ".ci/run installs the same way (`python3 -m pip install uv==0.13.9`)",
    "uv run --frozen --extra test pytest": "the whole suite, which a test cannot run from inside "
    "itself: .ci/run runs exactly this line (tests/test_readme.py checks that)",
    "docker build -t servicebench-support-queue .": NO_ENGINE,
    "docker run --rm -p 8000:8000 servicebench-support-queue": NO_ENGINE,
    "docker compose up --build --scale app=4 # http://localhost:8000, as one server": (
        "no Docker engine: tests/test_compose.py checks compose.yaml and deploy/haproxy.cfg, and "
        "tests/server/store/test_faults.py runs the same topology as processes (HAProxy from "
        "Debian, two servers, one Redis)"
    ),
    "uv run --frozen hf auth login # a token with write access": "needs a Hugging Face account "
    "and the network, which the tests do not have",
    "python3 scripts/smoke_test_server.py https://<you>-servicebench-support-queue.hf.space": (
        "a deployed Space; the same script runs here against a local server (test_docs, and "
        "tests/test_dockerfile.py)"
    ),
    "vllm serve Qwen/Qwen2.5-7B-Instruct --port 8001 --enable-auto-tool-choice "
    "--tool-call-parser hermes": "starts a model server on a GPU; the inference commands that use "
    "it run against a scripted fake model (tests/test_readme_inference.py)",
    "uv run --frozen --with trl --with datasets python examples/trl_environment.py # GRPO on every "
    "task of both (a GPU)": "trains on a GPU; tests/test_trl_example.py runs TRL's own GRPOTrainer "
    "with the same environments on a tiny model in $TRL_VENV",
    "python3 -m venv /tmp/trl && /tmp/trl/bin/pip install -r .ci/trl-requirements.txt -e . && "
    "TRL_VENV=/tmp/trl uv run --frozen --extra test pytest tests/test_trl_example.py": (
        "installs torch and TRL (minutes, gigabytes), then part of the suite: .ci/run builds the "
        "same venv from the same file and runs these tests"
    ),
    "uv venv /tmp/mcp2 && uv pip install --python /tmp/mcp2/bin/python -r "
    ".ci/mcp2-requirements.txt && MCP2_VENV=/tmp/mcp2 uv run --frozen --extra test pytest "
    "tests/server/mcp/test_clients.py tests/test_readme_mcp.py": (
        "builds a venv, then part of the suite: .ci/run builds the same venv from the same file "
        "and runs these tests"
    ),
}

TRL_PAGE = "docs/training-trl.md"
TRL_HELP, TRL_DRY_RUN = commands(code_blocks(page(TRL_PAGE), "bash")[0], "bash")[:2]
SMOKE_TEST = commands(
    code_blocks(section("Docker", "docs/docker-and-spaces.md"), "bash")[0], "bash"
)[2]
RUNS = [TRL_HELP, TRL_DRY_RUN, SMOKE_TEST]
"""The commands this module runs (those no other test runs as written)."""
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def run_by_tests() -> set[str]:
    runs: set[str] = set()
    for name in RUNNERS:
        module = importlib.import_module(name)
        runs |= {normalized(command) for command in module.RUNS}
    return runs


def documented_blocks() -> list[tuple[str, str, str]]:
    """(page, language, block) of every command block of the README and docs/."""
    return [
        (path.relative_to(REPO).as_posix(), language, block)
        for path in documentation()
        for language in COMMAND_LANGUAGES
        for block in code_blocks(path.read_text(encoding="utf-8"), language)
    ]


def test_every_command_is_run_by_a_test_or_says_why_not() -> None:
    runs, unaccounted = run_by_tests(), []
    for name, language, block in documented_blocks():
        if normalized(block) in runs:  # a script a test runs whole
            continue
        for command in commands(block, language):
            if command not in runs and command not in NOT_RUNNABLE:
                unaccounted.append(f"{name}: {command}")
    assert not unaccounted, "no test runs these; run them, or say why not:\n" + "\n".join(
        unaccounted
    )


def test_every_not_runnable_command_is_still_documented() -> None:
    documented = {
        command
        for _, language, block in documented_blocks()
        for command in commands(block, language)
    }
    assert set(NOT_RUNNABLE) <= documented, set(NOT_RUNNABLE) - documented


def test_every_documented_language_is_a_command_language_or_not_a_command() -> None:
    """A command in a block of another language would escape the check above."""
    for path in documentation():
        for language in re.findall(r"^ *```(\w*)", path.read_text(encoding="utf-8"), re.M):
            assert language in {*COMMAND_LANGUAGES, "python", "json", "text", ""}, (
                path,
                language,
            )


def anchors(path: Path) -> set[str]:
    return {slug(title) for _, _, title in headings(path.read_text(encoding="utf-8"))}


def links(path: Path) -> list[str]:
    """The page's link targets, outside code blocks."""
    text = re.sub(r"^( *)```.*?^\1```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    return LINK.findall(text)


@pytest.mark.parametrize("path", documentation(), ids=lambda path: path.name)
def test_every_link_resolves_to_a_file_and_a_heading(path: Path) -> None:
    broken = []
    for target in links(path):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        destination = (path.parent / file).resolve() if file else path
        inside = destination.exists() and REPO in destination.parents
        if not inside or (anchor and anchor not in anchors(destination)):
            broken.append(target)
    assert not broken, broken


def test_the_readme_and_the_index_link_every_page() -> None:
    pages = {path.name for path in DOCS.glob("*.md")} - {"README.md"}
    readme = {Path(t.partition("#")[0]).name for t in links(REPO / "README.md")}
    index = {Path(t.partition("#")[0]).name for t in links(DOCS / "README.md")}
    assert pages <= readme | {"README.md"}, pages - readme
    assert pages <= index, pages - index
    assert "README.md" in readme, "the README links the index"


def test_the_trl_examples_help_runs_as_written() -> None:
    done = run_as_written(TRL_HELP, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "--dry-run" in done.stdout and "--env" in done.stdout


def test_the_trl_examples_dry_run_prints_its_rows(live_server: str) -> None:
    done = run_as_written(TRL_DRY_RUN, live_server, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "servicebench" in done.stdout and "support_queue" in done.stdout


def test_the_smoke_test_passes_as_written(live_server: str) -> None:
    done = run_as_written(SMOKE_TEST, live_server, timeout=CHILD_TIMEOUT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert '"passed": true' in done.stdout
