"""`openenv push`, up to the upload: the repo passes OpenEnv's structure check, and the staged
Space holds what it needs and none of the local artefacts.

Nothing here reaches the Hub: the push runs through OpenEnv's own CLI on a copy of the
checkout with the Hub calls (login, Space creation, upload) replaced, and the upload is
only looked at. The Space builds the Dockerfile from the staged files without a
.dockerignore (OpenEnv drops dot-files), so .openenvignore must keep out what .dockerignore
keeps out of the image. The push docs/docker-and-spaces.md gives is OpenEnv's default, with its web
interface on: the Space opens at /web, which is this server's own playground.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from checkout import REPO, copy_checkout
from openenv.cli.__main__ import app as openenv_cli
from openenv.cli._cli_utils import validate_env_structure
from openenv.cli.commands import push
from readme_support import code_blocks, commands, section
from typer.testing import CliRunner

sys.path.insert(0, str(REPO / "scripts"))
import dockerfile_parser as df  # noqa: E402

MANIFEST = yaml.safe_load((REPO / "openenv.yaml").read_text(encoding="utf-8"))
ARTEFACTS = (
    "inference_results.json",
    "inference_trajectories.jsonl",
    "inference_report.md",
    "inference_report.html",
    "server.log",
    "bench/results/logs/run.log",
    "server/__pycache__/app.cpython-311.pyc",
    "build/lib/x.py",
    "dist/servicebench_support_queue-1.0.0-py3-none-any.whl",
    "x.egg-info/PKG-INFO",
    ".venv/bin/python",
    ".env",
    ".pytest_cache/v/cache",
    ".ruff_cache/x",
)
"""What a working checkout accumulates: run output, caches, builds, a venv, secrets."""


def files_under(root: Path) -> set[str]:
    return {path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout with the artefacts of local work planted in it."""
    copy = copy_checkout(tmp_path_factory.mktemp("checkout"))
    for name in ARTEFACTS:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_text("local\n", encoding="utf-8")
    return copy


def run_push(checkout: Path, *flags: str) -> dict[str, Any]:
    """`openenv push <copy> <flags>`, stopped at the upload: what would have gone up."""
    seen: dict[str, Any] = {}

    def upload(
        repo_id: str, staging_dir: Path, api: Any, ignore_patterns: list[str], **_: Any
    ) -> None:
        seen.update(
            repo_id=repo_id,
            files=files_under(staging_dir),
            dockerfile=(staging_dir / "Dockerfile").read_text(encoding="utf-8"),
            readme=(staging_dir / "README.md").read_text(encoding="utf-8"),
        )

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(push, "_ensure_hf_authenticated", lambda: "tester")
        patch.setattr(push, "HfApi", lambda: object())
        patch.setattr(
            push, "_create_hf_space", lambda repo_id, *args, **kwargs: seen.update(created=repo_id)
        )
        patch.setattr(push, "_upload_to_hf_space", upload)
        patch.setattr(push, "_apply_space_variables_and_secrets", lambda *args, **kwargs: None)
        result = CliRunner().invoke(openenv_cli, ["push", str(checkout), *flags])
    assert result.exit_code == 0, result.output
    return seen


DOCKER_PAGE = "docs/docker-and-spaces.md"
PUSH = next(
    line
    for block in code_blocks(section("Deploy to a Hugging Face Space", DOCKER_PAGE), "bash")
    for line in commands(block, "bash")
    if line.startswith("uv run --frozen openenv push ")
)
RUNS = [PUSH]
"""The command this module runs, up to the upload (tests/test_docs.py checks every command)."""


@pytest.fixture(scope="module")
def pushed(checkout: Path) -> dict[str, Any]:
    """The documented push (docs/docker-and-spaces.md), OpenEnv's web interface on."""
    flags = shlex.split(PUSH.removeprefix("uv run --frozen openenv push "), comments=True)
    assert flags == ["--exclude", ".openenvignore"]
    return run_push(checkout, *flags)


def test_the_repo_passes_openenvs_structure_check():
    """The root __init__.py, client.py, README, Dockerfile and pyproject.toml are all there."""
    assert validate_env_structure(REPO) == ["Recommended directory missing: outputs/"]


def test_push_stages_the_space_for_the_manifests_name(pushed: dict[str, Any]):
    assert pushed["created"] == pushed["repo_id"] == f"tester/{MANIFEST['name']}"


def test_the_staged_space_holds_the_package_and_what_the_image_build_needs(pushed: dict[str, Any]):
    staged = pushed["files"]
    package = {
        name
        for name in files_under(REPO)
        if name.endswith(".py") and name.split("/")[0] in {"agents", "mock_services", "server"}
    }
    package |= {
        "__init__.py",
        "models.py",
        "client.py",
        "inference.py",
        "read_only_json.py",
        "error_messages.py",
    }
    needed = {
        "Dockerfile",
        "pyproject.toml",
        "uv.lock",
        "README.md",
        "LICENSE",
        "openenv.yaml",
        MANIFEST["validation"]["execution"]["probe_path"],
    }
    data = {f"data/{path.name}" for path in (REPO / "data").glob("*.json")}
    assert package | needed | data <= staged, sorted((package | needed | data) - staged)


def test_the_staged_space_leaves_out_what_the_image_leaves_out_and_every_local_artefact(
    checkout: Path, pushed: dict[str, Any]
):
    """The staged files are the Docker build context (.dockerignore applied to the same tree),
    plus validation/ for the manifest: so the Space's image is the image CI proves."""
    staged = pushed["files"]
    context = set(df.context_files(checkout))
    validation = {name for name in files_under(checkout) if name.startswith("validation/")}
    assert staged == context | validation, (
        sorted(staged - context - validation),
        sorted(context - staged),
    )
    assert not staged & set(ARTEFACTS)
    assert not {
        name for name in staged if name.split("/")[0] in {"tests", "bench", "scripts", "examples"}
    }
    assert not {name for name in staged if any(part.startswith(".") for part in name.split("/"))}


def test_the_default_push_opens_the_space_on_our_playground(pushed: dict[str, Any]):
    """A push with OpenEnv's web interface (the default) sets ENABLE_WEB_INTERFACE and wants
    `base_path: /web` in the front matter. The README already opens the Space at /web, where
    this server serves its own playground whatever the variable says (tests/server/web/), so
    the README goes up as it is and the Dockerfile gains that one line before its CMD."""
    assert pushed["readme"] == (REPO / "README.md").read_text(encoding="utf-8")
    front_matter = yaml.safe_load(pushed["readme"].split("---\n")[1])
    assert front_matter["base_path"] == "/web" and front_matter["app_port"] == 8000
    ours = (REPO / "Dockerfile").read_text(encoding="utf-8").split("\n")
    staged = pushed["dockerfile"].split("\n")
    cmd = next(i for i, line in enumerate(ours) if line.startswith("CMD"))
    assert staged == [*ours[:cmd], "ENV ENABLE_WEB_INTERFACE=true", *ours[cmd:]]


def test_without_the_interface_the_dockerfile_and_readme_go_up_unchanged(checkout: Path):
    plain = run_push(checkout, "--no-interface", "--exclude", ".openenvignore")
    assert plain["dockerfile"] == (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert plain["readme"] == (REPO / "README.md").read_text(encoding="utf-8")
