"""Clients of the environment server.

Two kinds, for two kinds of callers:

* `EnvHttpClient` / `AsyncEnvHttpClient`: the stateful HTTP session API
  (`/reset`, `/step`, `/state`, `/tasks`, `/health`, and the sync one the Task API's
  `/{env}/splits`, `/task`, `/task_range`) on httpx. The client keeps
  the `episode_id` of the episode it started, so a caller just alternates
  `reset` and `step`. Server errors become `EnvServerError`s carrying the
  server's own message. `inference.py` uses this one. Every step carries its
  `step_index`, so with `retries=N` a step whose answer was lost (a dropped
  connection, a restarting server, a 503 from an unreachable episode store) is
  sent again and answered once, never applied twice.
* `ServiceBenchEnv` / `SupportQueueEnv`: OpenEnv `EnvClient`s over the
  WebSocket of each environment's prefix, with typed actions, observations
  and states, for RL frameworks (TRL and others) that speak OpenEnv. With
  `reconnect_attempts=N`, a step or state whose connection drops reconnects,
  resumes the episode by id (our `resume` message) and is sent again with its
  `step_index`: the episode goes on where it was.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import httpx
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from pydantic import BaseModel
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State

from .models import (
    EpisodeObservation,
    EpisodeState,
    ServiceBenchAction,
    ServiceBenchObservation,
    ServiceBenchState,
    SupportQueueAction,
    SupportQueueObservation,
    SupportQueueState,
    TaskCard,
)

DEFAULT_TIMEOUT_S = 30.0
RETRY_BACKOFF_S = (0.1, 0.25, 0.5, 1.0, 2.0)
"""How long to wait before each retry (the last one repeats): a server restarts in seconds."""

OBSERVATION_TYPES: dict[str, type[EpisodeObservation]] = {
    "servicebench": ServiceBenchObservation,
    "support_queue": SupportQueueObservation,
}
STATE_TYPES: dict[str, type[EpisodeState]] = {
    "servicebench": ServiceBenchState,
    "support_queue": SupportQueueState,
}

ObsT = TypeVar("ObsT", bound=EpisodeObservation)
ActT = TypeVar("ActT", bound=BaseModel)
StateT = TypeVar("StateT", bound=EpisodeState)
ActionLike = BaseModel | Mapping[str, Any]


# ----------------------------------------------------------------------------- errors


class EnvClientError(Exception):
    """Anything that kept a request from getting an answer from the server."""


class EnvConnectionError(EnvClientError):
    """The server could not be reached, or did not answer in time."""


class NoEpisodeError(EnvClientError):
    """`step` or `state` before any `reset`: there is no episode to address."""


class EnvServerError(EnvClientError):
    """The server answered with an error status; `detail` is its own message."""

    def __init__(self, status_code: int, detail: str, payload: Any = None) -> None:
        super().__init__(f"HTTP {status_code}: {detail}")
        self.status_code = status_code
        self.detail = detail
        self.payload = payload

    @property
    def errors(self) -> list[Any]:
        """The per-field validation errors of a 422, if the server listed any."""
        if isinstance(self.payload, dict) and isinstance(self.payload.get("errors"), list):
            return self.payload["errors"]
        return []


class BadRequestError(EnvServerError):
    """400 / 413: the request itself was malformed."""


class NotFoundError(EnvServerError):
    """404: unknown or expired episode, or unknown task."""


class EpisodeDoneError(EnvServerError):
    """409: a step after the episode ended."""


class InvalidActionError(EnvServerError):
    """422: the action (or reset body) failed validation; see `errors`."""


class StoreUnavailableError(EnvServerError):
    """503: the server's episode store was away. The payload's `outcome` says whether the
    request may still have been recorded (`unknown`); this client's steps carry their
    `step_index`, so sending one again never applies it twice."""


_ERROR_TYPES: dict[int, type[EnvServerError]] = {
    400: BadRequestError,
    404: NotFoundError,
    409: EpisodeDoneError,
    413: BadRequestError,
    422: InvalidActionError,
    503: StoreUnavailableError,
}
RETRIABLE = (EnvConnectionError, StoreUnavailableError)
"""What a retry may cure: no answer, or no episode store; never a refusal of the request."""


def backoff(attempt: int) -> float:
    return RETRY_BACKOFF_S[min(attempt, len(RETRY_BACKOFF_S) - 1)]


def raise_for_response(response: httpx.Response) -> Any:
    """The decoded JSON body of a success, or the matching `EnvServerError`."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if response.is_success and payload is not None:
        return payload
    if response.is_success:
        raise EnvServerError(response.status_code, "the server answered with a non-JSON body")
    detail = payload.get("detail") if isinstance(payload, dict) else None
    if not isinstance(detail, str):
        detail = (
            str(detail) if detail is not None else (response.text[:500] or response.reason_phrase)
        )
    error_type = _ERROR_TYPES.get(response.status_code, EnvServerError)
    raise error_type(response.status_code, detail, payload)


