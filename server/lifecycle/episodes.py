"""Transport-independent episode operations, shared by HTTP, WebSocket and MCP.

An `Episodes` serves a *scope*: the environments one surface exposes (both at
the root, one under each prefix). It turns untrusted request data into a
validated reset or action, or raises an `EpisodeError` naming the problem,
before any episode is touched: a rejected request changes nothing. The data
comes from server/strict_json.py, so it is already plain, encodable JSON within
the limits; here it is checked against the schemas.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, NamedTuple

from openenv.core.env_server.types import Action
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from ...error_messages import shown, shown_names
from ...models import MAX_STEP_INDEX
from ..tasks.splits import check_split_reset
from . import warmup
from .episode import (
    NO_FAULTS,
    EpisodeEnvironment,
    EpisodeError,
    UnknownTaskError,
    action_entry,
)
from .owners import RELEASED, Actor
from .sessions import EpisodeIdRequiredError, EpisodeStore, Stepped, not_owned

EPISODE_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"
"""What a client-chosen episode id may look like: URL-, header- and log-safe as it is."""
MAX_SEED = 2**63 - 1
MAX_SPLIT_NAME = 64
MAX_FAULT_LEVEL = 16
MAX_TASK_INDEX = 2**31 - 1
MAX_REPORTED_ERRORS = 20
STEP_ENVELOPE_KEYS = frozenset({"action", "episode_id", "timeout_s", "request_id", "step_index"})


class InvalidRequestError(EpisodeError):
    """The request data does not fit its schema; `errors` lists each problem."""

    status = 422

    def __init__(self, message: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []

    def details(self) -> dict[str, Any]:
        return {"errors": self.errors}


class ActionTooLargeError(InvalidRequestError):
    """An action over its environment's byte limit: what bounds an episode's memory."""

    status = 413


def check_action_size(env_cls: type[EpisodeEnvironment], action: Action) -> None:
    """Refuse an action whose JSON (as its episode would keep it) is over the env's limit."""
    size = len(action_entry(action))
    if size > env_cls.max_action_bytes:
        raise ActionTooLargeError(
            f"action is {size} bytes as JSON; a {env_cls.env_name} action may be at most "
            f"{env_cls.max_action_bytes} (parameters, texts and metadata together)"
        )


class ResetRequest(BaseModel):
    """Body of POST /reset (every field optional: `{}` starts the default task)."""

    model_config = ConfigDict(extra="forbid")

    env: StrictStr | None = Field(default=None, description="servicebench | support_queue")
    task_id: StrictStr | StrictInt | None = Field(
        default=None, description="A task id from /tasks (ServiceBench also takes 1, 2, 3)"
    )
    seed: StrictInt | None = Field(default=None, ge=0, le=MAX_SEED, description="Variant seed")
    family: StrictStr | None = Field(
        default=None,
        max_length=100,
        description="One of the task's families (ServiceBench: docs/servicebench.md, Task families); "
        "task_id may then be left out",
    )
    episode_id: StrictStr | None = Field(
        default=None,
        pattern=EPISODE_ID_PATTERN,
        description="A client-chosen id: 1-128 of A-Z a-z 0-9 _ . : - (else a new random one); "
        "an id the server still holds is a 409",
    )
    split: StrictStr | None = Field(
        default=None,
        max_length=MAX_SPLIT_NAME,
        description="A Task API split (GET /{env}/splits): play its task `index` instead of "
        "naming a task_id (without an index, the seed picks one)",
    )
    index: StrictInt | None = Field(
        default=None, ge=0, le=MAX_TASK_INDEX, description="The task's index in `split`"
    )
    faults: StrictStr | None = Field(
        default=None,
        max_length=MAX_FAULT_LEVEL,
        description='How often the services fail: "off" (the default), "light" or "heavy" '
        "(ServiceBench only: 503s, 429s with retry_after_steps, 504s and stale reads inside "
        "the observation's api_response, on a schedule fixed by the task, seed and level)",
    )


SEED_DIGITS = len(str(MAX_SEED))


