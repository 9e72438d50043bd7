"""The Support Queue environment: triage a task's tickets one per step.

Each step grades the current ticket (server/support_queue/grader.py) and moves
to the next; the episode is done after the last ticket. Rewards:

* observation `reward`: the graded ticket's reward, in [0, 1];
* `cumulative_reward` (observation and state): the running SUM of ticket rewards,
  as the seed names it, so it grows up to the number of tickets;
* episode score (`score`, the state's `average_reward`, `info["average_reward"]`):
  the mean reward over the tickets graded so far, over all tickets once done, in [0, 1].

Seeds: `reset(task_id)` or `reset(task_id, seed=0)` plays the canonical task of
data/support_tickets.json; any other seed plays that task's generated variant
(server/support_queue/variants.py), proven by server/support_queue/proof.py before it
is served and then shared through the environment's bounded cache (server/variants.py).
The same (task, seed) is the same episode in any process.

An episode keeps only a reference to the shared immutable variant (its tickets and
their compiled facts), a cursor, its own actions and one float per graded ticket, so
`reset` and `step` are cheap and an idle episode is a few hundred bytes. The state's
grading history is rebuilt from the actions on request: the grader is deterministic.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ...models import SupportQueueAction, SupportQueueObservation, SupportQueueState, TaskCard
from ..episode import EpisodeEnvironment, ObservationFields
from .grader import CANONICAL_FACTS, DECIMALS, SCORING_WEIGHTS, TicketFacts, grade
from .proof import ProvenVariant, prove
from .tasks import ENV_NAME, TASK_CARDS, TASKS, CanonicalTicket, SupportTask
from .variants import build_variant

CANONICAL_VARIANTS: Mapping[str, ProvenVariant] = MappingProxyType(
    {
        task.card.id: ProvenVariant(
            task_id=task.card.id,
            seed=None,
            attempt=0,
            task=task,
            facts=CANONICAL_FACTS[task.card.id],
        )
        for task in TASKS
    }
)


class SupportQueueEnvironment(
    EpisodeEnvironment[SupportQueueAction, SupportQueueObservation, SupportQueueState]
):
    """SaaS support triage: priority, queue, disposition, summary and first reply per ticket."""

    env_name = ENV_NAME
    action_cls = SupportQueueAction
    observation_cls = SupportQueueObservation
    state_cls = SupportQueueState
    description = (
        "Support Queue: triage SaaS support tickets. For each ticket choose a priority "
        "(P1-P4), a queue and a disposition, write an internal summary and a safe first "
        "reply; graded per ticket on labels, fact coverage and reply safety."
    )
    tasks = TASK_CARDS
    draw_variant = staticmethod(build_variant)
    prove_variant = staticmethod(prove)

    @classmethod
    def canonical_variant(cls, task_id: str) -> ProvenVariant:
        return CANONICAL_VARIANTS[task_id]

    def __init__(self) -> None:
        super().__init__()
        self._variant: ProvenVariant | None = None
        self._task: SupportTask | None = None
        self._cursor = 0
        self._actions: list[SupportQueueAction] = []
        self._rewards: list[float] = []

    # ------------------------------------------------------------------ scores

    @property
    def cumulative_reward(self) -> float:
        return round(sum(self._rewards), DECIMALS)

    @property
    def score(self) -> float:
        if not self._rewards:
            return 0.0
        return round(sum(self._rewards) / len(self._rewards), DECIMALS)

    # --------------------------------------------------------------- lifecycle

    def fork(self) -> SupportQueueEnvironment:
        """An independent copy: the variant is shared and frozen, the graded so far copied."""
        twin = copy.copy(self)
        twin._actions = list(self._actions)
        twin._rewards = list(self._rewards)
        return twin

    def _start(self, card: TaskCard, variant: ProvenVariant) -> ObservationFields:
        self._variant = variant
        self._task = variant.task
        self._cursor = 0
        self._actions = []
        self._rewards = []
        return self._observation_fields(reward=0.0, last_feedback=None, info={})

    def _apply(self, action: SupportQueueAction) -> ObservationFields:
        task = self._require_task()
        ticket = task.tickets[self._cursor]
        ticket_grade = grade(ticket, action, self._facts(ticket))
        self._actions.append(action.model_copy())  # the caller may reuse its object
        self._rewards.append(ticket_grade.reward)
        self._cursor += 1
        return self._observation_fields(
            reward=ticket_grade.reward,
            last_feedback=ticket_grade.model_dump(),
            info={"graded_ticket_id": ticket.ticket_id},
        )

    # ------------------------------------------------------------ observations

    def _require_task(self) -> SupportTask:
        if self._task is None:
            raise RuntimeError("support queue episode used before reset")
        return self._task

    def _observation_fields(
        self, reward: float, last_feedback: dict[str, Any] | None, info: dict[str, Any]
    ) -> ObservationFields:
        task = self._require_task()
        done = self._cursor >= len(task.tickets)
        return dict(
            task_title=task.card.title,
            difficulty=task.card.difficulty,
            instructions=task.instructions,
            current_index=self._cursor,
            total_tickets=len(task.tickets),
            ticket=None if done else task.tickets[self._cursor].public_ticket(),
            scoring_weights=dict(SCORING_WEIGHTS),
            last_feedback=last_feedback,
            reward=reward,
            cumulative_reward=self.cumulative_reward,
            done=done,
            info={**info, "average_reward": self.score, "tickets_graded": len(self._rewards)},
        )

    def _facts(self, ticket: CanonicalTicket) -> TicketFacts | None:
        return self._variant.facts[ticket.ticket_id] if self._variant else None

    def _graded(self) -> list[tuple[CanonicalTicket, SupportQueueAction]]:
        task = self._task
        # strict=False: the tickets still to come have no action yet
        return list(zip(task.tickets, self._actions, strict=False)) if task else []

    @property
    def state(self) -> SupportQueueState:
        task = self._task
        graded = self._graded()
        return SupportQueueState(
            **self._state_fields(),
            cumulative_reward=self.cumulative_reward,
            current_index=self._cursor,
            total_tickets=len(task.tickets) if task else 0,
            average_reward=self.score,
            processed_ticket_ids=[ticket.ticket_id for ticket, _ in graded],
            action_history=[
                {
                    "step": i,
                    "ticket_id": ticket.ticket_id,
                    **action.model_dump(exclude={"metadata"}),
                }
                for i, (ticket, action) in enumerate(graded, start=1)
            ],
            grading_history=[
                grade(ticket, action, self._facts(ticket)).model_dump() for ticket, action in graded
            ],
        )
