"""The ServiceBench environment: an agent resolves customer requests by calling
three in-process backend services, one API call per step.

An episode is a fresh copy-on-write `ServiceState` over the shared seed data, the
task's spec and the reward progress; `reset` and `step` therefore cost microseconds
and an idle episode a few hundred bytes.

Observation shape of `api_response` (one shape for every call):
* success: ``{"status_code": 200, "data": {...the endpoint's response...}}``
* failure: ``{"status_code": 400|404|405|409, "error": "what was wrong"}``, with
  ``success: false`` and the same text in ``error_message``.
The first observation (after reset) has ``api_response == {}``: no call was made yet.
``info["reward_signals"]`` lists the reward-table rows the last call triggered; the
final observation's ``info["outcome"]`` is the end-state check of
server/servicebench/outcome.py (also in the state at any time, as ``outcome``).

Variants: `reset(task_id)` or `reset(task_id, seed=0)` plays the canonical task of the
seed documents; any other seed plays a generated variant of the task (its own users,
orders, SKUs, prices, coupons and prompt; see server/servicebench/variants.py and the
seed ranges in server/seeds.py). The environment's variant cache (server/variants.py)
hands out only variants proven solvable and uniquely graded by
server/servicebench/proof.py, which plays the oracle against this very class: the
class passes itself to the proof, so imports still run one way. An episode holds its
variant's shared, frozen world and spec plus its own small overlay.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ...mock_services import ENDPOINT_CATALOGUE, ServiceState
from ...models import (
    CallRecord,
    EpisodeOutcome,
    ServiceBenchAction,
    ServiceBenchObservation,
    ServiceBenchState,
    TaskCard,
)
from ..episode import EpisodeEnvironment, ObservationFields
from .outcome import episode_outcome
from .proof import prove
from .rewards import ApiCall, Progress, score_call
from .tasks import ENV_NAME, TASK_CARDS, TASK_SPECS, TaskSpec
from .variants import Variant, build_variant, canonical_variant

CallEntry = tuple[int, ApiCall, int, float, tuple[str, ...]]
CANONICAL_VARIANTS: Mapping[str, Variant] = MappingProxyType(
    {task_id: canonical_variant(task_id) for task_id in TASK_SPECS}
)


def api_response(status: int, body: dict[str, Any]) -> dict[str, Any]:
    """The observation's `api_response`: the status code plus `data` or `error`."""
    if status < 400:
        return {"status_code": status, "data": body}
    return {"status_code": status, "error": body.get("error", "request failed")}


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
    draw_variant = staticmethod(build_variant)

    def __init__(self) -> None:
        super().__init__()
        self._spec: TaskSpec | None = None
        self._services = ServiceState()
        self._progress = Progress()
        self._calls: list[CallEntry] = []

    @classmethod
    def prove_variant(cls, drawn: Variant) -> Variant:
        """Served once the oracle, playing it on this very environment, proves it."""
        prove(drawn, cls)
        return drawn

    @classmethod
    def canonical_variant(cls, task_id: str) -> Variant:
        return CANONICAL_VARIANTS[task_id]

    @property
    def score(self) -> float:
        return self._progress.score

    def _observation_fields(self, **fields: Any) -> ObservationFields:
        assert self._spec is not None
        fields.update(
            task_description=self._spec.card.description,
            available_endpoints=ENDPOINT_CATALOGUE,
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
        return twin

    def _start(self, card: TaskCard, variant: Variant) -> ObservationFields:
        self.task = variant.spec.card
        self._spec = variant.spec
        self._services = ServiceState(variant.world)
        self._progress = Progress()
        self._calls = []
        return self._observation_fields(api_response={}, success=True, reward=0.0, done=False)

    def _apply(self, action: ServiceBenchAction) -> ObservationFields:
        assert self._spec is not None
        params = dict(action.params)
        status, body = self._services.dispatch(
            action.service, action.endpoint, action.method, params
        )
        call = ApiCall.of(action.service, action.endpoint, action.method, params)
        outcome = score_call(self._spec, self._progress, call, status, body)
        self._progress = outcome.progress
        self._calls.append((self.step_count, call, status, outcome.reward, outcome.signals))
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

    @property
    def state(self) -> ServiceBenchState:
        history = [
            CallRecord(
                step=step,
                service=call.service,
                endpoint=call.endpoint,
                method=call.method,
                params=dict(call.params),
                status_code=status,
                reward=reward,
                signals=list(signals),
            )
            for step, call, status, reward, signals in self._calls
        ]
        return ServiceBenchState(
            **self._state_fields(),
            cumulative_reward=self._progress.score,
            task_description=self._spec.card.description if self._spec else "",
            task_completed=self._progress.completed,
            milestones=list(self._progress.milestones),
            penalty_balance=self._progress.penalty_balance,
            outcome=EpisodeOutcome.model_validate(episode_outcome(self._spec, self._services))
            if self._spec
            else EpisodeOutcome(),
            call_history=history,
        )