# ----------------------------------------------------------------------------- parsing


def parse_observation(
    observation_type: type[ObsT], data: Mapping[str, Any], reward: Any, done: bool
) -> ObsT:
    """A typed observation from the wire's `observation` dict plus reward and done.

    Fields this client does not know are dropped, so that an older client keeps
    working against a newer server that added a field.
    """
    known = observation_type.model_fields
    fields = {key: value for key, value in data.items() if key in known}
    return observation_type.model_validate({**fields, "reward": reward, "done": bool(done)})


def env_of(observation: Mapping[str, Any], default: str | None) -> str:
    """Which environment produced `observation` (the server names it in `info.env`)."""
    info = observation.get("info")
    name = info.get("env") if isinstance(info, dict) else None
    name = name or default
    if name not in OBSERVATION_TYPES:
        raise EnvClientError(f"cannot tell which environment answered (env={name!r})")
    return name


@dataclass(frozen=True)
class EpisodeStep(Generic[ObsT]):
    """One answer of `/reset` or `/step`: the typed observation and the episode it belongs to."""

    observation: ObsT
    reward: float | None
    done: bool
    episode_id: str
    env: str


def action_payload(action: ActionLike) -> dict[str, Any]:
    """The JSON object of an action; a pydantic action drops OpenEnv's empty `metadata`."""
    if isinstance(action, BaseModel):
        data = action.model_dump(mode="json")
        if not data.get("metadata"):
            data.pop("metadata", None)
        return data
    return dict(action)


class _SessionProtocol:
    """What the sync and async HTTP clients share: request bodies and response parsing."""

    def __init__(self, base_url: str, retries: int) -> None:
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.episode_id: str | None = None
        self.env: str | None = None
        self.steps = 0
        """Steps the episode has taken, as its last observation said (`info.step`)."""

    @staticmethod
    def _reset_body(
        env: str | None,
        task_id: Any,
        seed: int | None,
        episode_id: str | None,
        split: str | None = None,
        index: int | None = None,
        faults: str | None = None,
    ) -> dict[str, Any]:
        body = {
            "env": env,
            "task_id": task_id,
            "seed": seed,
            "episode_id": episode_id,
            "split": split,
            "index": index,
            "faults": faults,
        }
        return {key: value for key, value in body.items() if value is not None}

    def _step_body(self, action: ActionLike) -> dict[str, Any]:
        return {
            "action": action_payload(action),
            "episode_id": self._require_episode(),
            "step_index": self.steps + 1,
        }

    def _require_episode(self) -> str:
        if self.episode_id is None:
            raise NoEpisodeError("no episode yet: call reset() first")
        return self.episode_id

    def _episode_step(self, payload: Any, requested_env: str | None) -> EpisodeStep[Any]:
        if not isinstance(payload, dict) or not isinstance(payload.get("observation"), dict):
            raise EnvClientError("the server's answer has no observation object")
        observation = payload["observation"]
        env = env_of(observation, requested_env or self.env)
        info = observation.get("info") if isinstance(observation.get("info"), dict) else {}
        episode_id = payload.get("episode_id") or info.get("episode_id")
        if not episode_id:
            raise EnvClientError("the server's answer names no episode_id")
        self.env, self.episode_id = env, str(episode_id)
        step = info.get("step")
        self.steps = step if isinstance(step, int) else 0
        typed = parse_observation(
            OBSERVATION_TYPES[env], observation, payload.get("reward"), payload.get("done", False)
        )
        return EpisodeStep(
            typed, payload.get("reward"), bool(payload.get("done")), self.episode_id, env
        )

    def _parse_state(self, payload: Any) -> EpisodeState:
        env = payload.get("env") if isinstance(payload, dict) else None
        state_type = STATE_TYPES.get(env or self.env or "", EpisodeState)
        return state_type.model_validate(payload)

    @staticmethod
    def _parse_tasks(payload: Any) -> list[TaskCard]:
        return [TaskCard.model_validate(card) for card in payload.get("tasks", [])]


