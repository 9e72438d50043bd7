"""The README's claims about the repo: its project layout is the tree, its Quick start commands are
the ones that work (and CI runs), its install snippet imports."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import httpx
from checkout import REPO
from server_process import free_port, stop, wait_healthy

README = (REPO / "README.md").read_text(encoding="utf-8")
PACKAGE_DIRS = ("agents", "mock_services", "server")
LAYOUT_LINE = re.compile(
    r"^(?P<indent> *)(?P<names>[\w.\-]+/?(?:, [\w.\-]+/?)*)(?: {2,}(?P<text>\S.*))?$"
)


def section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end > 0 else None]


def layout_paths() -> list[str]:
    """Every path the "Project layout" block names, nested by its two-space indentation."""
    block = re.search(r"```\n(.*?)```", section("Project layout"), re.S)
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


def quick_start() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", section("Quick start"), re.S)
    assert block
    return [line.removeprefix("pip install uv && ") for line in block.group(1).strip().splitlines()]


def test_ci_runs_ruff_and_then_exactly_the_readmes_test_command():
    serve, test = quick_start()
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


def test_the_readmes_server_command_serves_the_app():
    """The first command, with uvicorn started from this environment (uv run would re-sync it)."""
    serve, _ = quick_start()
    argv = shlex.split(serve)
    assert argv[:4] == ["uv", "run", "--frozen", "uvicorn"]
    args = argv[4:]
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


def test_the_install_snippet_imports():
    snippet = re.search(
        r"```python\n(from servicebench_support_queue.*?)```", section("Quick start"), re.S
    )
    assert snippet
    namespace: dict = {}
    exec(snippet.group(1), namespace)  # the README's own two import lines
    assert callable(namespace["create_app"]) and namespace["__version__"]


def test_the_playgrounds_screenshot_is_there_and_small():
    """scripts/screenshot_playground.py makes it; the README shows it."""
    pictures = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", section("The playground (`/web`)"))
    assert pictures == ["docs/playground.png"]
    png = (REPO / pictures[0]).read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) < 200 * 1024
