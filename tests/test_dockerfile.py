"""The Dockerfile, proved without a Docker engine: its facts, its lint, and a replay of its steps.

No engine runs on the machines that build and test this project, so the checks are:
the facts the Space needs, read off the file; the HEALTHCHECK and CMD commands run
for real; hadolint; and scripts/replay_dockerfile.py, which installs and starts the
image's steps in a fresh virtual environment from a clean clone and plays an episode.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import dockerfile_parser as df  # noqa: E402
from server_process import CHILD_TIMEOUT, free_port  # noqa: E402

from servicebench_support_queue.server.protocols import UVICORN_ARGS  # noqa: E402

DOCKERFILE = REPO / "Dockerfile"
INSTRUCTIONS = df.parse(DOCKERFILE.read_text(encoding="utf-8"))


def only(keyword: str) -> list[df.Instruction]:
    return [ins for ins in INSTRUCTIONS if ins.keyword == keyword]


def index_of(predicate) -> int:
    matches = [n for n, ins in enumerate(INSTRUCTIONS) if predicate(ins)]
    assert matches, "no such instruction in the Dockerfile"
    return matches[0]


def final_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for ins in only("ENV"):
        env.update(df.env_pairs(ins.value))
    return env


def test_base_image_is_the_official_slim_python_311() -> None:
    froms = only("FROM")
    assert len(froms) == 1 and INSTRUCTIONS[0].keyword == "FROM"
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?", froms[0].value)


def test_uv_is_pinned_to_the_version_ci_uses() -> None:
    args = dict(pair for ins in only("ARG") for pair in df.env_pairs(ins.value))
    install = next(ins.value for ins in only("RUN") if "pip install" in ins.value)
    pinned = df.expand(install, args)
    ci_version = re.search(r"uv==([\d.]+)", (REPO / ".ci" / "run").read_text()).group(1)
    assert f"uv=={ci_version}" in pinned


def test_dependencies_install_from_the_lock_file_before_the_source_is_copied() -> None:
    copies = only("COPY")
    lock_copy = index_of(
        lambda i: (
            i.keyword == "COPY"
            and df.split_flags(i.value)[1].split()[:-1] == ["pyproject.toml", "uv.lock"]
        )
    )
    deps_sync = index_of(
        lambda i: i.keyword == "RUN" and "uv sync" in i.value and "--no-install-project" in i.value
    )
    source_copy = index_of(
        lambda i: i.keyword == "COPY" and df.split_flags(i.value)[1].split()[0] == "."
    )
    project_sync = max(
        n for n, i in enumerate(INSTRUCTIONS) if i.keyword == "RUN" and "uv sync" in i.value
    )
    assert lock_copy < deps_sync < source_copy < project_sync
    assert len(copies) == 2, "only the lock files may be copied before the dependency layer"
    for ins in INSTRUCTIONS:
        if "uv sync" in ins.value:
            assert "--frozen" in ins.value, "every uv sync must install exactly what uv.lock pins"


def test_the_server_runs_as_uid_1000_and_owns_the_app() -> None:
    users = only("USER")
    assert users and users[-1].value == "1000"
    assert index_of(lambda i: i.keyword == "USER") < index_of(lambda i: i.keyword == "COPY")
    useradd = next(ins.value for ins in only("RUN") if "useradd" in ins.value)
    assert "--uid 1000" in useradd
    for ins in only("COPY"):
        assert ("chown", "1000:1000") in df.split_flags(ins.value)[0]


def test_port_defaults_to_8000_everywhere() -> None:
    assert final_env()["PORT"] == "8000"
    assert [ins.value for ins in only("EXPOSE")] == ["8000"]
    manifest = yaml.safe_load((REPO / "openenv.yaml").read_text(encoding="utf-8"))
    assert manifest["port"] == 8000


def _cmd_args_with_fake_uvicorn(tmp_path: Path, extra_env: dict[str, str]) -> list[str]:
    """Run the image's CMD with a stand-in `uvicorn` that prints the arguments it got."""
    fake = tmp_path / "uvicorn"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    fake.chmod(0o755)
    argv = df.command_argv(only("CMD")[-1].value)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", **extra_env}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=10, check=True)
    return done.stdout.splitlines()


def test_cmd_starts_uvicorn_on_all_interfaces_and_port_8000_by_default(tmp_path: Path) -> None:
    command = " ".join(df.command_argv(only("CMD")[-1].value))
    assert "exec uvicorn servicebench_support_queue.server.app:app" in command, (
        "uvicorn must be PID 1 to get SIGTERM"
    )
    assert _cmd_args_with_fake_uvicorn(tmp_path, {}) == [
        "servicebench_support_queue.server.app:app",
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
        *UVICORN_ARGS,  # the door's protocols: limits uvicorn lacks (server/protocols/)
    ]


