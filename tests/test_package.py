"""The installable package: one top-level import package, its data, its console scripts, one version.

The wheel is built from a copy of the checkout with the project's own build backend
(setuptools, offline), installed into a fresh virtual environment, and looked at there:
what `pip install .` would add to a trainer's site-packages.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from checkout import copy_checkout
from server_process import CHILD_TIMEOUT

import servicebench_support_queue
from servicebench_support_queue import __version__

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "servicebench_support_queue"
DISTRIBUTION = "servicebench-support-queue"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
OUTSIDE = ("tests", "bench", "scripts", "examples", "validation")
"""Folders of the repo that are not part of the package."""
SCRIPTS = {
    "servicebench-support-queue-server": f"{PACKAGE}.server.cli:main",
    "servicebench-support-queue-inference": f"{PACKAGE}.inference:main",
}


def package_sources() -> set[str]:
    """Every module of the package in the checkout, as a path inside the package."""
    found = set()
    for path in REPO.rglob("*.py"):
        relative = path.relative_to(REPO)
        if (
            relative.parts[0] in OUTSIDE
            or relative.parts[0].startswith(".")
            or "__pycache__" in relative.parts
        ):
            continue
        found.add(relative.as_posix())
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel setuptools builds from a copy of the checkout (tracked and new files)."""
    source = copy_checkout(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("dist")
    build = "import sys, setuptools.build_meta as backend; print(backend.build_wheel(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", build, str(out)],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out / done.stdout.strip().splitlines()[-1]


def test_the_wheel_holds_one_top_level_package_with_every_module_and_the_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = f"{PACKAGE}-{__version__}.dist-info"
    assert {name.split("/")[0] for name in names} == {PACKAGE, dist_info}
    inside = {name.split("/", 1)[1] for name in names if name.startswith(PACKAGE + "/")}
    assert {name for name in inside if name.endswith(".py")} == package_sources()
    data = {path.relative_to(REPO).as_posix() for path in (REPO / "data").glob("*.json")}
    assert data and data <= inside
    assert not {name for name in inside if name.split("/")[0] in OUTSIDE}


def test_the_wheel_declares_the_version_and_collision_free_console_scripts(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    dist_info = f"{PACKAGE}-{__version__}.dist-info"
    entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
    for name, target in SCRIPTS.items():
        assert f"{name} = {target}" in entry_points
    assert "\nserver =" not in entry_points and "[console_scripts]\nserver" not in entry_points
    assert f"Version: {__version__}\n" in archive.read(f"{dist_info}/METADATA").decode()


@pytest.fixture(scope="module")
def fresh_venv(
    wheel: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, set[str]]]:
    """A new virtual environment with only the wheel installed (no dependencies, offline),
    and what the install added to its site-packages."""
    uv = os.environ.get("UV") or shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed (.ci/run installs it)")
    venv = tmp_path_factory.mktemp("venv") / "env"
    offline = {**os.environ, "UV_OFFLINE": "1", "VIRTUAL_ENV": str(venv)}
    subprocess.run(
        [uv, "venv", "--quiet", "--python", sys.executable, str(venv)], env=offline, check=True
    )
    python = venv / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    before = {path.name for path in purelib.iterdir()}
    subprocess.run(
        [uv, "pip", "install", "--quiet", "--no-deps", "--python", str(python), str(wheel)],
        env=offline,
        check=True,
    )
    yield venv, {path.name for path in purelib.iterdir()} - before


def test_installing_adds_exactly_one_import_package_and_the_console_scripts(
    fresh_venv: tuple[Path, set[str]],
) -> None:
    venv, added = fresh_venv
    assert added == {PACKAGE, f"{PACKAGE}-{__version__}.dist-info"}
    for name in SCRIPTS:
        assert (venv / "bin" / name).is_file()
    done = subprocess.run(
        [venv / "bin" / "servicebench-support-queue-inference", "--version"],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
    )
    assert done.returncode == 0 and done.stdout.strip() == f"inference.py {__version__}", (
        done.stderr
    )


def test_the_installed_package_serves_from_its_own_files_and_data(
    fresh_venv: tuple[Path, set[str]],
) -> None:
    """Not the checkout: the dependencies come from the test environment, the package from the install."""
    venv, _ = fresh_venv
    check = f"""
import json
from fastapi.testclient import TestClient
import {PACKAGE} as package
from {PACKAGE}.server.app import create_app
from {PACKAGE}.server.settings import Settings
client = TestClient(create_app(Settings()))
ids = {{}}
for task_id in ("return_and_refund", "hard_exec_escalations"):
    answer = client.post("/reset", json={{"task_id": task_id, "seed": 7}})
    ids[task_id] = answer.status_code
for page in ("/web/", "/web/playground.js", "/web/site.css", "/docs", "/docs/swagger-ui-bundle.js"):
    ids[page] = client.get(page).status_code
print(json.dumps({{"file": package.__file__, "data": str(package.DATA_DIR), "status": ids}}))
"""
    env = {**os.environ, "PYTHONPATH": sysconfig.get_paths()["purelib"]}
    done = subprocess.run(
        [venv / "bin" / "python", "-c", check],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=venv,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["file"].startswith(str(venv)) and report["data"].startswith(str(venv))
    assert set(report["status"].values()) == {200}, report["status"]  # episodes, pages, files
    assert len(report["status"]) == 7


# ----------------------------------------------------------------------------- one version


def test_the_version_has_one_source() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": f"{PACKAGE}.__version__"
    }
    assert metadata.version(DISTRIBUTION) == __version__
    manifest = yaml.safe_load((REPO / "openenv.yaml").read_text(encoding="utf-8"))
    assert manifest["version"] == __version__


