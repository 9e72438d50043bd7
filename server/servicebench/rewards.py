"""ServiceBench reward shaping: the seed's reward tables, as a pure function.

`score_call(spec, progress, call, status, body)` judges one API call from the task,
the episode's progress so far, the call and the service's response, and returns the
new progress, the reward and the table rows (signal names) the call triggered.
It touches nothing else, so every row is unit-testable without an environment.
The tables, and the bounds they imply, are data: server/servicebench/reward_table.py;
what each milestone and outcome row checks is server/servicebench/milestones.py.

How the tables are read (each optimal path sums to exactly 1.00, and nothing more
can be earned):
* Identity. Calls are compared as resolved calls (server/servicebench/calls): the
  endpoint and the record it resolved to, whatever the spelling of the id (`ord-1005`,
  `" ORD-1005"`), and for a write its effect without free text (a refund's reason, a
  note's wording). The same resolved call again earns -0.10 and no other row of its own.
* A call to an endpoint that does not bear on the task (servicebench_tasks), or a
  successful write the task does not intend (another order or user, another status, a
  user field other than the task's `note_fields`), earns -0.05 only.
* A failed call (4xx) earns nothing more.
* A successful call about the task's entities earns the milestones its answer reaches
  (each once, in table order, so the task-3 composite sees the checks made by the same
  call) and its penalties; if neither, +0.05 base progress (tasks 2 and 3) while the
  task's base-progress allowance lasts: the table's slack, 0.05, one call (see the
  table module). Task 1 pays +0.15 once for its first such call.
* Outcome rows follow the world. The rows for the task's writes are held while the world
  holds them: the episode's refunds on the task's order total the derived amount (within
  $0.01), the order has the target status. Reaching that state pays the row; leaving it
  takes the row back (`<row>_undone`), whichever call did it, a duplicate included. The
  task is complete when every completion row is held, i.e. exactly when the world holds
  the task's intended writes. A wrong refund followed by the right amount over-refunds
  the order: the total is wrong, and the task cannot complete any more.
* A refund on the task's order is a wrong amount when the episode's refunds on the order
  then total anything but the derived amount, or when the right total was already held.
* Task 3's order_data_retrieved needs the order's lookup to show the fields the root
  cause depends on (`spec.order_evidence`: items and the coupon, or items alone for a
  stale price), and inventory_prices_verified an answer from one of `spec.price_evidence`
  about a SKU of the order (lookup for list prices, price-history for a stale price).
* When the completion rows are all held, the task's bonuses are paid once.
* Score and penalty carry. `balance` is the running sum of every row the episode
  triggered; the score is `max(0, balance)`, and each step's reward is the change of the
  score, so rewards sum to the final score. A penalty taken at 0 stays in the balance
  as a debt that later gains repay first: every penalty lowers the final score by its
  full value unless the score ends at 0. The balance is also capped at 1.0, which the
  allowance makes unreachable from below (gains total at most 1.0), so the cap can
  never swallow a later penalty.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from ...mock_services import ENDPOINTS, normalize_id, to_cents
from ...mock_services.paths import (
    ORDERS_BY_USER,
    ORDERS_LOOKUP,
    ORDERS_PROCESS_REFUND,
    ORDERS_UPDATE_STATUS,
    USERS_LOOKUP,
    USERS_UPDATE,
)
from .calls import ApiCall, Body, CallKey, call_identity
from .milestones import MILESTONES, OUTCOMES
from .outcome import refund_total_matches
from .reward_table import (
    BASE_ALLOWANCE,
    BONUS_RULES,
    REWARD_TABLE,
    SCORE_DIGITS,
    UNDONE,
)
from .tasks import TaskSpec

__all__ = ["ApiCall", "Progress", "StepOutcome", "REWARD_TABLE", "is_on_target", "score_call"]

WRITE_ENDPOINTS: frozenset[tuple[str, str]] = frozenset(
    (entry.service, entry.path) for entry in ENDPOINTS if entry.method != "GET"
)
REFUND_ROWS = ("correct_refund_issued", "correct_adjustment_issued")


class Progress(NamedTuple):
    """What an episode has earned so far, and the task order's state; small and immutable."""

    step: int = 0
    score: float = 0.0
    balance: float = 0.0
    """Every row's value summed (capped at 1.0): below 0 it is a debt of penalties."""
    milestones: tuple[str, ...] = ()
    seen_calls: frozenset[CallKey] = frozenset()
    first_correct_paid: bool = False
    base_paid: float = 0.0
    wrong_refund_issued: bool = False
    completed: bool = False
    refunded_cents: int = 0
    """Refunded on the task's order in this episode, from the services' answers."""
    order_status: str | None = None
    """The status this episode last set on the task's order (None: untouched)."""

    @property
    def penalty_balance(self) -> float:
        """Penalties carried while the score was 0, still to be repaid."""
        return round(-self.balance, SCORE_DIGITS) if self.balance < 0 else 0.0


