"""OpenEnv packaging: `openenv validate` (OpenEnv 0.10) in both modes, the claims of
openenv.yaml's `validation:` block graded by OpenEnv's own runtime graders on live
episodes, /metadata, and openenv.yaml against /tasks and pyproject.toml.

The local CLI run builds and starts a Docker image for its runtime level; CI has no
Docker engine, so it runs the static level (which must PASS) and the full ladder with
`--skip-build` (no FAIL, no ERROR); the runtime graders that the image run would apply
are applied here to the server the tests start, at the root and under both prefixes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from openenv.cli._validation import get_deployment_modes, validate_multi_mode_deployment
from openenv.validation.graders import Subject
from openenv.validation.graders.runtime import (
    ObservationSchemaGrader,
    RewardWellFormedGrader,
    StateContractGrader,
)
from openenv.validation.manifest import NormalizedManifestV2
from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
from openenv.validation.runtime.collector import collect_runtime_evidence
from openenv.validation.runtime.contracts import RuntimeEvidence, RuntimePlan, load_runtime_plan
from packaging.requirements import Requirement
from server_process import CHILD_TIMEOUT

from servicebench_support_queue import __version__ as VERSION

REPO = Path(__file__).resolve().parent.parent
PREFIXES = ("", "/servicebench", "/support_queue")
MANIFEST = yaml.safe_load((REPO / "openenv.yaml").read_text(encoding="utf-8"))
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
RUNTIME_GRADERS = (RewardWellFormedGrader(), ObservationSchemaGrader(), StateContractGrader())

LOOKUP_JANE = {
    "service": "user",
    "endpoint": "/users/lookup",
    "method": "GET",
    "params": {"email": "jane.doe@example.com"},
}
TRIAGE = {
    "priority": "P3",
    "queue": "billing",
    "disposition": "respond",
    "summary": "Customer asks about billing.",
    "response": "Thanks, we are looking into it.",
    "confidence": 0.5,
}


def openenv_cli() -> str:
    """The `openenv` executable of the interpreter running the tests (the project's venv)."""
    beside = Path(sys.executable).parent / "openenv"
    found = str(beside) if beside.exists() else shutil.which("openenv")
    assert found, "the openenv CLI (the `openenv` distribution) is not installed"
    return found


def plan(
    task_id: str, seed: int, actions: list[dict[str, Any]], episode_id: str = "validate-1"
) -> RuntimePlan:
    return RuntimePlan.model_validate(
        {
            "plan_schema_version": "1",
            "actions": actions,
            "reset": {"episode_id": episode_id, "seed": seed, "options": {"task_id": task_id}},
        }
    )


@pytest.fixture(scope="module")
def manifest() -> NormalizedManifestV2:
    parsed = OpenEnvYamlParser().parse(REPO)
    assert isinstance(parsed, NormalizedManifestV2), "openenv.yaml declares no validation.execution"
    return parsed


# what the test run itself writes into the checkout while the validations run (hypothesis's
# examples, pytest's cache, a CI log): `openenv validate` checks that the package source does
# not change while it validates, so it validates a snapshot of the checkout without them
_VOLATILE = (
    ".git",
    ".venv",
    "__pycache__",
    ".hypothesis",
    ".pytest_cache",
    ".ruff_cache",
    "*.egg-info",
    "outputs",
    ".worktrees",
)


@pytest.fixture(scope="module")
def source_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout that nothing else writes to while `openenv validate` runs."""
    snapshot = tmp_path_factory.mktemp("validate") / REPO.name
    shutil.copytree(REPO, snapshot, ignore=shutil.ignore_patterns(*_VOLATILE), symlinks=True)
    return snapshot


@pytest.fixture(scope="module")
def reports(live_server: str, source_snapshot: Path) -> dict[str, tuple[int, dict[str, Any]]]:
    """Every `openenv validate` run this module checks, started at once (each CLI start takes
    seconds), in a snapshot of the checkout (`source_snapshot`)."""
    runs = {
        "static": ["--level", "static", "--json"],
        "skip_build": ["--skip-build", "--json"],
        **{prefix: ["--url", live_server + prefix, "--json"] for prefix in PREFIXES},
    }
    started = {
        name: subprocess.Popen(
            [openenv_cli(), "validate", *args],
            cwd=source_snapshot,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name, args in runs.items()
    }
    results = {}
    try:
        for name, process in started.items():
            out, err = process.communicate(timeout=CHILD_TIMEOUT)
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


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {result["check_id"]: result["status"] for result in report["results"]}


def test_local_static_validation_passes(reports: dict[str, Any]) -> None:
    code, report = reports["static"]
    assert (code, report["verdict"]) == (0, "pass"), report["results"]
    assert statuses(report) == {"static.manifest": "pass"}
    assert (
        report["manifest"]["name"] == PROJECT["name"] and report["manifest"]["version"] == VERSION
    )


def test_local_validation_without_a_build_finds_no_failure(reports: dict[str, Any]) -> None:
    code, report = reports["skip_build"]
    found = statuses(report)
    unskipped = [result for result in report["results"] if result["status"] != "skip"]
    assert code == 0 and report["verdict"] == "warn", (code, report["verdict"], unskipped)
    assert found["static.manifest"] == "pass" and found["runtime.startup"] == "skip"
    assert not {check for check, status in found.items() if status in ("fail", "error")}


def test_the_repo_is_ready_for_every_deployment_mode_but_a_generic_server_script() -> None:
    """OpenEnv's template names its console script `server`; ours is
    `servicebench-support-queue-server`, since a generic `server` script would collide with
    any other package's that installs one. Everything else the check wants holds."""
    valid, issues = validate_multi_mode_deployment(REPO)
    assert (valid, issues) == (False, ["Missing [project.scripts] server entry point"])
    assert (
        PROJECT["scripts"]["servicebench-support-queue-server"]
        == "servicebench_support_queue.server.cli:main"
    )
    assert get_deployment_modes(REPO)["docker"] is True


@pytest.mark.parametrize("prefix", PREFIXES, ids=["root", "servicebench", "support_queue"])
def test_runtime_validation_passes(reports: dict[str, Any], prefix: str) -> None:
    code, report = reports[prefix]
    failed = [c for c in report["criteria"] if not c["passed"]]
    assert report["passed"] is True and code == 0, failed
    assert report["mode"] == "simulation"
    assert report["standard_version"] == VERSION
    assert (
        report["summary"]["required_passed_count"] == report["summary"]["required_total_count"] >= 6
    )


# ----------------------------------------------------------------------------- runtime graders


def grade(
    manifest: NormalizedManifestV2, evidence: RuntimeEvidence
) -> dict[str, tuple[str, list[str]]]:
    subject = Subject(
        root=REPO,
        manifest=manifest,
        image_ref=None,
        running=None,
        outputs_dir=REPO / "outputs",
        runtime_evidence=evidence,
    )
    return {
        g.check_id: (r.status.value, r.evidence) for g in RUNTIME_GRADERS for r in [g.run(subject)]
    }


def play(base_url: str, episode: RuntimePlan, manifest: NormalizedManifestV2) -> RuntimeEvidence:
    evidence = collect_runtime_evidence(
        base_url, episode, episode_timeout_s=manifest.resources.episode_timeout_s
    )
    assert evidence.failure_reason is None, evidence.failure_reason
    return evidence


def step_replies(evidence: RuntimeEvidence) -> list[dict[str, Any]]:
    return [
        json.loads(e.response_json)["data"] for e in evidence.exchanges if e.operation == "step"
    ]


def test_the_declared_runtime_plan_plays_a_whole_episode_to_full_score(
    live_server: str, manifest
) -> None:
    evidence = play(live_server, load_runtime_plan(REPO, manifest.execution), manifest)
    replies = step_replies(evidence)
    assert replies[-1]["done"] is True and replies[-1]["observation"][
        "cumulative_reward"
    ] == pytest.approx(1.0)
    assert {
        check: status for check, (status, _) in grade(manifest, evidence).items()
    } == dict.fromkeys((g.check_id for g in RUNTIME_GRADERS), "pass")


EPISODES = {  # name: (environment, task, seed, actions)
    "servicebench_penalties": (
        "servicebench",
        "order_status_lookup",
        0,
        [LOOKUP_JANE, LOOKUP_JANE, {**LOOKUP_JANE, "service": "x"}],
    ),
    "servicebench_variant": ("servicebench", "return_and_refund", 31, [LOOKUP_JANE]),
    "support_queue_whole": ("support_queue", "medium_sla_defense", 0, [TRIAGE] * 3),
    "support_queue_variant": ("support_queue", "hard_exec_escalations", 100_007, [TRIAGE] * 4),
}


@pytest.mark.parametrize("name", EPISODES)
def test_openenv_runtime_graders_pass_at_the_root_and_the_prefix(
    live_server: str, manifest, name: str
) -> None:
    env, task_id, seed, actions = EPISODES[name]
    for prefix in ("", f"/{env}"):
        evidence = play(
            live_server + prefix, plan(task_id, seed, actions, episode_id=f"{name}-{env}"), manifest
        )
        assert len(step_replies(evidence)) == len(actions)
        graded = grade(manifest, evidence)
        assert all(status == "pass" for status, _ in graded.values()), (prefix, graded)


def test_the_declared_reward_range_is_needed_and_checked(live_server: str, manifest) -> None:
    """Penalties make ServiceBench step rewards negative: a [0, 1] declaration would be false."""
    _, task_id, seed, actions = EPISODES["servicebench_penalties"]
    evidence = play(live_server, plan(task_id, seed, actions), manifest)
    assert min(reply["reward"] for reply in step_replies(evidence)) < 0
    narrower = manifest.model_copy(
        update={"reward": manifest.reward.model_copy(update={"range": (0.0, 1.0)})}
    )
    status, problems = grade(narrower, evidence)["runtime.reward_well_formed"]
    assert status == "fail" and any("in range" in problem for problem in problems)


def test_the_state_contract_grader_sees_a_foreign_episode_id(live_server: str, manifest) -> None:
    """The grader compares the state's episode id with the one reset asked for: it can fail."""
    evidence = play(
        live_server + "/support_queue", plan("easy_inbox_cleanup", 0, [TRIAGE]), manifest
    )
    reset = evidence.exchanges[0]
    forged = reset.request_json.replace('"validate-1"', '"someone-else"')
    assert forged != reset.request_json
    swapped = RuntimeEvidence(
        exchanges=(
            type(reset)(reset.operation, forged, reset.response_json),
            *evidence.exchanges[1:],
        ),
        observation_schema_json=evidence.observation_schema_json,
    )
    assert grade(manifest, swapped)["runtime.state_contract"][0] == "fail"


# ----------------------------------------------------------------------------- packaging


def test_dependencies_are_ranges_on_the_maintained_openenv_and_the_lock_pins_inside_them() -> None:
    wanted = [
        Requirement(r) for r in PROJECT["dependencies"] + PROJECT["optional-dependencies"]["test"]
    ]
    assert "openenv" in {r.name for r in wanted} and "openenv-core" not in {r.name for r in wanted}
    locked = {
        p["name"]: p.get("version")
        for p in tomllib.loads((REPO / "uv.lock").read_text())["package"]
    }
    assert "openenv-core" not in locked, "openenv-core and openenv both own the `openenv` package"
    for requirement in wanted:
        operators = {spec.operator for spec in requirement.specifier}
        assert ">=" in operators and "<" in operators and not operators & {"==", "==="}, requirement
        assert requirement.specifier.contains(locked[requirement.name]), (
            requirement,
            locked[requirement.name],
        )
    with pytest.raises(metadata.PackageNotFoundError):
        metadata.distribution("openenv-core")  # the test venv has only the maintained distribution
    assert metadata.version("openenv") == locked["openenv"]


def test_the_project_is_bsd_3_clause_licensed_like_openenv() -> None:
    assert PROJECT["license"] == "BSD-3-Clause" and PROJECT["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert (
        text.startswith("BSD 3-Clause License")
        and "The ServiceBench + Support Queue authors" in text
    )
    assert metadata.metadata(PROJECT["name"])["License-Expression"] == "BSD-3-Clause"


# ----------------------------------------------------------------------------- manifest and metadata


def test_metadata_names_describes_versions_and_links_the_readme(live_server: str) -> None:
    answers = {
        prefix: httpx.get(f"{live_server}{prefix}/metadata", timeout=10).json()
        for prefix in PREFIXES
    }
    for prefix, answer in answers.items():
        assert answer["name"].strip(), prefix
        assert len(answer["description"]) >= 40 and answer["description"] != answer["name"], prefix
        assert answer["version"] == VERSION == MANIFEST["version"], prefix
        assert answer["documentation_url"].startswith("https://")
        assert answer["documentation_url"].endswith("README.md")
        assert MANIFEST["name"] in answer["documentation_url"], (
            "the README link points at this Space"
        )
    assert answers["/servicebench"]["name"] == "servicebench"
    assert answers["/support_queue"]["name"] == "support_queue"
    assert answers[""]["name"] not in {"servicebench", "support_queue"}
    assert len({m["documentation_url"] for m in answers.values()}) == 1


def test_manifest_declares_the_space_and_app() -> None:
    assert MANIFEST["spec_version"] == 1
    assert MANIFEST["name"] == PROJECT["name"]
    assert (MANIFEST["type"], MANIFEST["runtime"], MANIFEST["app"]) == (
        "space",
        "fastapi",
        "servicebench_support_queue.server.app:app",
    )
    assert MANIFEST["port"] == 8000
    assert (REPO / MANIFEST["validation"]["execution"]["dockerfile"]).is_file()
    module, _, attribute = MANIFEST["app"].partition(":")
    assert callable(getattr(__import__(module, fromlist=[attribute]), attribute))


def test_manifest_lists_exactly_the_environments_and_tasks_the_server_serves(
    live_server: str,
) -> None:
    served: dict[str, set[tuple[str, str, str]]] = {}
    for card in httpx.get(f"{live_server}/tasks", timeout=10).json()["tasks"]:
        served.setdefault(card["env"], set()).add((card["id"], card["title"], card["difficulty"]))
    declared = {
        env["name"]: {(t["id"], t["title"], t["difficulty"]) for t in env["tasks"]}
        for env in MANIFEST["environments"]
    }
    assert declared == served
    for env in MANIFEST["environments"]:
        assert env["path"] == "/" + env["name"]
        assert httpx.get(f"{live_server}{env['path']}/health", timeout=10).json() == {
            "status": "healthy"
        }


def test_manifest_declares_the_task_api_and_the_task_counts_each_environment_serves(
    live_server: str, manifest: NormalizedManifestV2
) -> None:
    served = {}
    for env in MANIFEST["environments"]:
        splits = httpx.get(f"{live_server}/{env['name']}/splits", timeout=10).json()
        served[env["name"]] = {split["name"]: split["num_tasks"] for split in splits}
        assert env["declared_task_count"] == served[env["name"]], env["name"]
    default = httpx.get(f"{live_server}/list_environments", timeout=10).json()[0]
    assert manifest.capabilities.task_api is True
    assert manifest.capabilities.declared_task_count == served[default]
