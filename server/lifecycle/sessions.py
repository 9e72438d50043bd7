"""Live episodes: the one interface every episode store implements, and its errors.

Every stateful route of every transport (HTTP, WebSocket, MCP) goes through one
`EpisodeStore`, chosen by `EPISODE_STORE` (server/store/): `memory` keeps the live
episodes of one process; SQLite and Redis keep each episode as a header plus its
action log (server/store/log.py), shared by every process that opens the same store.

What every store guarantees (tests/server/store/test_conformance.py runs the same
suite on all three): an id is never reused while the store holds its episode (409);
an episode idle longer than the TTL expires (404); a restart replaces an episode in one
operation (the id is never free, nor the episode missing, meanwhile); only an episode's
owner restarts or ends it (server/lifecycle/owners.py), checked in the operation that does it; at
the cap a new episode makes room by dropping an episode of the client holding the most
(its finished ones first, the longest finished first, then its longest idle); a step is
applied once and only once on the state it was computed on, and a step sent with its
`step_index` is applied at most once however often it is retried: a retry with the same
action gets the same answer, with another a 409.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal

from ...error_messages import shown
from ...models import EpisodeObservation
from ...openenv_types import Action
from .episode import EpisodeEnvironment, EpisodeError

Stepped = tuple[EpisodeEnvironment, EpisodeObservation]


class EpisodeNotFoundError(EpisodeError):
    status = 404


class EpisodeIdRequiredError(EpisodeError):
    status = 400


class EpisodeIdTakenError(EpisodeError):
    status = 409


class StepConflictError(EpisodeError):
    """The step's `step_index` names a step taken by another action, or one not reachable yet."""

    status = 409


Outcome = Literal["not_applied", "unknown"]


class StoreUnavailableError(EpisodeError):
    """The episode store could not be reached, or did not answer in time.

    `outcome` says what became of the request: `not_applied` (nothing it asked for was
    done: send it again) or `unknown` (the store was sent a change and no answer came:
    it may have done it, or still do it). A step whose outcome is unknown names the
    `step_index` it was sent as: resent with it, it is answered (if it was recorded) or
    applied (if not), never applied twice.
    """

    status = 503

    def __init__(
        self, failure: str, outcome: Outcome = "not_applied", step_index: int | None = None
    ) -> None:
        self.failure = failure
        self.outcome: Outcome = outcome
        self.step_index = step_index
        super().__init__(f"{failure}. {self._advice()}")

    def _advice(self) -> str:
        if self.outcome == "not_applied":
            return "Nothing was recorded: send the request again"
        if self.step_index is None:
            return "What was sent to it may have been recorded, or may still be"
        return (
            f"This step was sent to it as step {self.step_index} and may have been recorded. "
            f'Send it again with "step_index": {self.step_index} (over MCP, the tool\'s '
            "step_index argument): if it was recorded you get its answer, if not it is "
            "applied now, never twice. Sent again without step_index, it may apply twice"
        )

    def with_outcome(
        self, outcome: Outcome, step_index: int | None = None
    ) -> StoreUnavailableError:
        """The same failure, as the request that met it turned out: a read applied nothing;
        a step names its step_index."""
        return StoreUnavailableError(self.failure, outcome, step_index)

    def details(self) -> dict[str, Any]:
        found: dict[str, Any] = {"outcome": self.outcome}
        if self.step_index is not None:
            found["step_index"] = self.step_index
        return found


def not_owned(episode_id: str) -> EpisodeNotFoundError:
    return EpisodeNotFoundError(
        f"no episode with id {shown(episode_id)} that this session or connection may "
        "restart or end (only the one that started it may, or one it was handed over to)"
    )


def not_found(
    episode_id: str, env_names: tuple[str, ...], ttl_seconds: float
) -> EpisodeNotFoundError:
    return EpisodeNotFoundError(
        f"no live {' or '.join(env_names)} episode with id {shown(episode_id)}: "
        f"it never existed, expired after {ttl_seconds:g}s idle, or was dropped to make room; "
        "call /reset"
    )


