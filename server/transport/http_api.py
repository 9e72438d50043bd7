"""The OpenEnv HTTP surface of one scope: stateful /reset, /step, /state and the info routes.

`build_surface` makes a FastAPI app for a `Episodes`; the root app serves both
environments and each environment's prefix (/servicebench, /support_queue)
mounts a surface of its own, so every prefix has its own /openapi.json,
/schema, /metadata, /health, /tools, /mcp and /ws, as OpenEnv clients expect.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import operator
from collections.abc import AsyncIterator
from functools import reduce
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.telemetry import TelemetryConfig
from pydantic import BaseModel, TypeAdapter
from starlette.exceptions import HTTPException as StarletteHTTPException

from ... import __version__
from ...action_tools import openai_tools
from ...models import TaskCard
from ...openenv_types import EnvironmentMetadata
from ..lifecycle import warmup
from ..lifecycle.episode import EpisodeError
from ..lifecycle.episodes import MAX_STEP_INDEX, Episodes, ResetRequest, describe_errors
from ..lifecycle.owners import scope_client
from ..mcp.server import McpServer
from ..mcp.sessions import Attachments
from ..settings import Settings
from ..web import install_docs
from . import log_redaction, mcp_http, origins, task_api, ws
from .encoding import error_payload, model_json
from .fast_path import (
    CONTENT_TYPE_HEADER,
    EPISODE_HEADER,
    EpisodeRoutes,
    episode_error_json,
    reset_result,
    step_result,
    unexpected_error_json,
)

log = logging.getLogger("server")


def _json(content: bytes, status: int = 200) -> Response:
    return Response(content=content, status_code=status, media_type="application/json")


def install_error_handlers(app: FastAPI) -> None:
    """Every error is JSON with a `detail` that names the problem; nothing escapes as a bare 500."""

    @app.exception_handler(EpisodeError)
    async def episode_error(_: Request, exc: EpisodeError) -> Response:
        return _json(episode_error_json(exc), exc.status)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in exc.errors()]
        status = 400 if any(e.get("type") == "json_invalid" for e in errors) else 422
        return JSONResponse(
            error_payload(describe_errors(errors), errors=errors), status_code=status
        )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            error_payload(str(exc.detail)), status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> Response:
        return _json(unexpected_error_json(exc), 500)


def _body_schema(model_schema: dict[str, Any], required: bool) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": required,
            "content": {"application/json": {"schema": model_schema}},
        }
    }


def _step_body_schema(episodes: Episodes) -> dict[str, Any]:
    action = episodes.action_schema
    envelope = {
        "type": "object",
        "required": ["action"],
        "additionalProperties": False,
        "properties": {
            "action": action,
            "episode_id": {"type": "string"},
            "timeout_s": {"type": "number", "exclusiveMinimum": 0},
            "request_id": {"type": "string"},
            "step_index": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_STEP_INDEX,
                "description": "The number of the step this action is (1: the first after "
                "reset; the observation's info.step): a retry with the same step_index is "
                "answered again, never applied twice",
            },
        },
    }
    return {"anyOf": [envelope, action]}


def scope_metadata(episodes: Episodes, name: str, description: str) -> dict[str, Any]:
    if len(episodes.envs) == 1:
        return episodes.envs[0].environment_metadata().model_dump()
    base = EnvironmentMetadata(
        name=name,
        description=description,
        version=__version__,
        documentation_url=episodes.envs[0].environment_metadata().documentation_url,
    )
    return {
        **base.model_dump(),
        "environments": [env.environment_metadata().model_dump() for env in episodes.envs],
    }


SCHEMA_KINDS = {"action": "action_cls", "observation": "observation_cls", "state": "state_cls"}


def _any_of(models: list[type[BaseModel]]) -> dict[str, Any]:
    """A schema that each of `models` fits, their `$defs` merged so every `$ref` still resolves."""
    if len(models) == 1:
        return models[0].model_json_schema()
    return TypeAdapter(reduce(operator.or_, models)).json_schema()


def scope_schema(episodes: Episodes) -> dict[str, Any]:
    """Action, observation and state schemas of the scope: at the root, any of both environments'."""
    schema = {
        kind: _any_of([getattr(env, attr) for env in episodes.envs])
        for kind, attr in SCHEMA_KINDS.items()
    }
    if len(episodes.envs) == 1:
        return schema
    return {
        **schema,
        "environments": {
            env.env_name: {
                kind: getattr(env, attr).model_json_schema() for kind, attr in SCHEMA_KINDS.items()
            }
            for env in episodes.envs
        },
    }


def task_cards(episodes: Episodes) -> list[TaskCard]:
    return [card for env in episodes.envs for card in env.tasks]


TELEMETRY_OFF: TelemetryConfig = {
    "tracing": False,
    "metrics": False,
    "logs": False,
    "operation_spans": False,
}
"""FastAPI's native OpenTelemetry, switched off unless Settings.telemetry (TELEMETRY=1)."""


