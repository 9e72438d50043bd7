"""The ServiceBench environment: an agent resolves customer requests by calling
in-process backend services, one API call per step, under a written support policy.

An episode is a fresh copy-on-write `ServiceState` over the shared seed data, the
task's spec and the reward progress; `reset` and `step` therefore cost microseconds
and an idle episode a few hundred bytes.

Observation shape of `api_response` (one shape for every call; faults.calls.api_response):
* success: ``{"status_code": 200, "data": {...the endpoint's response...}}``
* failure: ``{"status_code": 400|404|405|409, "error": "what was wrong"}``, with
  ``success: false`` and the same text in ``error_message``.
The first observation (after reset) has ``api_response == {}``: no call was made yet.

Faults: `reset(..., faults="light"|"heavy")` makes the services fail now and then, on a
schedule fixed by the variant, the level and the calls (server/servicebench/faults/schedule.py):
a 503, a 429 with `retry_after_steps`, a 504 (on a write: applied or not, unsaid) inside
`api_response`, with ``success: false``; or a stale read. A fault answer earns nothing and
costs nothing, and adds to the step budget (`info["max_steps"]`); what the grader sees of a
timed-out write is server/servicebench/faults/calls.py. With faults on, every observation's
`info["faults_injected"]` counts the faults answered so far, the final one's
`info["faults"]` is the fault report (`FaultyServices.summary`: what an evaluation needs to
tell the faults' failures from the agent's own), and the state lists the faults
(`faults`; a timeout's `applied` and the stale reads once the episode is done). With
faults off, nothing of this appears: every observation and state is as before.
``info["reward_signals"]`` lists the reward-table rows the last call triggered; the
final observation's ``info["outcome"]`` is the end-state check of
server/servicebench/grading/outcome.py, also the state's ``outcome`` once the episode is done.
Before that the state's ``outcome`` is null: the check compares the world with the
expected end state, so it would show the answer (the amount to refund) to anyone who
reads the state. Nothing served before the end carries an expected value.

Variants: `reset(task_id)` or `reset(task_id, seed=0)` plays the canonical task of the
seed documents; any other seed plays a generated variant of the task (its own users,
orders, SKUs, prices, coupons and prompt; see server/servicebench/variants.py and the
seed ranges in server/tasks/seeds.py). The environment's variant cache (server/tasks/variants.py)
hands out only variants proven solvable and uniquely graded by
server/servicebench/proof.py, which plays the oracle against this very class: the
class passes itself to the proof, so imports still run one way. An episode holds its
variant's shared, frozen world and spec plus its own small overlay.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ...mock_services import MAX_KEY_ENTRY_BYTES, ServiceState
from ...models import (
    CallRecord,
    EpisodeOutcome,
    ServiceBenchAction,
    ServiceBenchObservation,
    ServiceBenchState,
    TaskCard,
)
from ..lifecycle.episode import NO_FAULTS, EpisodeEnvironment, ObservationFields
from ..tasks.seeds import CANONICAL_SEED
from ..tasks.splits import Family
from .catalogue import families_of_task
from .draw import draw
from .faults.calls import Answer, FaultyServices, api_response
from .faults.schedule import LEVELS, FaultPlan, most_growth
from .grading.outcome import episode_outcome
from .grading.rewards import ApiCall, Progress, score_call
from .proof import prove
from .split_families import build_family_variant, registry_families
from .tasks import ENV_NAME, SEED_TASK_IDS, TASK_CARDS, TaskSpec
from .variants import Variant, canonical_variant

CallEntry = tuple[int, tuple[str, str, str], int, float, tuple[str, ...]]
"""A call of the history: step, route (service, endpoint, method), status, reward, signals; its
parameters stay in the episode's action entries (one copy, compact)."""
CANONICAL_VARIANTS: Mapping[str, Variant] = MappingProxyType(
    {task_id: canonical_variant(task_id) for task_id in SEED_TASK_IDS}
)
FAMILY_NAMES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {card.id: tuple(info.name for info in families_of_task(card.id)) for card in TASK_CARDS}
)