def seed_from_text(value: Any) -> Any:
    """A seed written as text (an MCP prompt argument, a URL query) as its number: ASCII
    digits, spaces around them allowed, at most as many as MAX_SEED has (the length is
    checked before any conversion: Python refuses to convert more than 4,300 digits).
    Anything else is left as it is, for the reset's validation to refuse by name."""
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and text.isdigit() and len(text) <= SEED_DIGITS:
            return int(text)
    return value


def describe_errors(errors: list[Any], prefix: tuple[str, ...] = ()) -> str:
    """One readable line naming each invalid field, e.g. `action.priority: ...`."""
    parts = []
    for error in errors:
        loc = ".".join(str(p) for p in (*prefix, *error.get("loc", ())))
        parts.append(f"{loc}: {error.get('msg', 'invalid')}" if loc else error.get("msg", ""))
    return "; ".join(parts) or "invalid request"


def validated(model: type[BaseModel], data: Any, prefix: tuple[str, ...] = ()) -> Any:
    """`model` built from `data`, or an InvalidRequestError naming the fields."""
    if not isinstance(data, dict):
        where = ".".join(prefix) or "body"
        raise InvalidRequestError(f"{where} must be a JSON object, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        errors = errors[
            :MAX_REPORTED_ERRORS
        ]  # a body with thousands of bad keys gets a short answer
        for error in errors:
            error["loc"] = (*prefix, *error["loc"])
        raise InvalidRequestError(describe_errors(errors), errors) from None


class StepBody(NamedTuple):
    """What a step request holds: the action's data, the episode named, the step meant."""

    action: dict[str, Any]
    episode_id: str | None
    step_index: int | None


def checked_step_index(value: Any) -> int | None:
    """A step index as a client may send it: the number of the step it means, from 1 (the
    first step after reset), as the step's observation reports it in `info.step`."""
    if value is None:
        return None
    if type(value) is not int or not 1 <= value <= MAX_STEP_INDEX:
        raise InvalidRequestError(
            f"step_index must be an integer from 1 to {MAX_STEP_INDEX} (the number of the step "
            f"this action is, 1 for the first after reset), got {shown(value)}"
        )
    return value


def split_step_body(body: Any) -> StepBody:
    """(action data, episode id, step index) from OpenEnv's envelope or from a bare action."""
    if not isinstance(body, dict):
        raise InvalidRequestError(f"body must be a JSON object, got {type(body).__name__}")
    step_index = None
    if "action" in body:
        unknown = sorted(set(body) - STEP_ENVELOPE_KEYS)
        if unknown:
            raise InvalidRequestError(
                f"unknown field(s) in step envelope: {shown_names(unknown)}; "
                f"allowed: {', '.join(sorted(STEP_ENVELOPE_KEYS))}"
            )
        action = body["action"]
        if not isinstance(action, dict):
            raise InvalidRequestError("action must be a JSON object")
        timeout = body.get("timeout_s")
        if timeout is not None and (type(timeout) not in (int, float) or not timeout > 0):
            raise InvalidRequestError(f"timeout_s must be a positive number, got {shown(timeout)}")
        if not isinstance(body.get("request_id", ""), (str, type(None))):
            raise InvalidRequestError("request_id must be a string")
        step_index = checked_step_index(body.get("step_index"))
    else:
        action = {k: v for k, v in body.items() if k != "episode_id"}
    episode_id = body.get("episode_id")
    if episode_id is not None and not isinstance(episode_id, str):
        raise InvalidRequestError("episode_id must be a string")
    return StepBody(action, episode_id, step_index)


