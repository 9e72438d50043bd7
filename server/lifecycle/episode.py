"""The episode mechanism both environments share.

An `EpisodeEnvironment` is one episode's worth of state: `reset` picks a task
and starts it, `step` applies one action until the episode is done. The
bookkeeping that is the same for every environment (task lookup, episode id,
step counting, the done guard, the common observation fields) lives here, so
that an environment only writes what is its own: `_start` and `_apply`, which
return the fields of the observation that are the environment's own.

Every environment serves seeded variants through the one pipeline of
server/tasks/variants.py: it names its generator (`draw_variant`), its proof
(`prove_variant`) and its canonical tasks (`canonical_variant`), and the base class
gives it a proven-variant cache of its own (`variants`). The proof gets the
environment class itself, so an environment can prove its variants by playing
them, and nothing has to be wired at the bottom of a module.
"""

from __future__ import annotations

import secrets
from abc import abstractmethod
from functools import cache
from typing import Any, ClassVar, Generic, TypeVar

from ... import __version__
from ...error_messages import shown
from ...models import EpisodeObservation, EpisodeState, TaskCard
from ...openenv_types import Action, Environment, EnvironmentMetadata
from ..tasks.episode_errors import (
    EpisodeError,
    EpisodeFinishedError,
    EpisodeNotStartedError,
    FaultLevelError,
    UnknownTaskError,
)
from ..tasks.seeds import CANONICAL_SEED, is_canonical
from ..tasks.splits import (
    Catalogue,
    Family,
    SplitRequestError,
    SplitTask,
    check_split_reset,
    specs,
)
from ..tasks.variants import Draw, VariantCache

ActT = TypeVar("ActT", bound=Action)
ObsT = TypeVar("ObsT", bound=EpisodeObservation)
StateT = TypeVar("StateT", bound=EpisodeState)
NO_FAULTS = "off"
ObservationFields = dict[str, Any]
"""An observation's fields by name, as `_start` and `_apply` return them."""

EPISODE_OVERHEAD_BYTES = 16 * 1024
"""What an episode holds besides its actions: its objects, progress, the records it wrote."""
README_URL = "https://huggingface.co/spaces/openenv/servicebench-support-queue/blob/main/README.md"