class StepOutcome(NamedTuple):
    progress: Progress
    reward: float
    signals: tuple[str, ...]


def _milestones_by_endpoint(table: Mapping[str, float]) -> Mapping[str, tuple[str, ...]]:
    """For one task: which of its milestone rows a call to each endpoint may reach, in table order."""
    rows = [name for name in table if name in MILESTONES]
    return MappingProxyType(
        {
            entry.path: tuple(
                name
                for name in rows
                if not MILESTONES[name].endpoints or entry.path in MILESTONES[name].endpoints
            )
            for entry in ENDPOINTS
        }
    )


MILESTONES_BY_ENDPOINT: Mapping[str, Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {task_id: _milestones_by_endpoint(table) for task_id, table in REWARD_TABLE.items()}
)
"""Task -> endpoint -> the milestone rows to check after a successful call to it."""
OUTCOMES_BY_TASK: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        task_id: tuple(name for name in table if name in OUTCOMES)
        for task_id, table in REWARD_TABLE.items()
    }
)


def is_on_target(spec: TaskSpec, call: ApiCall, body: Body) -> bool:
    """Whether a successful call is about the task's customer, order or its items, and a
    write among them one the task intends."""
    endpoint = call.endpoint
    if endpoint in (USERS_LOOKUP, ORDERS_BY_USER):
        return body.get("user_id") == spec.customer_id
    if endpoint == USERS_UPDATE:
        return body["user"]["user_id"] == spec.customer_id and all(
            name in spec.note_fields for name in body["updated_fields"]
        )
    if endpoint in (ORDERS_LOOKUP, ORDERS_PROCESS_REFUND):
        return body.get("order_id") == spec.order_id
    if endpoint == ORDERS_UPDATE_STATUS:
        return body.get("order_id") == spec.order_id and body.get("status") == spec.target_status
    sku = body.get("sku")
    return sku is not None and normalize_id(sku) in spec.order_skus


def _order_state(
    spec: TaskSpec, progress: Progress, call: ApiCall, status: int, body: Body
) -> tuple[int, str | None]:
    """The task order's (refunded in this episode, status set) after this call."""
    refunded, order_status = progress.refunded_cents, progress.order_status
    if status == 200 and body.get("order_id") == spec.order_id:
        if call.endpoint == ORDERS_PROCESS_REFUND:
            refunded += to_cents(body["refund"]["amount"])
        elif call.endpoint == ORDERS_UPDATE_STATUS:
            order_status = body["status"]
    return refunded, order_status


def _penalties(
    spec: TaskSpec, table: Mapping[str, float], progress: Progress, call: ApiCall, refunded: int
) -> list[str]:
    """Penalty rows of an on-target refund (`refunded`: the total after it)."""
    if call.endpoint != ORDERS_PROCESS_REFUND:
        return []
    found: list[str] = []
    already_right = any(name in progress.milestones for name in REFUND_ROWS)
    if already_right or not refund_total_matches(spec, refunded):
        found.append("wrong_refund_amount")
    if (
        "refund_before_eligibility" in table
        and "return_eligibility_confirmed" not in progress.milestones
    ):
        found.append("refund_before_eligibility")
    return found