class Episodes:
    """Episode operations for the environments of one scope."""

    def __init__(
        self,
        envs: tuple[type[EpisodeEnvironment], ...],
        store: EpisodeStore,
        require_episode_id: bool = False,
    ) -> None:
        self.envs = envs
        self.env_names = tuple(env.env_name for env in envs)
        self.store = store
        self.require_episode_id = require_episode_id
        self._by_name = {env.env_name: env for env in envs}

    @cached_property
    def action_schema(self) -> dict[str, Any]:
        """The JSON schema of an action of this scope (any environment's, at the root), inline:
        the HTTP step body and the MCP `step` tool embed it (actions define no `$defs`)."""
        schemas = [env.action_cls.model_json_schema() for env in self.envs]
        return schemas[0] if len(schemas) == 1 else {"anyOf": schemas}

    @property
    def single_env(self) -> str | None:
        return self.env_names[0] if len(self.envs) == 1 else None

    def env_class(self, request: ResetRequest) -> type[EpisodeEnvironment]:
        """The environment a reset asks for: named, else owning the task, else the default."""
        if request.env is not None:
            env_cls = self._by_name.get(request.env)
            if env_cls is None:
                raise UnknownTaskError(
                    f"unknown env {shown(request.env)}; this endpoint serves: "
                    + ", ".join(self.env_names)
                )
            return env_cls
        if request.task_id is None and request.family is not None:
            for env_cls in self.envs:
                if env_cls.owns_family(request.family):
                    return env_cls
            raise UnknownTaskError(f"unknown family {shown(request.family)}")
        if request.task_id is not None:
            for env_cls in self.envs:
                if env_cls.owns_task(request.task_id):
                    return env_cls
            known = ", ".join(card.id for env in self.envs for card in env.tasks)
            raise UnknownTaskError(
                f"unknown task_id {shown(request.task_id)}; known tasks: {known}"
            )
        return self.envs[0]

    async def _begin(self, request: ResetRequest) -> Stepped:
        check_split_reset(request.split, request.index, request.seed, request.task_id)
        env_cls = self.env_class(request)
        faults = env_cls.check_fault_level(  # before any building
            NO_FAULTS if request.faults is None else request.faults
        )
        task_id, variant, seed, index = None, None, request.seed, request.index
        if request.split is not None or request.index is not None:
            # chosen once (a reset without index or seed picks a random one) and built off the
            # loop; the reset then finds its variant cached
            chosen = await env_cls.prepared_split_task(request.split, request.index, seed)
            seed, index = None, chosen.index
        else:
            task_id = request.task_id
            if task_id is None and request.family is not None:
                task_id = env_cls.task_of_family(request.family)
            task_id = env_cls.resolve_task(task_id).id  # unknown task: fail before building
            variant = await env_cls.prepared_variant(task_id, seed, request.family)
        env = env_cls()
        observation = env.reset(
            seed=seed,
            episode_id=request.episode_id,
            task_id=task_id,
            variant=variant,
            family=request.family,
            split=request.split,
            index=index,
            faults=faults,
        )
        return env, observation

    async def reset(self, data: Any, actor: Actor, latest: bool = True) -> Stepped:
        """Start an episode owned by `actor` and keep it in the store for later calls.

        A client-chosen `episode_id` that the store still holds is a 409: a reset never
        takes over another episode, whoever owns it. `latest`: the episode becomes the
        latest-episode fallback of calls without an id (WebSocket resets do not).
        """
        request = validated(ResetRequest, {} if data is None else data)
        await warmup.ready(self.envs)
        env, observation = await self._begin(request)
        await self.store.add(env, actor.owner, actor.client, latest=latest)
        return env, observation

    async def restart(self, episode_id: str, data: Any, actor: Actor) -> Stepped:
        """Start a task afresh under the id of a live episode of this scope that `actor` owns.

        The owner's reset of an MCP session, whose id is its episode's: unlike `reset`,
        it replaces the episode it names, in one operation of the store (the id is never
        free meanwhile), and only if `actor` owns it (else 404, and nothing changes). A
        request that names no task replays the episode's own (with its seed, unless it
        names one, a split task its split and index, or with a seed the split's task that
        seed picks); a new task plays its canonical version unless a seed is named.
        """
        request = validated(ResetRequest, {} if data is None else data)
        if request.episode_id not in (None, episode_id):
            raise InvalidRequestError("a session's episode keeps its id: leave episode_id out")
        current = await self.find(episode_id, owner=actor.owner)
        same_env = request.env in (None, current.env_name)
        if request.faults is None and same_env:  # a session keeps its fault level
            request = request.model_copy(update={"faults": current.fault_level})
        names_task = any(
            value is not None for value in (request.task_id, request.split, request.family)
        )
        if not names_task and same_env and current.split is not None:
            replay = {"split": current.split, "index": current.index}
            if "seed" in request.model_fields_set:  # a seed picks another task of the split
                replay["index"] = None
            request = request.model_copy(update=replay)
        elif not names_task and same_env and current.task is not None:
            seed = request.seed if "seed" in request.model_fields_set else current.seed
            request = request.model_copy(
                update={"task_id": current.task.id, "seed": seed, "family": current.family}
            )
        env, observation = await self._begin(request.model_copy(update={"episode_id": episode_id}))
        await self.store.replace(env, actor.owner)
        return env, observation

    async def close(self, episode_id: str, actor: Actor) -> None:
        """End a live episode of this scope that `actor` owns (an MCP session's close); it
        answers 404 afterwards. 404 if `actor` does not own it, and it lives on."""
        await self.find(episode_id, owner=actor.owner)
        if not await self.store.drop(episode_id, actor.owner):
            raise not_owned(episode_id)

    async def end(self, episode_id: str, actor: Actor) -> bool:
        """End the episode if `actor` owns it, or takes it over now (its connection left
        since `actor` resumed it): a WebSocket's reset, close or normal close, never an
        episode another live connection owns, nor an HTTP episode or an MCP session it only
        plays; whether it did."""
        if await self.store.drop(episode_id, actor.owner):
            return True
        if not await self.store.hand_over(episode_id, RELEASED, actor.owner, actor.client):
            return False
        return await self.store.drop(episode_id, actor.owner)

    async def _named(self, episode_id: Any) -> str:
        """The id a call names, else (if allowed) the latest one reset. Every call on an
        episode comes here first, so it also waits until the scope's environments are warm
        (a durable store may rebuild the episode by replaying it)."""
        await warmup.ready(self.envs)
        if episode_id is not None and not isinstance(episode_id, str):
            raise InvalidRequestError(
                f"episode_id must be a string, got {type(episode_id).__name__}"
            )
        if episode_id is not None:
            return episode_id
        if self.require_episode_id:
            raise EpisodeIdRequiredError(
                "episode_id is required on this server: pass the episode_id that "
                "/reset returned in the body, the X-Episode-Id header or ?episode_id="
            )
        return await self.store.latest_id(self.single_env)

    async def find(self, episode_id: Any, owner: str | None = None) -> EpisodeEnvironment:
        """The episode named by `episode_id` (else the latest one), as it stands now; with
        `owner`, only an episode of that owner (an MCP session id names an MCP session)."""
        return await self.store.get(await self._named(episode_id), self.env_names, owner)

    async def step(
        self, episode_id: Any, action_data: Any, step_index: int | None = None
    ) -> Stepped:
        """Validate `action_data` for the episode, then apply it (at most once for a
        `step_index`): nothing is applied unless the whole action is valid."""
        env = await self.store.lookup(await self._named(episode_id), self.env_names)
        action = validated(env.action_cls, action_data, prefix=("action",))
        check_action_size(type(env), action)
        return await self.store.step(env, action, step_index)

    async def resume(self, episode_id: Any, actor: Actor) -> Stepped:
        """The episode named by `episode_id` and its latest observation; `actor` takes it
        over if its connection released it (server/lifecycle/owners.py), else only plays it."""
        if not isinstance(episode_id, str):
            raise InvalidRequestError("episode_id must be a string (the id reset returned)")
        await warmup.ready(self.envs)
        stepped = await self.store.current(episode_id, self.env_names)
        await self.store.hand_over(episode_id, RELEASED, actor.owner, actor.client)
        return stepped

    async def release(self, episode_id: str, actor: Actor) -> bool:
        """Leave the episode, if `actor` owns it, for the next connection that resumes it (a
        connection that went away without ending it); whether it did."""
        return await self.store.hand_over(episode_id, actor.owner, RELEASED)