GC_YOUNG_THRESHOLD = 50_000
"""Net new containers between two young collections of the cyclic GC (Python: 700). A young
collection promotes all it finds alive, and a request waiting for a durable store's write
lives a whole round trip: at 700, with 64 on Redis, the oldest generation filled so fast
that full collections (100-150 ms each, over the live episodes) took a quarter to a third
of the worker's CPU. Objects freed by reference counting (nearly all) do not count, so
this only bounds the cyclic garbage awaiting collection (a few MB)."""


@contextlib.asynccontextmanager
async def on_startup(app: FastAPI) -> AsyncIterator[None]:
    """Keep credentials out of the access log, begin warming the environments, tune the
    cyclic GC, and close the episode store's connections at shutdown (and put the GC's
    thresholds back).

    What exists at startup (modules, the app, the seed data) lives as long as the
    process, yet every full collection of the cyclic GC would rescan it: a pause of
    100+ ms per collection with ~220,000 import-time objects. Frozen, a full
    collection scans only what was made since (mostly the live episodes). Young
    collections run less often (`GC_YOUNG_THRESHOLD`), so that requests in flight are
    rarely promoted to the generation full collections scan.
    """
    log_redaction.install()
    warmup.start(app.state.environments)  # in the background: /health answers meanwhile
    gc.collect()
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *thresholds[1:])
    yield
    gc.set_threshold(*thresholds)
    store = getattr(app.state, "store", None)
    if store is not None:
        await store.close()


def build_surface(
    episodes: Episodes, settings: Settings, *, title: str, description: str
) -> FastAPI:
    """A FastAPI app with the full OpenEnv surface for `episodes`'s environments."""
    app = FastAPI(
        title=title,
        version=__version__,
        description=description,
        lifespan=on_startup,
        telemetry=None if settings.telemetry else TELEMETRY_OFF,
        docs_url=None,  # served offline by install_docs
        redoc_url=None,
    )
    app.state.environments = episodes.envs  # warmed from startup on (server/lifecycle/warmup.py)
    install_error_handlers(app)
    install_docs(app)
    metadata = scope_metadata(episodes, title, description)
    schema = scope_schema(episodes)
    tasks_json = json.dumps({"tasks": [c.model_dump() for c in task_cards(episodes)]}).encode()
    tools_json = json.dumps(openai_tools(episodes.env_names)).encode()
    ws_limits = ws.SessionLimit.shared_by(
        episodes.store, settings.max_ws_sessions
    )  # one budget per app

    @app.post(
        "/reset",
        tags=["Environment Control"],
        summary="Start an episode",
        openapi_extra=_body_schema(ResetRequest.model_json_schema(), required=False),
    )
    async def reset(request: Request) -> Response:  # served by EpisodeRoutes; kept for the schema
        return _json(
            await reset_result(
                episodes,
                await request.body(),
                request.headers.get(CONTENT_TYPE_HEADER),
                scope_client(request.scope),
            )
        )

    @app.post(
        "/step",
        tags=["Environment Control"],
        summary="Apply one action to an episode",
        openapi_extra=_body_schema(_step_body_schema(episodes), required=True),
    )
    async def step(request: Request) -> Response:  # served by EpisodeRoutes; kept for the schema
        raw = await request.body()
        header_id, query_id = (
            request.headers.get(EPISODE_HEADER),
            request.query_params.get("episode_id"),
        )
        return _json(
            await step_result(
                episodes, raw, request.headers.get(CONTENT_TYPE_HEADER), header_id, query_id
            )
        )

    @app.get("/state", tags=["State Management"], summary="The state of an episode")
    async def state(request: Request, episode_id: str | None = None) -> Response:
        env = await episodes.find(episode_id or request.headers.get(EPISODE_HEADER))
        return _json(model_json(env.state))

    @app.get("/health", tags=["Health"])
    async def health() -> dict[str, str]:
        return {"status": "healthy"}

    @app.get("/metadata", tags=["Environment Info"])
    async def get_metadata() -> dict[str, Any]:
        return metadata

    @app.get("/schema", tags=["Schema"])
    async def get_schema() -> dict[str, Any]:
        return schema

    @app.get(
        "/tasks",
        tags=["Environment Info"],
        summary="Every task: id, env, title, difficulty, budget",
    )
    async def tasks() -> Response:
        return _json(tasks_json)

    @app.get(
        "/tools",
        tags=["Environment Info"],
        summary="The agent's tools, as OpenAI function tools in strict mode",
    )
    async def tools() -> Response:
        return _json(tools_json)

    task_api.install(app, episodes)
    for env_cls in episodes.envs:  # an environment's own read-only routes
        env_cls.install_routes(app)
    mcp_server = McpServer(episodes, Attachments.shared_by(episodes.store))
    mcp_http.install(app, mcp_server, settings)

    @app.websocket("/ws")
    async def websocket_endpoint(socket: ws.WebSocket) -> None:
        if not await origins.admit_websocket(socket, settings.cors_origins):
            return
        await ws.serve(
            socket,
            episodes,
            ws_limits,
            settings.max_body_bytes,
            mcp_server,
            idle_seconds=settings.ws_idle_timeout_seconds,
        )

    app.add_middleware(
        EpisodeRoutes, episodes=episodes
    )  # innermost: inside CORS and the body limit
    return app