def _transport_error(exc: httpx.HTTPError, base_url: str) -> EnvConnectionError:
    return EnvConnectionError(
        f"environment server {base_url} unreachable: {type(exc).__name__}: {exc}"
    )


class EnvHttpClient(_SessionProtocol):
    """Synchronous client of the stateful HTTP API; one episode at a time per instance."""

    def __init__(
        self,
        base_url: str = "http://localhost:8000",
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = 0,
    ) -> None:
        super().__init__(base_url, retries)
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout_s)

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        for attempt in range(self.retries + 1):
            try:
                try:
                    response = self._http.request(method, path, **kwargs)
                except httpx.HTTPError as exc:
                    raise _transport_error(exc, self.base_url) from exc
                return raise_for_response(response)
            except RETRIABLE:
                if attempt == self.retries:
                    raise
            time.sleep(backoff(attempt))

    def reset(
        self,
        env: str | None = None,
        task_id: Any = None,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str | None = None,
        index: int | None = None,
        faults: str | None = None,
    ) -> EpisodeStep[Any]:
        """Start an episode (env inferred from task_id if omitted; `split` and `index` play a
        Task API task instead of a task and seed; `faults` "light" or "heavy" makes
        ServiceBench's services fail now and then); later calls address it."""
        body = self._reset_body(env, task_id, seed, episode_id, split, index, faults)
        return self._episode_step(self._request("POST", "/reset", json=body), env)

    def step(self, action: ActionLike) -> EpisodeStep[Any]:
        return self._episode_step(
            self._request("POST", "/step", json=self._step_body(action)), None
        )

    def state(self) -> EpisodeState:
        return self._parse_state(
            self._request("GET", "/state", params={"episode_id": self._require_episode()})
        )

    def tasks(self) -> list[TaskCard]:
        return self._parse_tasks(self._request("GET", "/tasks"))

    # OpenEnv's Task API (server/transport/task_api.py): plain JSON, the task specs as the server gives them.

    def splits(self, env: str) -> list[dict[str, Any]]:
        """`env`'s splits: name, type, num_tasks, families, seeds."""
        return self._request("GET", f"/{env}/splits")

    def task(self, env: str, split: str, index: int) -> dict[str, Any]:
        return self._request("POST", f"/{env}/task", json={"split": split, "index": index})["task"]

    def task_range(
        self, env: str, split: str, start: int | None = None, stop: int | None = None
    ) -> list[dict[str, Any]]:
        body = {"split": split, "start": start, "stop": stop}
        return self._request("POST", f"/{env}/task_range", json=body)["tasks"]

    def health(self) -> dict[str, Any]:
        return self._request("GET", "/health")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> EnvHttpClient:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


class AsyncEnvHttpClient(_SessionProtocol):
    """The asyncio twin of `EnvHttpClient`, for callers that play many episodes concurrently."""

    def __init__(
        self,
        base_url: str = "http://localhost:8000",
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retries: int = 0,
    ) -> None:
        super().__init__(base_url, retries)
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout_s)

    async def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        for attempt in range(self.retries + 1):
            try:
                try:
                    response = await self._http.request(method, path, **kwargs)
                except httpx.HTTPError as exc:
                    raise _transport_error(exc, self.base_url) from exc
                return raise_for_response(response)
            except RETRIABLE:
                if attempt == self.retries:
                    raise
            await asyncio.sleep(backoff(attempt))

    async def reset(
        self,
        env: str | None = None,
        task_id: Any = None,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str | None = None,
        index: int | None = None,
        faults: str | None = None,
    ) -> EpisodeStep[Any]:
        body = self._reset_body(env, task_id, seed, episode_id, split, index, faults)
        return self._episode_step(await self._request("POST", "/reset", json=body), env)

    async def step(self, action: ActionLike) -> EpisodeStep[Any]:
        payload = await self._request("POST", "/step", json=self._step_body(action))
        return self._episode_step(payload, None)

    async def state(self) -> EpisodeState:
        payload = await self._request(
            "GET", "/state", params={"episode_id": self._require_episode()}
        )
        return self._parse_state(payload)

    async def tasks(self) -> list[TaskCard]:
        return self._parse_tasks(await self._request("GET", "/tasks"))

    async def health(self) -> dict[str, Any]:
        return await self._request("GET", "/health")

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncEnvHttpClient:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()