def action_entry(action: Action) -> bytes:
    """An action as its episode keeps it: its JSON, compact UTF-8, in the order the client gave
    it (the state shows parameters in that order). These bytes, one entry per step, are
    all an episode holds of its actions, in every store: never the parsed objects, which
    take up to 20 times the room of their JSON (`{"k1": [], ...}`), nor a `str`, which takes
    4 bytes per character for all of it once one character is outside the BMP."""
    return action.__pydantic_serializer__.to_json(action)


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
    max_action_bytes: ClassVar[int]
    """The largest action an episode takes, as the UTF-8 JSON of `action_entry`: with the
    task's step budget, what bounds the memory of an episode (`byte_budget`)."""
    step_entry_bytes: ClassVar[int] = 0
    """What the episode may keep per step besides the action's own text (ServiceBench: a
    keyed write's entry in its idempotency key table); part of `memory_bound`."""
    variants: ClassVar[VariantCache[Any, Draw]]
    """This environment's proven variants, made for each subclass from its `draw_variant`
    and `prove_variant` (see `__init_subclass__`)."""
    family_variants: ClassVar[VariantCache[Any, Draw]]
    """The proven variants of its families, by (family, seed): what split tasks play."""
    fault_levels: ClassVar[tuple[str, ...]] = (NO_FAULTS,)
    """The `faults` levels a reset may ask for (ServiceBench's services can fail)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.variants = VariantCache(cls.draw_variant, cls.prove_variant)
        cls.family_variants = VariantCache(cls.draw_family_variant, cls.prove_variant)

    def __init__(self) -> None:
        super().__init__()
        self.episode_id: str = ""
        self.task: TaskCard | None = None
        self.seed: int | None = None
        self.family: str | None = None
        """The family the reset asked for (None: the seed's own)."""
        self.split: str | None = None
        self.index: int | None = None
        """The split and index the episode was reset with (None: by task and seed)."""
        self.fault_level: str = NO_FAULTS
        """The reset's `faults` level: what a replay of the episode must reset with too."""
        self.step_count = 0
        self.done = False
        self.entries: tuple[bytes, ...] = ()
        """The actions taken, as `action_entry`s: a tuple, so a copy of the episode shares it."""

    @classmethod
    def install_routes(cls, app: Any) -> None:
        """Add the environment's own read-only routes to a FastAPI app that serves it (none
        unless it has some), so that the shared core names no environment."""

    @classmethod
    def warm(cls) -> None:
        """Do now the one-time work that playing needs (server/lifecycle/warmup.py runs it in a thread at
        startup); whatever it prepares must also be prepared on first use without it."""

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
    def check_fault_level(cls, level: Any) -> str:
        """`level` if this environment has it, else FaultLevelError naming it and the levels."""
        if level in cls.fault_levels:
            return str(level)
        if len(cls.fault_levels) == 1:
            raise FaultLevelError(
                f"faults {shown(level)}: {cls.env_name} has no faults to inject "
                f"(faults are ServiceBench only); leave faults out or send {NO_FAULTS!r}"
            )
        raise FaultLevelError(
            f"unknown faults level {shown(level)}; {cls.env_name} has: "
            + ", ".join(cls.fault_levels)
        )

    @classmethod
    def most_steps(cls, card: TaskCard) -> int:
        """The most steps an episode of the task can take (its budget can grow with faults)."""
        return card.max_steps

    @property
    def step_budget(self) -> int:
        """The steps this episode may take: its task's `max_steps` (grown by the faults its
        services answered with, in an environment that has faults)."""
        return self.task.max_steps if self.task is not None else 0

    @classmethod
    def byte_budget(cls) -> int:
        """The most an episode's actions can add up to: its longest task's step budget times
        the action limit (what a durable store's log of an episode may hold)."""
        return max(cls.most_steps(card) for card in cls.tasks) * cls.max_action_bytes

    @classmethod
    def memory_bound(cls) -> int:
        """The most one idle episode holds in a process (the memory store, or a worker's cache
        of a durable store): its action entries, what its world keeps of them (a write's
        text), what it keeps per step (`step_entry_bytes`), and a fixed overhead.
        bench/episode_memory.py measures it under an abusive client and
        tests/server/store/test_episode_bytes.py holds every store to it."""
        steps = cls.byte_budget() // cls.max_action_bytes  # the most steps an episode takes
        return 2 * cls.byte_budget() + steps * cls.step_entry_bytes + EPISODE_OVERHEAD_BYTES

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
    def families_of(cls, task_id: str) -> tuple[str, ...]:
        """The families a reset may name for this task (none unless the environment has some)."""
        return ()

    @classmethod
    def owns_family(cls, family: str) -> bool:
        return any(family in cls.families_of(card.id) for card in cls.tasks)

    @classmethod
    def task_of_family(cls, family: str) -> str:
        """The task a family belongs to, or UnknownTaskError."""
        for card in cls.tasks:
            if family in cls.families_of(card.id):
                return card.id
        raise UnknownTaskError(f"unknown family {shown(family)} for env {cls.env_name!r}")

    @classmethod
    def _variant_seed(cls, task_id: str, seed: int | None, family: str | None) -> int | None:
        """The seed of the variant `reset(task_id, seed, family)` plays, None for the canonical
        task: a family's seed 0 is the canonical task when that is the canonical task's
        family, else the family's own variant of seed 0."""
        if family is not None and family not in cls.families_of(task_id):
            known = ", ".join(cls.families_of(task_id)) or "none"
            raise UnknownTaskError(
                f"unknown family {shown(family)} for task {task_id!r}; its families: {known}"
            )
        if not is_canonical(seed):
            return seed
        canonical = cls.canonical_variant(task_id)
        if family is None or getattr(canonical, "family", None) == family:
            return None
        return CANONICAL_SEED

    @classmethod
    async def prepared_variant(
        cls, task_id: str, seed: int | None, family: str | None = None
    ) -> Draw:
        """`variant_for`, built off the event loop if it has to be built (server/tasks/variants.py):
        what an async caller awaits before a reset or a replay."""
        drawn = cls._variant_seed(task_id, seed, family)
        if drawn is None:
            return cls.canonical_variant(task_id)
        return await cls.variants.prepared(task_id, drawn, family)

    @classmethod
    def variant_for(cls, task_id: str, seed: int | None, family: str | None = None) -> Draw:
        """What `reset(task_id, seed, family)` plays: the canonical task, or the seed's proven
        variant (of `family`, if named)."""
        drawn = cls._variant_seed(task_id, seed, family)
        if drawn is None:
            return cls.canonical_variant(task_id)
        return cls.variants.get(task_id, drawn, family)

    # ---------------------------------------------------------- families, splits

    @classmethod
    @abstractmethod
    def task_families(cls) -> tuple[Family, ...]:
        """This environment's task families, read from its registry, in the registry's order
        (the order in which the splits interleave them)."""

    @staticmethod
    @abstractmethod
    def draw_family_variant(family: str, seed: int, attempt: int) -> Draw:
        """The generator of one family: attempt `attempt` of its `seed` variant, not yet proven."""

    @classmethod
    def family_variant(cls, family: str, seed: int) -> Draw:
        """What a split task of `family` on `seed` plays: its proven variant (cached)."""
        return cls.family_variants.get(family, seed)

    @classmethod
    async def prepared_split_task(cls, split: Any, index: Any, seed: Any) -> SplitTask:
        """The split task `reset(split=, index=, seed=)` plays, its variant built off the event
        loop if it has to be built: an async caller awaits it, then resets with its index."""
        chosen = cls.catalogue().chosen(split, index, seed)
        await cls.family_variants.prepared(chosen.family.name, chosen.seed)
        return chosen

    @classmethod
    def catalogue(cls) -> Catalogue:
        """The environment's splits (server/tasks/splits.py), built once per class."""
        return _catalogue(cls)

    # OpenEnv's TaskProvider protocol: discovery only, side-effect free, works on a fresh
    # instance; OpenEnv's own HTTP server serves these as /{env_name}/... routes, and so does
    # server/transport/task_api.py (with bounded, strictly typed requests).

    def list_splits(self) -> list[dict[str, Any]]:
        return self.catalogue().descriptors()

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        return specs(self.catalogue().preview(split))

    def num_tasks(self, split: str) -> int:
        return self.catalogue().num_tasks(split)

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        return self.catalogue().task(split, index).spec()

    def get_task_range(
        self, split: str, start: int | None = None, stop: int | None = None
    ) -> list[dict[str, Any]]:
        return specs(self.catalogue().task_range(split, start, stop))

    # ------------------------------------------------------------- lifecycle

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: Any = None,
        variant: Draw | None = None,
        family: str | None = None,
        split: str | None = None,
        index: int | None = None,
        faults: str = NO_FAULTS,
        **kwargs: Any,
    ) -> ObsT:
        """Start `task_id` afresh; `seed` picks a variant (None: the canonical task) and
        `family` one of the task's families (the task may be left out then); `faults`
        ("off", "light", "heavy": ServiceBench only) how often the services fail.

        `variant` plays exactly that variant of the task instead of looking the seed
        up: a proof plays the very draw it is proving. `split` and `index` play task
        `index` of a split instead (OpenEnv's Task API; a seed without an index picks it).
        """
        fault_level = self.check_fault_level(faults)
        chosen: SplitTask | None = None
        if split is not None or index is not None:
            check_split_reset(split, index, seed, task_id, variant)
            if family is not None:
                raise SplitRequestError("split and index name the family: leave family out")
            chosen = self.catalogue().chosen(split, index, seed)
            card, seed = chosen.family.card, chosen.seed
            variant = self.family_variant(chosen.family.name, chosen.seed)
        else:
            if task_id is None and family is not None:
                task_id = self.task_of_family(family)
            card = self.resolve_task(task_id)
            if variant is None:
                variant = self.variant_for(card.id, seed, family)
            elif variant.task_id != card.id:
                raise ValueError(f"variant {variant.label} is not a variant of {card.id}")
        self.task = card
        self.seed = seed
        self.family = family
        self.split, self.index = (chosen.split, chosen.index) if chosen else (None, None)
        self.episode_id = episode_id or new_episode_id()
        self.fault_level = fault_level
        self.step_count = 0
        self.done = False
        self.entries = ()
        return self._finish(self._start(card, variant))

    def step(self, action: ActT, timeout_s: float | None = None, **kwargs: Any) -> ObsT:
        """Apply one action; past the end of the episode this raises instead."""
        if self.task is None:
            raise EpisodeNotStartedError("no episode is running: call reset first")
        if self.done:
            raise EpisodeFinishedError(
                f"episode {self.episode_id} is done: call reset to start a new one"
            )
        entry = action_entry(action)
        self.step_count += 1
        fields = self._apply(action)
        self.entries = (*self.entries, entry)
        if self.step_count >= self.step_budget:
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
            "max_steps": self.step_budget,
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
            "split": self.split,
            "index": self.index,
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


@cache
def _catalogue(env_cls: type[EpisodeEnvironment]) -> Catalogue:  # type: ignore[type-arg]
    return Catalogue(env_cls.env_name, env_cls.task_families())


__all__ = [
    "EpisodeEnvironment",
    "EpisodeError",
    "EpisodeFinishedError",
    "EpisodeNotStartedError",
    "ObservationFields",
    "UnknownTaskError",
    "new_episode_id",
]
