"""The README's quick start and tests, and the claims of docs/api.md and docs/project-layout.md
about the repo: the commands serve and test as written (and CI runs the README's), the layout is
the tree, the install snippet imports, the screenshots are there."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import httpx
from checkout import REPO
from doc_commands import run_as_written, served_as_written
from readme_support import code_blocks, commands, section
from server_process import CHILD_TIMEOUT, free_port, stop, wait_healthy

from servicebench_support_queue.server.protocols import UVICORN_ARGS

PACKAGE_DIRS = ("agents", "mock_services", "report", "server")
LAYOUT_LINE = re.compile(
    r"^(?P<indent> *)(?P<names>[\w.\-]+/?(?:, [\w.\-]+/?)*)(?: {2,}(?P<text>\S.*))?$"
)
QUICK_START = code_blocks(section("Quick start"), "bash")[0]
INSTALL, SERVE = commands(QUICK_START, "bash")
TEST_BLOCKS = code_blocks(section("Tests"), "bash")
SERVING = code_blocks(section("Running the server", "docs/api.md"), "bash")
UVICORN, HELP = (commands(block, "bash")[0] for block in SERVING)
RUNS = [SERVE, UVICORN, HELP, commands(TEST_BLOCKS[1], "bash")[0]]
"""The commands this module runs (tests/test_docs.py checks that every command is run)."""


def layout_paths() -> list[str]:
    """Every path the "Project layout" block names, nested by its two-space indentation."""
    text = section("Project layout", "docs/project-layout.md")
    block = re.search(r"```\n(.*?)```", text, re.S)
    assert block, "no layout block"
    paths, parents = [], []
    for line in block.group(1).splitlines():
        match = LAYOUT_LINE.match(line)
        assert match and match["text"], f"not a layout line (names, then a description): {line!r}"
        depth = len(match["indent"]) // 2
        assert len(match["indent"]) % 2 == 0 and depth <= len(parents), f"bad indentation: {line!r}"
        parents = parents[:depth]
        names = match["names"].split(", ")
        paths += ["/".join([*parents, name]).rstrip("/") for name in names]
        if len(names) == 1 and names[0].endswith("/"):
            parents.append(names[0].rstrip("/"))
    return paths


def test_every_path_the_layout_names_exists():
    missing = [path for path in layout_paths() if not (REPO / path).exists()]
    assert not missing, missing


def test_the_layout_names_every_module_and_package_of_the_package():
    named = set(layout_paths())
    package = {"__init__.py"} | {path.name for path in REPO.glob("*.py")}
    for folder in PACKAGE_DIRS:
        for path in (REPO / folder).rglob("*"):
            relative = path.relative_to(REPO).as_posix()
            if "__pycache__" in relative:
                continue
            if path.is_dir() or (path.suffix == ".py" and path.name != "__init__.py"):
                package.add(relative)
        package.add(folder)
    assert package <= named, sorted(package - named)


def test_ci_runs_ruff_and_then_exactly_the_readmes_test_command():
    [test] = commands(TEST_BLOCKS[0], "bash")
    steps = [
        line
        for line in (REPO / ".ci" / "run").read_text().splitlines()
        if line.startswith("uv run")
    ]
    assert steps == [
        "uv run --frozen --extra test ruff check .",
        "uv run --frozen --extra test ruff format --check .",
        test,
    ]
    assert test == "uv run --frozen --extra test pytest"
    whole = code_blocks(section("The whole suite", "docs/testing.md"), "bash")
    assert commands(whole[0], "bash") == [test], "docs/testing.md says the same"


def test_the_quick_subset_is_the_documented_one_and_collects_part_of_the_suite():
    """Run as written, collecting only (its tests run in the full suite); the docs agree."""
    quick = commands(TEST_BLOCKS[1], "bash")[0]
    documented = code_blocks(section("The whole suite", "docs/testing.md"), "bash")
    assert quick in [commands(block, "bash")[0] for block in documented]
    assert quick.startswith("uv run --frozen --extra test pytest tests/")
    done = run_as_written(quick + " --collect-only", timeout=CHILD_TIMEOUT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    collected = int(re.search(r"(\d+) tests? collected", done.stdout)[1])
    assert collected > 500, done.stdout[-2000:]


def test_the_quick_starts_commands_install_uv_then_serve_the_app():
    assert INSTALL == "pip install uv"
    with served_as_written(SERVE) as url:
        tasks = httpx.get(f"{url}/tasks", timeout=10).json()["tasks"]
        assert {card["env"] for card in tasks} == {"servicebench", "support_queue"}
        assert httpx.get(f"{url}/web/", timeout=10).status_code == 200


def test_the_uvicorn_command_serves_the_app_behind_the_servers_protocols():
    """The command line of docs/api.md, with uvicorn started from this environment (uv run would
    re-sync it) on a free loopback port."""
    argv = shlex.split(UVICORN)
    assert argv[:4] == ["uv", "run", "--frozen", "uvicorn"]
    args = argv[4:]
    assert " ".join(UVICORN_ARGS) in " ".join(args), "the door's protocols (server/protocols/)"
    port = free_port()
    args[args.index("--host") + 1], args[args.index("--port") + 1] = "127.0.0.1", str(port)
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", *args, "--log-level", "warning"], cwd=REPO
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", process)
        tasks = httpx.get(f"http://127.0.0.1:{port}/tasks", timeout=10).json()["tasks"]
        assert {card["env"] for card in tasks} == {"servicebench", "support_queue"}
    finally:
        stop(process)


def test_the_help_command_prints_the_flags_it_documents():
    done = run_as_written(HELP, timeout=CHILD_TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]
    for flag in ("--host", "--port", "--workers", "--store"):
        assert flag in done.stdout
    assert "servicebench-support-queue-server" in done.stdout


def test_the_install_snippet_imports():
    snippet = re.search(
        r"```python\n(from servicebench_support_queue.*?)```",
        section("Installing the package", "docs/api.md"),
        re.S,
    )
    assert snippet
    namespace: dict = {}
    exec(snippet.group(1), namespace)  # the page's own two import lines
    assert callable(namespace["create_app"]) and namespace["__version__"]


def pictures(text: str) -> list[str]:
    return re.findall(r"!\[[^\]]+\]\(([^)]+)\)", text)


def test_the_reports_screenshot_is_there_and_small():
    """scripts/screenshot_report.py makes it from a --fallback run; docs/inference.md shows it."""
    assert pictures(section("The HTML report", "docs/inference.md")) == ["report.png"]
    png = (REPO / "docs" / "report.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) < 200 * 1024


def test_the_playgrounds_screenshot_is_there_and_small():
    """scripts/screenshot_playground.py makes it; docs/playground.md shows it."""
    assert pictures(section("The playground (`/web`)", "docs/playground.md")) == ["playground.png"]
    png = (REPO / "docs" / "playground.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) < 200 * 1024