def test_the_package_exports_its_wire_types_and_clients_lazily() -> None:
    from servicebench_support_queue.client import ServiceBenchEnv
    from servicebench_support_queue.models import SupportQueueAction

    assert servicebench_support_queue.ServiceBenchEnv is ServiceBenchEnv
    assert servicebench_support_queue.SupportQueueAction is SupportQueueAction
    assert set(servicebench_support_queue.__all__) <= set(dir(servicebench_support_queue))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        servicebench_support_queue.nothing  # noqa: B018
    cold = "import sys, servicebench_support_queue; print(sorted(m for m in sys.modules if 'openenv' in m))"
    done = subprocess.run([sys.executable, "-c", cold], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", "importing the package alone must not load OpenEnv"


# ----------------------------------------------------------------------------- inference.py as a script


def test_inference_py_runs_its_own_checkout_when_another_is_installed(tmp_path: Path) -> None:
    """`python inference.py` in a clone runs the clone's code, not the installed package's."""
    clone = tmp_path / "clone"
    shutil.copytree(
        REPO, clone, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "tests", "bench")
    )
    init = clone / "__init__.py"
    init.write_text(
        init.read_text(encoding="utf-8").replace(
            f'__version__ = "{__version__}"', '__version__ = "0.0.0+clone"'
        ),
        encoding="utf-8",
    )
    mine = subprocess.run(
        [sys.executable, str(REPO / "inference.py"), "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
    )
    theirs = subprocess.run(
        [sys.executable, str(clone / "inference.py"), "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
    )
    assert mine.stdout.strip() == f"inference.py {__version__}", mine.stderr
    assert theirs.stdout.strip() == "inference.py 0.0.0+clone", theirs.stderr


# ----------------------------------------------------------------------------- how imports run


def package_imports(module: str) -> set[str]:
    """The package's own modules that `module` (a dotted name inside the package) imports."""
    path = REPO.joinpath(*module.split(".")[1:])
    source = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    package = module.split(".") if path.is_dir() else module.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            target = ".".join([*base, node.module] if node.module else base)
            found |= {
                f"{target}.{alias.name}" if not node.module else target for alias in node.names
            }
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            found |= {name for name in names if name.split(".")[0] == PACKAGE}
    return found


def modules() -> list[str]:
    return sorted(
        PACKAGE + "." + name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        if name != "__init__.py"
        else PACKAGE
        for name in package_sources()
    )


def under(name: str, *prefixes: str) -> bool:
    return any(
        name == f"{PACKAGE}.{prefix}" or name.startswith(f"{PACKAGE}.{prefix}.")
        for prefix in prefixes
    )


def test_the_shared_core_imports_neither_environment_except_the_app():
    for module in modules():
        if under(module, "server") and not under(
            module, "server.servicebench", "server.support_queue", "server.app"
        ):
            leaks = {
                name
                for name in package_imports(module)
                if under(name, "server.servicebench", "server.support_queue", "mock_services")
            }
            assert not leaks, (module, leaks)


def test_imports_run_one_way():
    """models -> mock services and data -> rewards and tasks -> environments -> the app; the two
    environments never import each other, and nothing below the server imports it. Inside the
    server's core, server/tasks/ stands on nothing of the server, and server/lifecycle/ only on it."""
    for module in modules():
        imported = package_imports(module)
        if under(module, "server.tasks", "server.lifecycle"):
            below = (
                ("server.tasks",)
                if under(module, "server.tasks")
                else ("server.tasks", "server.lifecycle")
            )
            assert not {
                name for name in imported if under(name, "server") and not under(name, *below)
            }, module
        if under(
            module, "mock_services", "models", "read_only_json", "error_messages", "openenv_types"
        ):
            assert not {
                name for name in imported if under(name, "server", "agents", "client", "inference")
            }, module
        if under(module, "server.servicebench"):
            assert not {name for name in imported if under(name, "server.support_queue")}, module
        if under(module, "server.support_queue"):
            assert not {
                name for name in imported if under(name, "server.servicebench", "mock_services")
            }, module
    assert package_imports(f"{PACKAGE}.models") == {
        f"{PACKAGE}.read_only_json",
        f"{PACKAGE}.openenv_types",  # OpenEnv's base types, at the bottom like the models
    }
    assert package_imports(f"{PACKAGE}.openenv_types") == set()
