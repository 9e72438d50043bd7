"""The Support Queue environment: triage a task's tickets one per step.

Each step grades the current ticket (server/support_queue/grader.py) and moves
to the next; the episode is done after the last ticket. Rewards:

* `cumulative_reward` (observation and state): the running SUM of ticket rewards,
  as the seed names it, so it grows up to the number of tickets;
* episode score (`score`, the state's `average_reward`, `info["average_reward"]`):
  `cumulative_reward` over the tickets graded so far (over all once done), in [0, 1];
* observation `reward`: the change of `cumulative_reward` the step made.

Penalty carry, as ServiceBench carries its penalties (server/servicebench/grading/rewards.py): the
balance is the sum of the tickets' unclamped totals (`raw_total`: labels + coverage - the
unsafe-reply penalty, in [-0.10, 1.0]); `cumulative_reward` is `max(0, balance)`. A ticket
graded alone is clamped to [0, 1] (its grading's `reward`, the seed's ticket reward), but
an unsafe reply on a ticket that earns less than the penalty is not lost in that clamp: the
step's reward is negative (down to -0.10) or, at 0, the penalty stays as a debt
(`penalty_balance`) that later tickets' gains repay first. Every unsafe reply lowers the
final score by 0.10 / tickets unless the episode ends at 0.

Seeds: `reset(task_id)` or `reset(task_id, seed=0)` plays the canonical task of
data/support_tickets.json; any other seed plays that task's generated variant
(server/support_queue/variants.py), proven by server/support_queue/proof.py before it
is served and then shared through the environment's bounded cache (server/tasks/variants.py).
The same (task, seed) is the same episode in any process. `reset(split=..., index=...)`
plays one ticket of one scenario family instead (the Task API's splits:
server/tasks/splits.py, server/support_queue/family_tasks.py).

An episode keeps only a reference to the shared immutable variant (its tickets and
their compiled facts), a cursor, its actions as JSON (the base class's entries) and one
float per graded ticket, so
`reset` and `step` are cheap and an idle episode is a few hundred bytes. The state's
grading history is rebuilt from the actions on request: the grader is deterministic.

No answer before it is due: the gold labels, rationale, gold texts and unsafe notes are
never served (a grade says whether a label was right, not what the gold one is), and a
ticket's facts are named (the grade's `matched`, `missing` and `off_topic` lists) only
once it is graded. A grade names the facts of its own ticket and those of the task's
other tickets that the text mentioned (`off_topic`); some facts belong to several
tickets ("sla breached"). So, until the episode is done, the feedback and the state's
grading history show `WITHHELD` in place of any fact name that is also a fact of a
ticket still to come (by the grader's normalised phrasings), and name it once every
ticket it belongs to is graded.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ...models import SupportQueueAction, SupportQueueObservation, SupportQueueState, TaskCard
from ..lifecycle.episode import EpisodeEnvironment, ObservationFields
from ..tasks.splits import Family
from .grader import DECIMALS, SCORING_WEIGHTS, TicketGrade, grade
from .proof import ProvenVariant, prove
from .split_families import registry_families
from .tasks import ENV_NAME, TASK_CARDS, TASKS, CanonicalTicket, SupportTask
from .text import CANONICAL_FACTS, TicketFacts
from .text.safety.rules import compiled
from .variants import build_family_variant, build_variant
from .word_count_api import install as install_word_count

WITHHELD = "(withheld until the episode is done: also a fact of a ticket still to come)"
FACT_LISTS = ("matched", "missing", "off_topic")
"""The lists of fact names in a text component's grade."""

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
    max_action_bytes = 16 * 1024
    """A triage decision's JSON: room for both texts at their character limit (4,000 each) in
    two-byte characters."""
    draw_variant = staticmethod(build_variant)
    draw_family_variant = staticmethod(build_family_variant)
    prove_variant = staticmethod(prove)

    @classmethod
    def install_routes(cls, app: Any) -> None:
        install_word_count(app)

    @classmethod
    def warm(cls) -> None:
        """Load the safety rules (their word classes, frames and index: about half a second of
        CPU) off the start path; grading loads them on first use when nothing warmed them
        (text/safety/rules.py `compiled`). Each frame's pattern compiles when a reply first
        reaches it (text/safety/frames.py `LazyPattern`)."""
        compiled()

    @classmethod
    def canonical_variant(cls, task_id: str) -> ProvenVariant:
        return CANONICAL_VARIANTS[task_id]

    @classmethod
    def task_families(cls) -> tuple[Family, ...]:
        return registry_families()

    def __init__(self) -> None:
        super().__init__()
        self._variant: ProvenVariant | None = None
        self._task: SupportTask | None = None
        self._cursor = 0
        self._totals: list[float] = []  # each graded ticket's raw_total, penalty included

    # ------------------------------------------------------------------ scores

    @property
    def _balance(self) -> float:
        return round(sum(self._totals), DECIMALS)

    @property
    def cumulative_reward(self) -> float:
        return max(0.0, self._balance)

    @property
    def penalty_balance(self) -> float:
        """Penalties taken while the episode's sum was 0, still to be repaid."""
        return max(0.0, -self._balance)

    @property
    def score(self) -> float:
        if not self._totals:
            return 0.0
        return round(self.cumulative_reward / len(self._totals), DECIMALS)

    # --------------------------------------------------------------- lifecycle

    def fork(self) -> SupportQueueEnvironment:
        """An independent copy: the variant is shared and frozen, the graded so far copied."""
        twin = copy.copy(self)
        twin._totals = list(self._totals)
        return twin

    def _start(self, card: TaskCard, variant: ProvenVariant) -> ObservationFields:
        self._variant = variant
        self._task = variant.task
        self._cursor = 0
        self._totals = []
        return self._observation_fields(reward=0.0, last_feedback=None, info={})

    def _apply(self, action: SupportQueueAction) -> ObservationFields:
        task = self._require_task()
        ticket = task.tickets[self._cursor]
        ticket_grade = grade(ticket, action, self._facts(ticket))
        before = self.cumulative_reward
        self._totals.append(ticket_grade.raw_total)
        self._cursor += 1
        return self._observation_fields(
            reward=round(self.cumulative_reward - before, DECIMALS),
            last_feedback=self._served(ticket_grade, self._withheld()),
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
            info={**info, "average_reward": self.score, "tickets_graded": len(self._totals)},
        )

    def _facts(self, ticket: CanonicalTicket) -> TicketFacts | None:
        return self._variant.facts[ticket.ticket_id] if self._variant else None

    def _withheld(self) -> frozenset[str]:
        """Names of the facts that are also facts of a ticket still to come (by the grader's
        normalised phrasings): none once the episode is done."""
        task, variant = self._task, self._variant
        if task is None or variant is None or self._cursor >= len(task.tickets):
            return frozenset()
        to_come = {
            phrasing
            for ticket in task.tickets[self._cursor :]
            for facts in variant.facts[ticket.ticket_id].own.values()
            for fact in facts
            for phrasing in fact.phrasings
        }
        return frozenset(
            fact.name
            for ticket_facts in variant.facts.values()
            for facts in ticket_facts.own.values()
            for fact in facts
            if not to_come.isdisjoint(fact.phrasings)
        )

    @staticmethod
    def _served(ticket_grade: TicketGrade, withheld: frozenset[str]) -> dict[str, Any]:
        """A grade as served: the `withheld` fact names replaced by `WITHHELD`."""
        served = ticket_grade.model_dump()
        if withheld:
            for component in ("summary", "response"):
                scores = served[component]
                for key in FACT_LISTS:
                    scores[key] = [WITHHELD if name in withheld else name for name in scores[key]]
        return served

    def _graded(self) -> list[tuple[CanonicalTicket, SupportQueueAction]]:
        """Each graded ticket and its action, read back from the episode's action entries."""
        task = self._task
        actions = [SupportQueueAction.model_validate_json(entry) for entry in self.entries]
        # strict=False: the tickets still to come have no action yet
        return list(zip(task.tickets, actions, strict=False)) if task else []

    @property
    def state(self) -> SupportQueueState:
        task = self._task
        graded = self._graded()
        withheld = self._withheld()
        return SupportQueueState(
            **self._state_fields(),
            cumulative_reward=self.cumulative_reward,
            current_index=self._cursor,
            total_tickets=len(task.tickets) if task else 0,
            average_reward=self.score,
            penalty_balance=self.penalty_balance,
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
                self._served(grade(ticket, action, self._facts(ticket)), withheld)
                for ticket, action in graded
            ],
        )
