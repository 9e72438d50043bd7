"""The FastAPI app: both environments at the root and each under its own prefix.

    uvicorn servicebench_support_queue.server.app:app --port 8000
    servicebench-support-queue-server --port 8000     # the same, with its flags (server/cli.py)

The root serves every environment (the env is named in /reset, or inferred
from the task id); `/servicebench` and `/support_queue` each serve one, with
the full OpenEnv surface including the WebSocket `/ws`. All of them share one
store of live HTTP episodes.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from uvicorn.config import STARTUP_FAILURE

from .lifecycle.episode import EpisodeEnvironment
from .lifecycle.episodes import Episodes
from .servicebench.environment import ServiceBenchEnvironment
from .settings import Settings
from .store import open_store
from .support_queue.environment import SupportQueueEnvironment
from .transport import log_redaction
from .transport.body_limit import BodyLimitMiddleware
from .transport.http_api import build_surface, task_cards
from .web import install_pages

ENVIRONMENTS: tuple[type[EpisodeEnvironment], ...] = (
    ServiceBenchEnvironment,
    SupportQueueEnvironment,
)
TITLE = "ServiceBench + Support Queue"
DESCRIPTION = (
    "OpenEnv environment server with two agent environments: ServiceBench (multi-service "
    "API workflows over users, orders and inventory) and Support Queue (SaaS ticket triage)."
)


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; settings default to the environment variables."""
    log_redaction.install()  # before anything can log a URL or a header
    settings = settings or Settings.from_env()
    store = open_store(settings, ENVIRONMENTS)
    root_episodes = Episodes(ENVIRONMENTS, store, settings.require_episode_id)
    app = build_surface(root_episodes, settings, title=TITLE, description=DESCRIPTION)
    for env in ENVIRONMENTS:
        episodes = Episodes((env,), store, settings.require_episode_id)
        surface = build_surface(episodes, settings, title=env.env_name, description=env.description)
        app.mount(f"/{env.env_name}", surface)

    install_pages(app, task_cards(root_episodes))

    app.state.store = store
    app.state.settings = settings
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "DELETE"],  # DELETE: an MCP session's end
            allow_headers=[
                "Content-Type",
                "X-Episode-Id",
                "Mcp-Session-Id",
                "MCP-Protocol-Version",
            ],
            expose_headers=["Mcp-Session-Id"],  # a browser MCP client reads its session from it
        )
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.max_body_bytes,
        timeout_seconds=settings.body_timeout_seconds,
    )
    return app


def _app_from_env() -> FastAPI:
    """The app of the environment's settings. A malformed setting stops the server with its
    message and uvicorn's startup-failure status, which its `--workers` supervisor reads as
    "every worker would fail the same way": no traceback, no endless restarts."""
    try:
        return create_app()
    except ValueError as exc:
        logging.getLogger("uvicorn.error").error("cannot start: %s", exc)
        raise SystemExit(STARTUP_FAILURE) from None


def __getattr__(name: str) -> Any:
    """`app`, the app of the environment's settings, built on first use (uvicorn's
    `server.app:app`): importing this module for `create_app` builds nothing."""
    if name == "app":
        globals()["app"] = built = _app_from_env()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """`python -m servicebench_support_queue.server.app` and OpenEnv's deployment check: the same
    entry point as the console script, whose flags and checks live in `cli.py`."""
    from .cli import main as serve

    serve()


if __name__ == "__main__":
    main()