def id_taken(episode_id: str) -> EpisodeIdTakenError:
    return EpisodeIdTakenError(
        f"episode_id {shown(episode_id)} belongs to an episode that is still held "
        "(live, or finished and not yet dropped): pick another id, or reset without "
        "one to get a fresh random id"
    )


NO_EPISODE = "no episode is running: call /reset first"


def check_step_index(episode_id: str, step_index: int | None, steps: int) -> bool:
    """Whether a step with `step_index` is a new step on an episode that has taken `steps`
    (True), or names one already taken (False: answer it from the log); 409 if it is ahead."""
    if step_index is None or step_index == steps + 1:
        return True
    if step_index <= steps:
        return False
    raise StepConflictError(
        f"step_index {step_index} is ahead of episode {shown(episode_id)}, which has taken "
        f"{steps} step(s): its next step is step_index {steps + 1}"
    )


def taken_by_another(episode_id: str, step_index: int) -> StepConflictError:
    return StepConflictError(
        f"step {step_index} of episode {shown(episode_id)} was already taken with a "
        "different action: resend it with that action to get its answer again, or send "
        "the next step_index"
    )


class EpisodeStore(ABC):
    """Where the live episodes are. All operations are coroutines: the durable stores wait
    for their backend without blocking the event loop; the memory store never waits.

    `owner` and `client` are strings of server/lifecycle/owners.py: who may restart or end an
    episode, and whose share of the cap it counts in."""

    max_live: int
    ttl_seconds: float

    @abstractmethod
    async def add(
        self, env: EpisodeEnvironment, owner: str, client: str, latest: bool = True
    ) -> None:
        """Register a freshly reset episode (409 if its id is held), making room at the cap.
        `latest`: it becomes the latest-episode fallback (HTTP and MCP resets; not WebSocket)."""

    @abstractmethod
    async def replace(self, env: EpisodeEnvironment, owner: str, latest: bool = True) -> None:
        """Put the freshly reset `env` in place of the held episode with its id, in one
        operation (the id is never free meanwhile); 404 unless that episode is `owner`'s."""

    @abstractmethod
    async def lookup(self, episode_id: str, env_names: tuple[str, ...]) -> EpisodeEnvironment:
        """The episode, to validate an action against (a durable store may return a state a
        few steps behind: `step` catches up before it applies anything)."""

    @abstractmethod
    async def get(
        self, episode_id: str, env_names: tuple[str, ...], owner: str | None = None
    ) -> EpisodeEnvironment:
        """The episode as it stands now, marked as just used (to read its state); with
        `owner`, only if the episode is that owner's (else 404, and it is not touched)."""

    @abstractmethod
    async def step(
        self, env: EpisodeEnvironment, action: Action, step_index: int | None
    ) -> Stepped:
        """Apply a validated `action` to `env`'s episode (as `lookup` returned it): at most once
        for a `step_index`, and acknowledged only once recorded."""

    @abstractmethod
    async def current(self, episode_id: str, env_names: tuple[str, ...]) -> Stepped:
        """The episode and its latest observation (the WebSocket `resume` message)."""

    @abstractmethod
    async def hand_over(
        self, episode_id: str, owner: str, to: str, client: str | None = None
    ) -> bool:
        """Make the episode `to`'s (and `client`'s, if named) if it is `owner`'s, in one
        operation (a compare-and-set: the hand-overs of server/lifecycle/owners.py); whether it was."""

    @abstractmethod
    async def latest_id(self, env_name: str | None) -> str:
        """The id of the most recently reset episode (of `env_name`, or of any env)."""

    @abstractmethod
    async def drop(self, episode_id: str, owner: str) -> bool:
        """End the episode if it is `owner`'s; whether it was (False: not held, or another's)."""

    async def close(self) -> None:  # noqa: B027 - most stores hold nothing to release
        """Release connections (at shutdown)."""
