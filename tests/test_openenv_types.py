"""openenv_types.py: serving imports OpenEnv's base types without OpenEnv's server stack, and
whoever imports OpenEnv normally in the same process still gets one OpenEnv, whose types are
ours' bases. Each case runs in a fresh interpreter: the order of the imports is the point."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from checkout import REPO
from server_process import CHILD_TIMEOUT

NOT_FOR_SERVING = (
    "gradio",
    "pandas",
    "fastmcp",
    "openenv.core.env_server.http_server",
    "openenv.core.env_server.web_interface",
    "openenv.core.env_client",
)


def run(*parts: str) -> None:
    """The parts of a script, one after the other, in a fresh interpreter."""
    code = "\n".join(textwrap.dedent(part) for part in parts)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-4000:]


def test_building_the_app_imports_nothing_of_openenvs_server_stack() -> None:
    run(
        f"""
        import sys
        from servicebench_support_queue.server import app
        app.app  # built
        loaded = [name for name in {NOT_FOR_SERVING!r} if name in sys.modules]
        assert not loaded, loaded
        """
    )


IDENTITY = """
    import openenv, openenv.core.env_server.types as types_module
    import openenv.core
    from openenv.core import Action, Environment, GenericEnvClient, MCPToolClient, Observation
    from openenv.core.env_server import create_fastapi_app, http_server, interfaces
    from openenv.core.env_server.types import State

    from servicebench_support_queue import models, openenv_types
    from servicebench_support_queue.server.lifecycle.episode import EpisodeEnvironment

    assert openenv.core.env_server.types is types_module  # bound on its package, as usual
    assert openenv.core.env_server.interfaces is interfaces
    assert sys.modules["openenv.core.env_server.types"] is types_module
    assert openenv.core.Action is Action is openenv_types.Action is types_module.Action
    assert Environment is openenv_types.Environment is interfaces.Environment
    assert http_server.Action is Action, "OpenEnv's server uses the same types"
    assert issubclass(models.ServiceBenchAction, Action)
    assert issubclass(models.SupportQueueObservation, Observation)
    assert issubclass(models.SupportQueueState, State)
    assert issubclass(EpisodeEnvironment, Environment)
    assert callable(create_fastapi_app) and GenericEnvClient and MCPToolClient
    assert "gradio" in sys.modules, "OpenEnv's own import is whole"
"""


def test_openenv_imported_after_our_package_is_whole_and_shares_its_types() -> None:
    run(
        """
        import sys
        from servicebench_support_queue.server.app import create_app
        create_app()
        assert "gradio" not in sys.modules
        """,
        IDENTITY,
    )


def test_openenv_imported_before_our_package_is_used_as_it_is() -> None:
    run(
        """
        import sys
        import openenv.core
        from servicebench_support_queue.server.app import create_app
        create_app()
        """,
        IDENTITY,
    )


def test_openenvs_submodules_import_first_through_the_lazy_packages() -> None:
    """A client module of OpenEnv imported straight after our package: its parent package
    (registered lazily) runs its __init__ on the way, as an eager import would."""
    run(
        """
        import sys
        import servicebench_support_queue.models
        from openenv.core.env_client import EnvClient
        import openenv.core.env_server
        assert openenv.core.EnvClient is EnvClient
        assert "create_fastapi_app" in vars(openenv.core.env_server)
        """,
        IDENTITY,
    )


@pytest.mark.parametrize(
    "first",
    [
        "openenv.core.env_server.mcp_types",
        "openenv.core.env_server.http_server",
        "openenv.core.mcp_client",
        "openenv.core.utils",
        "openenv.core.env_server",
    ],
)
def test_any_openenv_module_imports_first_after_our_package(first: str) -> None:
    """Whichever of OpenEnv's modules a user imports first after ours, it imports: a module of
    `env_server` needs `openenv.core.utils` before `openenv/core/__init__.py` may run (that
    order raised "'openenv.core' is not a package" when the packages were LazyLoader's)."""
    run(
        f"""
        import sys, importlib
        import servicebench_support_queue.models
        importlib.import_module({first!r})
        """,
        IDENTITY,
    )
