"""OpenEnv's Task API routes of one surface: discover the splits and tasks a reset can play.

OpenEnv 0.10's `HTTPEnvServer` serves an environment's `TaskProvider` methods as

    GET  /list_environments                                  ["servicebench", ...]
    GET  /{env_name}/splits                                  [{"name", "type", ...}, ...]
    POST /{env_name}/tasks       {"split"}                   {"tasks": [...], "env_name"}
    POST /{env_name}/num_tasks   {"split"}                   {"num_tasks": n}
    POST /{env_name}/task        {"split", "index"}          {"task": {...}}
    POST /{env_name}/task_range  {"split", "start", "stop"}  {"tasks": [...]}

with 404 for an env_name it does not serve (case-insensitive) and 400 for an index out
of range. This surface serves the same routes, shapes and statuses for its
environments (both at the root, where `/servicebench/splits` is such a route, one under
each prefix), answered by the environments' own TaskProvider methods' catalogue
(server/tasks/splits.py), with what OpenEnv leaves to the environment made strict: a body
is parsed by the server's one JSON parser (server/strict_json.py), its fields are
typed strictly (`"3"` is not an index; OpenEnv's models would coerce it) and extra
fields are refused (422); an unknown split is a 404 naming the splits (OpenEnv would
answer whatever the environment raised, a 500 for a ValueError); a task_range answer
holds at most `MAX_RANGE` specs (400 beyond: page with start and stop); list_tasks
answers a preview of `LIST_PREVIEW` specs, as OpenEnv allows (num_tasks is the total).
The bare routes (`/splits`, `/task`, ...) answer a 404 naming the environments' routes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from ...error_messages import shown
from ..lifecycle.episode import EpisodeEnvironment
from ..lifecycle.episodes import MAX_SPLIT_NAME, Episodes, validated
from ..strict_json import body_json
from ..tasks.episode_errors import EpisodeError
from ..tasks.splits import LIST_PREVIEW, MAX_RANGE, Catalogue, specs
from .fast_path import CONTENT_TYPE_HEADER

TAGS = ["Task API"]
Answer = Callable[[str, Catalogue, Any], dict[str, Any]]
"""A route's answer from (the environment's name, its catalogue, the validated body)."""


class UnknownEnvironmentError(EpisodeError):
    status = 404


class TaskApiRequest(BaseModel):
    """The body of /num_tasks and /tasks (OpenEnv's NumTasksRequest, ListTasksRequest)."""

    model_config = ConfigDict(extra="forbid")

    split: StrictStr = Field(max_length=MAX_SPLIT_NAME, description="Task split name")


class TaskRequest(TaskApiRequest):
    """The body of /task (OpenEnv's GetTaskRequest)."""

    index: StrictInt = Field(description="Task index within the split")


class TaskRangeRequest(TaskApiRequest):
    """The body of /task_range (OpenEnv's GetTaskRangeRequest): Python slice bounds."""

    start: StrictInt | None = Field(default=None, description="Inclusive start index")
    stop: StrictInt | None = Field(default=None, description="Exclusive stop index")


def body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of a route whose JSON body is `model`."""
    schema = model.model_json_schema()
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


async def read_body(request: Request, model: type[BaseModel]) -> Any:
    """The request's JSON body (Content-Type JSON required) validated as `model`."""
    data = body_json(await request.body(), request.headers.get(CONTENT_TYPE_HEADER))
    return validated(model, {} if data is None else data)


def install(app: FastAPI, episodes: Episodes) -> None:
    """Add the Task API routes of `episodes`'s environments to `app`."""
    envs: dict[str, type[EpisodeEnvironment]] = {env.env_name: env for env in episodes.envs}
    catalogues = {name: env.catalogue() for name, env in envs.items()}  # a bad table fails here
    names = ", ".join(envs)

    def catalogue(env_name: str) -> tuple[str, Catalogue]:
        for name, found in catalogues.items():
            if name.lower() == env_name.lower():
                return name, found
        raise UnknownEnvironmentError(
            f"unknown environment {shown(env_name)}; this endpoint serves: {names}"
        )

    @app.get("/list_environments", tags=TAGS, summary="The environments of this endpoint")
    async def list_environments() -> list[str]:
        return list(envs)

    @app.get("/{env_name}/splits", tags=TAGS, summary="The splits, with their task counts")
    async def list_splits(env_name: str) -> list[dict[str, Any]]:
        return catalogue(env_name)[1].descriptors()

    def post(route: str, model: type[BaseModel], summary: str, answer: Answer) -> None:
        """POST /{env_name}/{route}: `model`'s body, answered by `answer`."""

        async def handler(env_name: str, request: Request) -> dict[str, Any]:
            name, found = catalogue(env_name)
            return answer(name, found, await read_body(request, model))

        app.post(
            f"/{{env_name}}/{route}",
            name=route,
            tags=TAGS,
            summary=summary,
            openapi_extra=body_schema(model),
        )(handler)

    post(
        "tasks",
        TaskApiRequest,
        f"The first {LIST_PREVIEW} task specs of a split (a preview)",
        lambda name, found, body: {"tasks": specs(found.preview(body.split)), "env_name": name},
    )
    post(
        "num_tasks",
        TaskApiRequest,
        "The number of tasks in a split",
        lambda _, found, body: {"num_tasks": found.num_tasks(body.split)},
    )
    post(
        "task",
        TaskRequest,
        "One task spec: reset with the same split and index plays it",
        lambda _, found, body: {"task": found.task(body.split, body.index).spec()},
    )
    post(
        "task_range",
        TaskRangeRequest,
        f"Task specs [start:stop] of a split (at most {MAX_RANGE})",
        lambda _, found, body: {
            "tasks": specs(found.task_range(body.split, body.start, body.stop))
        },
    )

    def per_environment(route: str) -> Any:
        async def pointer() -> None:
            where = ", ".join(f"/{name}/{route}" for name in envs)
            raise UnknownEnvironmentError(
                f"the Task API is served per environment: {where} (relative to this endpoint)"
            )

        return pointer

    app.get("/splits", include_in_schema=False)(per_environment("splits"))
    for route in ("num_tasks", "task", "task_range"):
        app.post(f"/{route}", include_in_schema=False)(per_environment(route))
