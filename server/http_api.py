"""The OpenEnv HTTP surface of one scope: stateful /reset, /step, /state and the info routes.

`build_surface` makes a FastAPI app for a `Gateway`; the root app serves both
environments and each environment's prefix (/servicebench, /support_queue)
mounts a surface of its own, so every prefix has its own /openapi.json,
/schema, /metadata, /health, /mcp and /ws, as OpenEnv clients expect.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Optional

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from openenv.core.env_server.types import EnvironmentMetadata
from starlette.exceptions import HTTPException as StarletteHTTPException

from models import TaskCard
from server import mcp, ws
from server.episode import VERSION, EpisodeError
from server.gateway import (
    Gateway,
    InvalidRequestError,
    ResetRequest,
    describe_errors,
    split_step_body,
)
from server.settings import Settings
from server.wire import error_payload, model_json, result_json

log = logging.getLogger("server")

EPISODE_HEADER = "x-episode-id"


def _json(content: bytes, status: int = 200) -> Response:
    return Response(content=content, status_code=status, media_type="application/json")


async def read_json(request: Request) -> Any:
    """The parsed body (None if empty), or a 400 naming the JSON problem."""
    raw = await request.body()
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise MalformedBodyError(f"malformed JSON body: {exc}") from None


class MalformedBodyError(EpisodeError):
    status = 400


def install_error_handlers(app: FastAPI) -> None:
    """Every error is JSON with a `detail` that names the problem; nothing escapes as a bare 500."""

    @app.exception_handler(EpisodeError)
    async def episode_error(_: Request, exc: EpisodeError) -> JSONResponse:
        extra = {"errors": exc.errors} if isinstance(exc, InvalidRequestError) else {}
        return JSONResponse(error_payload(str(exc), **extra), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in exc.errors()
        ]
        status = 400 if any(e.get("type") == "json_invalid" for e in errors) else 422
        return JSONResponse(error_payload(describe_errors(errors), errors=errors), status_code=status)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse(
            error_payload(str(exc.detail)), status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return JSONResponse(error_payload(f"internal error: {type(exc).__name__}"), status_code=500)


def _body_schema(model_schema: dict[str, Any], required: bool) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": required,
            "content": {"application/json": {"schema": model_schema}},
        }
    }


def _step_body_schema(gateway: Gateway) -> dict[str, Any]:
    actions = [env.action_cls.model_json_schema() for env in gateway.envs]
    action = actions[0] if len(actions) == 1 else {"anyOf": actions}
    envelope = {
        "type": "object",
        "required": ["action"],
        "additionalProperties": False,
        "properties": {
            "action": action,
            "episode_id": {"type": "string"},
            "timeout_s": {"type": "number"},
            "request_id": {"type": "string"},
        },
    }
    return {"anyOf": [envelope, action]}


def scope_metadata(gateway: Gateway, name: str, description: str) -> dict[str, Any]:
    if len(gateway.envs) == 1:
        return gateway.envs[0].environment_metadata().model_dump()
    base = EnvironmentMetadata(name=name, description=description, version=VERSION,
                               documentation_url=gateway.envs[0].environment_metadata().documentation_url)
    return {
        **base.model_dump(),
        "environments": [env.environment_metadata().model_dump() for env in gateway.envs],
    }


def scope_schema(gateway: Gateway) -> dict[str, Any]:
    schemas = {
        env.env_name: {
            "action": env.action_cls.model_json_schema(),
            "observation": env.observation_cls.model_json_schema(),
            "state": env.state_cls.model_json_schema(),
        }
        for env in gateway.envs
    }
    first = schemas[gateway.env_names[0]]
    return first if len(schemas) == 1 else {**first, "environments": schemas}


def task_cards(gateway: Gateway) -> list[TaskCard]:
    return [card for env in gateway.envs for card in env.tasks]


def build_surface(
    gateway: Gateway, settings: Settings, *, title: str, description: str
) -> FastAPI:
    """A FastAPI app with the full OpenEnv surface for `gateway`'s environments."""
    app = FastAPI(title=title, version=VERSION, description=description)
    install_error_handlers(app)
    metadata = scope_metadata(gateway, title, description)
    schema = scope_schema(gateway)
    tasks_json = json.dumps({"tasks": [c.model_dump() for c in task_cards(gateway)]}).encode()
    ws_limits = ws.SessionLimit(settings.max_ws_sessions)

    @app.post(
        "/reset",
        tags=["Environment Control"],
        summary="Start an episode",
        openapi_extra=_body_schema(ResetRequest.model_json_schema(), required=False),
    )
    async def reset(request: Request) -> Response:
        env, observation = gateway.reset(await read_json(request))
        return _json(result_json(observation, env.episode_id))

    @app.post(
        "/step",
        tags=["Environment Control"],
        summary="Apply one action to an episode",
        openapi_extra=_body_schema(_step_body_schema(gateway), required=True),
    )
    async def step(request: Request) -> Response:
        body = await read_json(request)
        if body is None:
            raise InvalidRequestError("step needs a JSON body: {\"action\": {...}, \"episode_id\": ...}")
        action, episode_id = split_step_body(body)
        episode_id = episode_id or request.headers.get(EPISODE_HEADER) or request.query_params.get("episode_id")
        env, observation = gateway.step(episode_id, action)
        return _json(result_json(observation, env.episode_id))

    @app.get("/state", tags=["State Management"], summary="The state of an episode")
    async def state(request: Request, episode_id: Optional[str] = None) -> Response:
        env = gateway.find(episode_id or request.headers.get(EPISODE_HEADER))
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

    @app.get("/tasks", tags=["Environment Info"], summary="Every task: id, env, title, difficulty, budget")
    async def tasks() -> Response:
        return _json(tasks_json)

    @app.post("/mcp", tags=["MCP"], summary="MCP JSON-RPC 2.0 (tools/list, tools/call)")
    async def mcp_endpoint(request: Request) -> JSONResponse:
        raw = await request.body()
        return JSONResponse(mcp.handle(gateway, raw))

    @app.websocket("/ws")
    async def websocket_endpoint(socket: ws.WebSocket) -> None:
        await ws.serve(socket, gateway, ws_limits, settings.max_body_bytes)

    return app