class ServiceBenchEnvironment(
    EpisodeEnvironment[ServiceBenchAction, ServiceBenchObservation, ServiceBenchState]
):
    """Multi-service API workflows: user -> orders -> inventory, with dense rewards."""

    env_name = ENV_NAME
    action_cls = ServiceBenchAction
    observation_cls = ServiceBenchObservation
    state_cls = ServiceBenchState
    description = (
        "ServiceBench: resolve customer-service tasks by chaining calls across three "
        "interconnected mock backends (UserService, OrderService, InventoryService), "
        "following foreign keys user_id -> orders -> item skus, with dense reward shaping."
    )
    tasks = TASK_CARDS
    max_action_bytes = 2 * 1024
    """An API call's JSON: its longest legitimate one (a note, a refund's reason) is a few
    hundred bytes."""
    step_entry_bytes = MAX_KEY_ENTRY_BYTES
    """A keyed write's entry in the episode's idempotency key table (mock_services/state.py)."""
    draw_variant = staticmethod(draw)
    draw_family_variant = staticmethod(build_family_variant)
    fault_levels = LEVELS

    def __init__(self) -> None:
        super().__init__()
        self._spec: TaskSpec | None = None
        self._services = ServiceState()
        self._progress = Progress()
        self._calls: list[CallEntry] = []
        self._faults: FaultyServices | None = None
        """The services' fault schedule and its traces (None: faults off)."""

    @classmethod
    def most_steps(cls, card: TaskCard) -> int:
        return card.max_steps + most_growth(card.max_steps)

    @property
    def step_budget(self) -> int:
        grown = self._faults.growth if self._faults is not None else 0
        return super().step_budget + grown

    @classmethod
    def prove_variant(cls, drawn: Variant) -> Variant:
        """Served once the oracle, playing it on this very environment, proves it."""
        prove(drawn, cls)
        return drawn

    @classmethod
    def canonical_variant(cls, task_id: str) -> Variant:
        """The seed's own task, or for a request task the proven variant of seed 0."""
        canonical = CANONICAL_VARIANTS.get(task_id)
        return canonical if canonical is not None else cls.variants.get(task_id, CANONICAL_SEED)

    @classmethod
    def families_of(cls, task_id: str) -> tuple[str, ...]:
        return FAMILY_NAMES.get(task_id, ())

    @classmethod
    def task_families(cls) -> tuple[Family, ...]:
        return registry_families()

    @property
    def score(self) -> float:
        return self._progress.score

    def _observation_fields(self, **fields: Any) -> ObservationFields:
        assert self._spec is not None
        fields.update(
            task_description=self._spec.card.description,
            policy=self._spec.policy,
            available_endpoints=self._services.surface.catalogue,
            cumulative_reward=self._progress.score,
            task_completed=self._progress.completed,
        )
        return fields

    def fork(self) -> ServiceBenchEnvironment:
        """An independent copy of the episode as it stands, to try another next step.

        The proofs use it to issue each wrong refund amount from the same point of
        the oracle's episode without replaying it.
        """
        twin = copy.copy(self)
        twin._services = self._services.fork()
        twin._calls = list(self._calls)
        if self._faults is not None:
            twin._faults = self._faults.fork()
            twin._services = twin._faults.services
        return twin

    def _start(self, card: TaskCard, variant: Variant) -> ObservationFields:
        self.task = variant.spec.card
        self._spec = variant.spec
        faulty = self.fault_level != NO_FAULTS
        self._services = ServiceState(variant.world, keyed=faulty)  # writes that can fail: keys
        self._progress = Progress()
        self._calls = []
        self._faults = None
        fields = self._observation_fields(api_response={}, success=True, reward=0.0, done=False)
        if faulty:
            plan = FaultPlan.of(
                self.fault_level, variant.task_id, variant.family, variant.seed, variant.attempt
            )
            self._faults = FaultyServices(plan, self._services, card.max_steps)
            fields["info"] = {"faults_injected": 0}
        return fields

    def _apply(self, action: ServiceBenchAction) -> ObservationFields:
        if self._faults is not None:
            return self._apply_with_faults(action, self._faults)
        assert self._spec is not None
        params = dict(action.params)
        status, body = self._services.dispatch(
            action.service, action.endpoint, action.method, params
        )
        call = ApiCall.of(action.service, action.endpoint, action.method, params)
        outcome = score_call(self._spec, self._progress, call, status, body)
        self._progress = outcome.progress
        self._calls.append((self.step_count, call[:3], status, outcome.reward, outcome.signals))
        failed = status >= 400
        done = outcome.progress.completed or self.step_count >= self._spec.card.max_steps
        info: dict[str, Any] = {"reward_signals": list(outcome.signals)}
        if done:  # the final observation reports the end state (computed once, here)
            info["outcome"] = episode_outcome(self._spec, self._services)
        return self._observation_fields(
            api_response=api_response(status, body),
            success=not failed,
            error_message=body.get("error") if failed else None,
            reward=outcome.reward,
            done=done,
            info=info,
        )

    def _apply_with_faults(
        self, action: ServiceBenchAction, faults: FaultyServices
    ) -> ObservationFields:
        """One call under the fault schedule: a fault answer is graded nothing; an answer
        that reveals timed-out writes grades them first (faults/calls.py)."""
        assert self._spec is not None
        params = dict(action.params)
        answer = faults.call(
            self.step_count, action.service, action.endpoint, action.method, params
        )
        self._services = faults.services
        call = ApiCall.of(action.service, action.endpoint, action.method, params)
        progress, signals = self._graded(call, answer)
        done = progress.completed or self.step_count >= self.step_budget
        if done:  # the end: writes the agent never saw are graded now
            progress, signals = self._folded(progress, signals, faults.reveal_all())
        reward = round(progress.score - self._progress.score, 6)
        self._progress = progress
        self._calls.append((self.step_count, call[:3], answer.status, reward, signals))
        failed = answer.status >= 400
        info: dict[str, Any] = {
            "reward_signals": list(signals),
            "faults_injected": faults.visible_count(),
        }
        if done:
            info["outcome"] = episode_outcome(self._spec, self._services)
            info["faults"] = faults.summary()
            info["faults_injected"] = len(faults.records)
        return self._observation_fields(
            api_response=answer.response,
            success=not failed,
            error_message=answer.body.get("error") if failed else None,
            reward=reward,
            done=done,
            info=info,
        )

    def _graded(self, call: ApiCall, answer: Answer) -> tuple[Progress, tuple[str, ...]]:
        """The progress after one answer, and the rows it triggered (none for a fault)."""
        assert self._spec is not None
        if answer.fault is not None:
            return self._progress, ()
        progress, signals = self._folded(self._progress, (), answer.revealed)
        graded = score_call(
            self._spec,
            progress,
            call,
            answer.status,
            answer.body,
            free=answer.free,
            replayed=answer.replayed,
        )
        return graded.progress, (*signals, *graded.signals)

    def _folded(
        self,
        progress: Progress,
        signals: tuple[str, ...],
        writes: list[tuple[ApiCall, dict[str, Any]]],
    ) -> tuple[Progress, tuple[str, ...]]:
        """`progress` after grading timed-out writes that were applied, as made now (their
        answers are the ones the service gave); the call that revealed them, if any, is
        graded after them and decides completion."""
        assert self._spec is not None
        for write, body in writes:
            graded = score_call(self._spec, progress, write, 200, body, defer_completion=True)
            progress, signals = graded.progress, (*signals, *graded.signals)
        return progress, signals

    @property
    def state(self) -> ServiceBenchState:
        history = [
            CallRecord(
                step=step,
                service=service,
                endpoint=endpoint,
                method=method,
                params=json.loads(self.entries[step - 1])["params"],
                status_code=status,
                reward=reward,
                signals=list(signals),
            )
            for step, (service, endpoint, method), status, reward, signals in self._calls
        ]
        return ServiceBenchState(
            **self._state_fields(),
            cumulative_reward=self._progress.score,
            task_description=self._spec.card.description if self._spec else "",
            task_completed=self._progress.completed,
            milestones=list(self._progress.milestones),
            penalty_balance=self._progress.penalty_balance,
            outcome=EpisodeOutcome.model_validate(episode_outcome(self._spec, self._services))
            if self._spec and self.done
            else None,  # before the end it would show the answer (the expected end state)
            call_history=history,
            fault_level=self.fault_level if self._faults is not None else None,
            faults=self._faults.shown(self.done) if self._faults is not None else None,
        )