def _bonuses(spec: TaskSpec, step: int, wrong_refund_issued: bool) -> list[str]:
    return [
        rule.signal
        for rule in BONUS_RULES[spec.card.id]
        if rule.min_steps <= step <= (rule.max_steps or step)
        and not (rule.needs_no_wrong_refund and wrong_refund_issued)
    ]


def _follow_outcomes(
    spec: TaskSpec,
    milestones: tuple[str, ...],
    refunded: int,
    order_status: str | None,
    signals: list[str],
) -> tuple[str, ...]:
    """Pay the outcome rows the world now holds, take back those it no longer holds."""
    for name in OUTCOMES_BY_TASK[spec.card.id]:
        held = name in milestones
        if OUTCOMES[name](spec, refunded, order_status) is not held:
            if held:
                milestones = tuple(reached for reached in milestones if reached != name)
                signals.append(name + UNDONE)
            else:
                milestones += (name,)
                signals.append(name)
    return milestones


def score_call(
    spec: TaskSpec, progress: Progress, call: ApiCall, status: int, body: Body
) -> StepOutcome:
    """Judge one call; return the new progress, the reward and the rows it triggered."""
    task_id = spec.card.id
    table = REWARD_TABLE[task_id]
    key = call_identity(call, status, body)
    refunded, order_status = _order_state(spec, progress, call, status, body)
    signals: list[str] = []
    milestones = progress.milestones
    first_correct_paid, base_paid = progress.first_correct_paid, progress.base_paid
    judged = False
    if key in progress.seen_calls:
        signals.append("duplicate_call")
    elif call.route not in spec.relevant_endpoints:
        signals.append("irrelevant_endpoint")
    elif status == 200 and not is_on_target(spec, call, body):
        if call.route in WRITE_ENDPOINTS:
            signals.append("irrelevant_endpoint")
    elif status == 200:
        judged = True
        signals += _penalties(spec, table, progress, call, refunded)
        for name in MILESTONES_BY_ENDPOINT[task_id][call.endpoint]:
            if name not in milestones and MILESTONES[name].check(spec, call, body, milestones):
                milestones += (name,)
                signals.append(name)
    if refunded != progress.refunded_cents or order_status != progress.order_status:
        milestones = _follow_outcomes(spec, milestones, refunded, order_status, signals)
    if judged:
        if (
            not signals
            and "base_progress" in table
            and (base_paid + table["base_progress"] <= BASE_ALLOWANCE[task_id] + 1e-9)
        ):
            signals.append("base_progress")
            base_paid = round(base_paid + table["base_progress"], SCORE_DIGITS)
        if "first_correct_call" in table and not first_correct_paid:
            signals.append("first_correct_call")
            first_correct_paid = True
    wrong_refund_issued = progress.wrong_refund_issued or "wrong_refund_amount" in signals
    step = progress.step + 1
    completed = progress.completed or (  # only a newly held row can complete the task
        milestones is not progress.milestones
        and all(name in milestones for name in spec.completion)
    )
    if completed and not progress.completed:
        signals += _bonuses(spec, step, wrong_refund_issued)
    balance = round(
        min(1.0, progress.balance + sum([table[name] for name in signals])), SCORE_DIGITS
    )
    score = balance if balance > 0.0 else 0.0
    new_progress = Progress(
        step=step,
        score=score,
        balance=balance,
        milestones=milestones,
        seen_calls=progress.seen_calls | {key},
        first_correct_paid=first_correct_paid,
        base_paid=base_paid,
        wrong_refund_issued=wrong_refund_issued,
        completed=completed,
        refunded_cents=refunded,
        order_status=order_status,
    )
    return StepOutcome(new_progress, round(score - progress.score, SCORE_DIGITS), tuple(signals))
