"""`openenv push`, up to the upload: the repo passes OpenEnv's structure check, and the staged
Space holds what it needs and none of the local artefacts.

Nothing here reaches the Hub: the push runs through OpenEnv's own CLI on a copy of the
checkout with the Hub calls (login, Space creation, upload) replaced, and the upload is
only looked at. The Space builds the Dockerfile from the staged files without a
.dockerignore (OpenEnv drops dot-files), so .openenvignore must keep out what .dockerignore
keeps out of the image.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from checkout import REPO, copy_checkout
from openenv.cli.__main__ import app as openenv_cli
from openenv.cli._cli_utils import validate_env_structure
from openenv.cli.commands import push
from typer.testing import CliRunner

sys.path.insert(0, str(REPO / "scripts"))
import dockerfile_parser as df  # noqa: E402

MANIFEST = yaml.safe_load((REPO / "openenv.yaml").read_text(encoding="utf-8"))
ARTEFACTS = (
    "inference_results.json",
    "inference_trajectories.jsonl",
    "inference_report.md",
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


@pytest.fixture(scope="module")
def pushed(checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`openenv push <copy> --no-interface --exclude .openenvignore`, stopped at the upload."""
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
        result = CliRunner().invoke(
            openenv_cli, ["push", str(checkout), "--no-interface", "--exclude", ".openenvignore"]
        )
    assert result.exit_code == 0, result.output
    return seen


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


def test_without_the_interface_the_dockerfile_and_readme_go_up_unchanged(pushed: dict[str, Any]):
    """The web interface (`/web`) comes with a later issue: until then push with --no-interface,
    or the Space would open on a 404 at /web."""
    assert pushed["dockerfile"] == (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert pushed["readme"] == (REPO / "README.md").read_text(encoding="utf-8")


def test_a_default_push_would_turn_on_a_web_interface_this_server_does_not_serve(
    checkout: Path, tmp_path: Path
):
    staging = tmp_path / "staging"
    patterns = push._load_ignore_patterns(checkout, ".openenvignore")
    push._prepare_staging_directory(
        checkout, MANIFEST["name"], staging, ignore_patterns=patterns, enable_interface=True
    )
    assert "ENABLE_WEB_INTERFACE" in (staging / "Dockerfile").read_text(encoding="utf-8")
    assert "base_path: /web" in (staging / "README.md").read_text(encoding="utf-8")
