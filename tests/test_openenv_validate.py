"""OpenEnv packaging: `openenv validate` in both modes, /metadata, and openenv.yaml against /tasks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
PREFIXES = ("", "/servicebench", "/support_queue")
MANIFEST = yaml.safe_load((REPO / "openenv.yaml").read_text(encoding="utf-8"))
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def openenv_cli() -> str:
    """The `openenv` executable of the interpreter running the tests (the project's venv)."""
    beside = Path(sys.executable).parent / "openenv"
    found = str(beside) if beside.exists() else shutil.which("openenv")
    assert found, "the openenv CLI (openenv-core) is not installed"
    return found


@pytest.fixture(scope="module")
def reports(live_server: str) -> dict[str, tuple[int, dict[str, Any]]]:
    """Every `openenv validate` run this module checks, started at once (each CLI start takes seconds)."""
    runs = {"local": ["--json", "--verbose"], **{prefix: ["--url", live_server + prefix] for prefix in PREFIXES}}
    started = {name: subprocess.Popen([openenv_cli(), "validate", *args], cwd=REPO, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for name, args in runs.items()}
    results = {}
    try:
        for name, process in started.items():
            out, err = process.communicate(timeout=180)
            try:
                results[name] = (process.returncode, json.loads(out))
            except json.JSONDecodeError:
                pytest.fail(f"openenv validate {runs[name]} printed no JSON report:\n{out}\n{err}")
    finally:
        for process in started.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    return results


def test_local_validation_passes_with_every_deployment_mode(reports: dict[str, Any]) -> None:
    code, report = reports["local"]
    assert report["passed"] is True and code == 0, report["issues"]
    assert report["validation_type"] == "local_environment"
    assert report["deployment_modes"] == {"docker": True, "openenv_serve": True, "uv_run": True,
                                          "python_module": True}


@pytest.mark.parametrize("prefix", PREFIXES, ids=["root", "servicebench", "support_queue"])
def test_runtime_validation_passes(reports: dict[str, Any], prefix: str) -> None:
    code, report = reports[prefix]
    failed = [c for c in report["criteria"] if not c["passed"]]
    assert report["passed"] is True and code == 0, failed
    assert report["mode"] == "simulation"
    assert report["standard_version"] == PROJECT["version"]
    assert report["summary"]["required_passed_count"] == report["summary"]["required_total_count"] >= 6


def test_metadata_names_describes_versions_and_links_the_readme(live_server: str) -> None:
    answers = {prefix: httpx.get(f"{live_server}{prefix}/metadata", timeout=10).json() for prefix in PREFIXES}
    for prefix, metadata in answers.items():
        assert metadata["name"].strip(), prefix
        assert len(metadata["description"]) >= 40 and metadata["description"] != metadata["name"], prefix
        assert metadata["version"] == PROJECT["version"], prefix
        assert metadata["documentation_url"].startswith("https://")
        assert metadata["documentation_url"].endswith("README.md")
        assert MANIFEST["name"] in metadata["documentation_url"], "the README link points at this Space"
    assert answers["/servicebench"]["name"] == "servicebench"
    assert answers["/support_queue"]["name"] == "support_queue"
    assert answers[""]["name"] not in {"servicebench", "support_queue"}
    assert len({m["documentation_url"] for m in answers.values()}) == 1


def test_manifest_declares_the_space_and_app() -> None:
    assert MANIFEST["spec_version"] == 1
    assert MANIFEST["name"] == PROJECT["name"]
    assert (MANIFEST["type"], MANIFEST["runtime"], MANIFEST["app"]) == ("space", "fastapi", "server.app:app")
    assert MANIFEST["port"] == 8000
    module, _, attribute = MANIFEST["app"].partition(":")
    assert callable(getattr(__import__(module, fromlist=[attribute]), attribute))


def test_manifest_lists_exactly_the_environments_and_tasks_the_server_serves(live_server: str) -> None:
    served: dict[str, set[tuple[str, str, str]]] = {}
    for card in httpx.get(f"{live_server}/tasks", timeout=10).json()["tasks"]:
        served.setdefault(card["env"], set()).add((card["id"], card["title"], card["difficulty"]))
    declared = {env["name"]: {(t["id"], t["title"], t["difficulty"]) for t in env["tasks"]}
                for env in MANIFEST["environments"]}
    assert declared == served
    for env in MANIFEST["environments"]:
        assert env["path"] == "/" + env["name"]
        assert httpx.get(f"{live_server}{env['path']}/health", timeout=10).json() == {"status": "healthy"}