def test_cmd_listens_on_the_port_the_platform_gives(tmp_path: Path) -> None:
    args = _cmd_args_with_fake_uvicorn(tmp_path, {"PORT": "7860", "HOST": "0.0.0.0"})
    assert args[args.index("--port") + 1] == "7860"


def test_healthcheck_uses_python_and_passes_only_when_health_answers(live_server: str) -> None:
    options, argv = df.healthcheck(only("HEALTHCHECK")[-1].value)
    assert argv[0] == "python", "the slim image has no curl"
    assert "/health" in " ".join(argv) and {"interval", "timeout"} <= set(options)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    port = live_server.rsplit(":", 1)[1]
    up = subprocess.run(argv, env={**env, "PORT": port}, capture_output=True, timeout=30)
    down = subprocess.run(
        argv, env={**env, "PORT": str(free_port())}, capture_output=True, timeout=30
    )
    assert up.returncode == 0, up.stderr
    assert down.returncode != 0


def test_hadolint_finds_nothing() -> None:
    hadolint = shutil.which(
        "hadolint", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    )
    assert hadolint, "hadolint is missing: install the test extra (uv sync --extra test)"
    done = subprocess.run(
        [hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


def test_readme_front_matter_declares_a_docker_space_on_the_image_port() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", readme, re.S)
    assert match, "README.md needs Hugging Face Space front matter"
    front = yaml.safe_load(match.group(1))
    assert front["sdk"] == "docker"
    assert str(front["app_port"]) == final_env()["PORT"]
    assert "openenv" in front["tags"]
    assert {"title", "emoji", "colorFrom", "colorTo"} <= set(front)


# ----------------------------------------------------------------------------- .dockerignore


def test_dockerignore_matches_as_docker_does() -> None:
    ignore = df.DockerIgnore("**/__pycache__\n*.egg-info\ntests\ndocs/*.md\n!docs/keep.md\n")
    assert ignore.excludes("__pycache__/a.pyc") and ignore.excludes(
        "server/__pycache__/app.cpython-311.pyc"
    )
    assert ignore.excludes("x.egg-info/PKG-INFO") and not ignore.excludes("sub/x.egg-info")
    assert ignore.excludes("tests/test_a.py") and not ignore.excludes("server/tests.py")
    assert ignore.excludes("docs/a.md") and not ignore.excludes("docs/keep.md")
    assert not ignore.excludes("docs/sub/a.md")


def test_the_image_holds_the_app_and_leaves_tests_caches_and_venvs_out() -> None:
    files = set(df.context_files(REPO))
    needed = {
        "__init__.py",
        "inference.py",
        "client.py",
        "models.py",
        "pyproject.toml",
        "uv.lock",
        "README.md",
        "LICENSE",
        "openenv.yaml",
        "server/app.py",
        "mock_services/__init__.py",
    }
    needed |= {
        p.relative_to(REPO).as_posix()
        for folder in ("server", "mock_services", "data", "agents")
        for p in (REPO / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert {"server/servicebench/environment.py", "server/support_queue/environment.py"} <= needed
    assert needed <= files, f"missing from the image: {sorted(needed - files)}"
    leaked = [
        f
        for f in files
        if f.split("/")[0]
        in {"tests", ".git", ".venv", ".ci", "scripts", "examples", "bench", "validation"}
        or "__pycache__" in f
        or f.endswith(".pyc")
    ]
    assert not leaked, leaked[:10]


# ----------------------------------------------------------------------------- the replay


def test_the_smoke_test_passes_against_a_running_server(live_server: str) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "smoke_test_server.py"), live_server],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
    )
    summary = json.loads(done.stdout)
    assert done.returncode == 0 and summary["passed"], summary
    assert summary["episode"]["steps"] == 2 and summary["episode"]["score"] == pytest.approx(1.0)


def test_replaying_the_dockerfile_installs_starts_and_serves_an_episode() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "replay_dockerfile.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = json.loads(done.stdout)
    assert done.returncode == 0 and summary["passed"], (
        summary.get("error", "") + done.stderr[-3000:]
    )
    assert summary["health"] == {"status": "healthy"}
    assert summary["healthcheck_exit_code"] == 0
    assert summary["sigterm"]["graceful"] and summary["sigterm"]["exit_code"] in (0, -15)
    assert summary["exposed"] == ["8000"]
    episode = summary["episode"]
    assert (
        episode["task_id"] == "order_status_lookup"
        and episode["done"]
        and episode["task_completed"]
    )
    assert episode["score"] == pytest.approx(1.0) == pytest.approx(sum(episode["rewards"]))
    skipped = "\n".join(summary["skipped"])
    assert "useradd" in skipped and "chown user:user /app" in skipped and "USER 1000" in skipped
    assert not any("uv sync" in line or "pip install" in line for line in summary["skipped"])