# ----------------------------------------------------------------------------- OpenEnv WebSocket clients


def _prefixed(base_url: str, prefix: str) -> str:
    """`base_url` pointed at the environment's prefix, unless it already is."""
    base = base_url.rstrip("/")
    return base if base.endswith(prefix) else base + prefix


class _TypedEnvClient(EnvClient[ActT, ObsT, StateT]):
    """An OpenEnv WebSocket client of one environment's prefix, with its typed models.

    Each step carries its `step_index`. With `reconnect_attempts=N`, a step or state whose
    connection drops (a server restart, a network blip) reconnects, resumes the episode by
    id and is sent again: a step that had been applied is answered again, not applied twice.
    """

    PREFIX: str
    observation_type: type[ObsT]
    state_type: type[StateT]

    def __init__(self, base_url: str, reconnect_attempts: int = 0, **kwargs: Any) -> None:
        super().__init__(_prefixed(base_url, self.PREFIX), **kwargs)
        self.reconnect_attempts = reconnect_attempts
        self.episode_id: str | None = None
        self.steps = 0
        self._attached: object | None = None
        """The connection the episode was last reset or resumed on."""

    def _step_payload(self, action: ActT) -> dict[str, Any]:
        return action_payload(action)

    async def _step_async(self, action: ActT, **kwargs: Any) -> StepResult[ObsT]:
        message = {
            "type": "step",
            "data": self._step_payload(action),
            "step_index": self.steps + 1,
        }
        return self._parse_result((await self._send_and_receive(message)).get("data", {}))

    def _attached_and_open(self) -> bool:
        """Whether the next message goes out on the connection that holds the episode (a
        connection closed by the far end is replaced by OpenEnv's client on the next send)."""
        ws = self._ws
        return ws is not None and ws is self._attached and ws.state is State.OPEN

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        resumable = message.get("type") in ("step", "state") and self.episode_id is not None
        for attempt in range(self.reconnect_attempts + 1):
            try:
                if resumable and self.reconnect_attempts and not self._attached_and_open():
                    await super()._send_and_receive(  # a new connection: attach the episode
                        {"type": "resume", "data": {"episode_id": self.episode_id}}
                    )
                    self._attached = self._ws
                answer = await super()._send_and_receive(message)
                self._attached = self._ws
                return answer
            except (ConnectionError, OSError, ConnectionClosed):
                if not resumable or attempt == self.reconnect_attempts:
                    raise
            await asyncio.sleep(backoff(attempt))
        raise AssertionError("unreachable")

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[ObsT]:
        observation = parse_observation(
            self.observation_type,
            payload.get("observation", {}),
            payload.get("reward"),
            payload.get("done", False),
        )
        info = observation.info
        self.episode_id = info.get("episode_id", self.episode_id)
        self.steps = info.get("step", self.steps)
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=observation.done
        )

    def _parse_state(self, payload: dict[str, Any]) -> StateT:
        return self.state_type.model_validate(payload)


class ServiceBenchEnv(
    _TypedEnvClient[ServiceBenchAction, ServiceBenchObservation, ServiceBenchState]
):
    """OpenEnv client of ServiceBench over `<base_url>/servicebench/ws`.

    `reset(task_id=..., seed=...)`, `step(ServiceBenchAction(...))`, `state()`
    give `ServiceBenchObservation`s and a `ServiceBenchState`; async by
    default, `.sync()` for a blocking wrapper.
    """

    PREFIX = "/servicebench"
    observation_type = ServiceBenchObservation
    state_type = ServiceBenchState


class SupportQueueEnv(
    _TypedEnvClient[SupportQueueAction, SupportQueueObservation, SupportQueueState]
):
    """OpenEnv client of Support Queue over `<base_url>/support_queue/ws` (SupportQueueAction in,
    SupportQueueObservation out, SupportQueueState from `state()`)."""

    PREFIX = "/support_queue"
    observation_type = SupportQueueObservation
    state_type = SupportQueueState
