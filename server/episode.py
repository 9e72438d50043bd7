"""The episode mechanism both environments share.

An `EpisodeEnvironment` is one episode's worth of state: `reset` picks a task
and starts it, `step` applies one action until the episode is done. The
bookkeeping that is the same for every environment (task lookup, episode id,
step counting, the done guard, the common observation fields) lives here, so
that an environment only writes what is its own: `_start` and `_apply`, which
return the fields of the observation that are the environment's own.

Every environment serves seeded variants through the one pipeline of
server/variants.py: it names its generator (`draw_variant`), its proof
(`prove_variant`) and its canonical tasks (`canonical_variant`), and the base class
gives it a proven-variant cache of its own (`variants`). The proof gets the
environment class itself, so an environment can prove its variants by playing
them, and nothing has to be wired at the bottom of a module.
"""

from __future__ import annotations

import secrets
from abc import abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata

from .. import __version__
from ..models import EpisodeObservation, EpisodeState, TaskCard
from .seeds import is_canonical
from .variants import Draw, VariantCache

ActT = TypeVar("ActT", bound=Action)
ObsT = TypeVar("ObsT", bound=EpisodeObservation)
StateT = TypeVar("StateT", bound=EpisodeState)
ObservationFields = dict[str, Any]
"""An observation's fields by name, as `_start` and `_apply` return them."""

README_URL = "https://huggingface.co/spaces/openenv/servicebench-support-queue/blob/main/README.md"


class EpisodeError(Exception):
    """A request that the episode cannot serve; `status` is its HTTP status."""

    status: ClassVar[int] = 400


class UnknownTaskError(EpisodeError):
    status = 404


class EpisodeFinishedError(EpisodeError):
    status = 409


class EpisodeNotStartedError(EpisodeError):
    status = 409


def new_episode_id() -> str:
    """An unguessable episode id (128 bits from the OS's CSPRNG)."""
    return secrets.token_urlsafe(16)


class EpisodeEnvironment(Environment[ActT, ObsT, StateT], Generic[ActT, ObsT, StateT]):
    """Base of both environments: one instance is one episode at a time."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    env_name: ClassVar[str]
    action_cls: ClassVar[type[Action]]
    observation_cls: ClassVar[type[EpisodeObservation]]
    state_cls: ClassVar[type[EpisodeState]]
    description: ClassVar[str]
    tasks: ClassVar[tuple[TaskCard, ...]]
    variants: ClassVar[VariantCache[Any, Draw]]
    """This environment's proven variants, made for each subclass from its `draw_variant`
    and `prove_variant` (see `__init_subclass__`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.variants = VariantCache(cls.draw_variant, cls.prove_variant)

    def __init__(self) -> None:
        super().__init__()
        self.episode_id: str = ""
        self.task: TaskCard | None = None
        self.seed: int | None = None
        self.step_count = 0
        self.done = False

    # ------------------------------------------------------------------ tasks

    @classmethod
    def resolve_task(cls, task_id: Any = None) -> TaskCard:
        """The card for `task_id` (an id, or an integer alias); the first task if None."""
        if task_id is None:
            return cls.tasks[0]
        for card in cls.tasks:
            if task_id == card.id or (
                card.alias is not None and str(task_id).strip() == str(card.alias)
            ):
                return card
        known = ", ".join(card.id for card in cls.tasks)
        raise UnknownTaskError(
            f"unknown task_id {task_id!r} for env {cls.env_name!r}; known tasks: {known}"
        )

    @classmethod
    def owns_task(cls, task_id: Any) -> bool:
        try:
            cls.resolve_task(task_id)
        except UnknownTaskError:
            return False
        return True

    @classmethod
    def environment_metadata(cls) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=cls.env_name,
            description=cls.description,
            version=__version__,
            documentation_url=README_URL,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        return self.environment_metadata()

    # ---------------------------------------------------------------- variants

    @staticmethod
    @abstractmethod
    def draw_variant(task_id: str, seed: int, attempt: int) -> Draw:
        """The generator: attempt `attempt` of the (task, seed) variant, not yet proven."""

    @classmethod
    @abstractmethod
    def prove_variant(cls, drawn: Any) -> Draw:
        """The proof: what an episode plays, or VariantRejected."""

    @classmethod
    @abstractmethod
    def canonical_variant(cls, task_id: str) -> Draw:
        """The task exactly as the seed documents state it (no seed, or seed 0)."""

    @classmethod
    def variant_for(cls, task_id: str, seed: int | None) -> Draw:
        """What `reset(task_id, seed)` plays: the canonical task, or the seed's proven variant."""
        return (
            cls.canonical_variant(task_id)
            if is_canonical(seed)
            else cls.variants.get(task_id, seed)
        )

    # ------------------------------------------------------------- lifecycle

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: Any = None,
        variant: Draw | None = None,
        **kwargs: Any,
    ) -> ObsT:
        """Start `task_id` afresh; `seed` picks a variant (None: the canonical task).

        `variant` plays exactly that variant of the task instead of looking the seed
        up: a proof plays the very draw it is proving.
        """
        card = self.resolve_task(task_id)
        if variant is None:
            variant = self.variant_for(card.id, seed)
        elif variant.task_id != card.id:
            raise ValueError(f"variant {variant.label} is not a variant of {card.id}")
        self.task = card
        self.seed = seed
        self.episode_id = episode_id or new_episode_id()
        self.step_count = 0
        self.done = False
        return self._finish(self._start(card, variant))

    def step(self, action: ActT, timeout_s: float | None = None, **kwargs: Any) -> ObsT:
        """Apply one action; past the end of the episode this raises instead."""
        if self.task is None:
            raise EpisodeNotStartedError("no episode is running: call reset first")
        if self.done:
            raise EpisodeFinishedError(
                f"episode {self.episode_id} is done: call reset to start a new one"
            )
        self.step_count += 1
        fields = self._apply(action)
        if self.step_count >= self.task.max_steps:
            fields["done"] = True
        self.done = fields.get("done", False)
        return self._finish(fields)

    def _finish(self, fields: ObservationFields) -> ObsT:
        """The observation: the environment's own fields plus the ones every episode adds.

        Built once, from all its fields, so it is validated once (assigning fields
        afterwards would validate each assignment again).
        """
        task = self.task
        fields["task_id"] = task.id if task else ""
        fields["info"] = {
            **fields.get("info", {}),
            "episode_id": self.episode_id,
            "env": self.env_name,
            "step": self.step_count,
            "max_steps": task.max_steps if task else 0,
        }
        return self.observation_cls.model_validate(fields)  # type: ignore[return-value]

    def _state_fields(self) -> dict[str, Any]:
        """The state fields every environment shares; each adds its own."""
        return {
            "episode_id": self.episode_id or None,
            "step_count": self.step_count,
            "env": self.env_name,
            "task": self.task,
            "seed": self.seed,
            "done": self.done,
        }

    @abstractmethod
    def fork(self) -> EpisodeEnvironment[ActT, ObsT, StateT]:
        """An independent copy of the episode as it stands: stepping one never changes the
        other. A durable store computes a step on a fork and keeps it once the step is
        recorded, so its cached episode is never left holding a step that was not."""

    @property
    @abstractmethod
    def score(self) -> float:
        """The episode score in [0, 1] so far."""

    @abstractmethod
    def _start(self, card: TaskCard, variant: Any) -> ObservationFields:
        """Start the episode on `variant` of the task; return the first observation's own fields."""

    @abstractmethod
    def _apply(self, action: ActT) -> ObservationFields:
        """Apply one action; return the observation's own fields, `done` and `reward` among them."""
