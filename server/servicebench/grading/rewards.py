"""ServiceBench reward shaping: the seed's reward tables, as a pure function.

`score_call(spec, progress, call, status, body)` judges one API call from the task,
the episode's progress so far, the call and the service's response, and returns the
new progress, the reward and the table rows (signal names) the call triggered.
It touches nothing else, so every row is unit-testable without an environment.
The tables, and the bounds they imply, are data: server/servicebench/grading/reward_table.py;
what each milestone and outcome row checks is server/servicebench/grading/milestones.py.

How the tables are read (each optimal path sums to exactly 1.00, and nothing more
can be earned):
* Identity. Calls are compared as resolved calls (server/servicebench/calls): the
  endpoint and the record it resolved to, whatever the spelling of the id (`ord-1005`,
  `" ORD-1005"`), and for a write its effect without free text (a refund's reason, a
  note's wording). The same resolved call again earns -0.10 and no other row of its own.
* A call to an endpoint that does not bear on the task (servicebench_tasks) earns -0.05
  only; so does, under a seed task's table, a successful write the task does not intend
  (another order or user, another status, a user field other than the task's
  `note_fields`). Under a family's table such a write breaks the served policy: it earns
  `unintended_write` (-0.20) only. A write is intended when each of its effects
  (effects.py) is one of the task's intended writes (`spec.expected`), with the intended
  value for a set (a status, an address); an amount is judged by the outcome rows.
* A failed call (4xx) earns nothing more.
* A successful call about the task's entities earns the milestones its answer reaches
  (each once, in table order, so the task-3 composite sees the checks made by the same
  call) and its penalties; if neither, +0.05 base progress (tasks 2 and 3) while the
  task's base-progress allowance lasts: the table's slack, 0.05, one call (see the
  table module). Task 1 pays +0.15 once for its first such call.
* Outcome rows follow the world. The rows for the task's writes are held while the
  effects of the episode's writes hold them (`outcome_held`): the episode's refunds on the
  task's order total exactly the derived amount (to the cent), the order has the target status,
  the units are back in stock, one case holds the amount at stake. Reaching that state
  pays the row; leaving it takes the row back (`<row>_undone`), whichever call did it, a
  duplicate included. The task is complete when every completion row is held, i.e.
  exactly when the world holds the task's intended writes. A wrong refund followed by the
  right amount over-refunds the order: the total is wrong, and the task cannot complete.
* An intended write that adds up (a refund, a stock adjustment, a reship) is a wrong
  amount (`wrong_refund_amount` / `wrong_amount`) when its total then misses the intended
  one, or when the intended total was already held. Under a family's table an intended
  write made before the requester and the order were checked (the table's
  `requester_verified` and `order_checked`) also earns `write_before_verification`.
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

from ....mock_services import ENDPOINTS, normalize_id
from ....mock_services.paths import (
    CASES_BY_ORDER,
    ORDERS_BY_USER,
    ORDERS_LOOKUP,
    ORDERS_PROCESS_REFUND,
    PAYMENTS_BY_ORDER,
    SHIPMENTS_BY_ORDER,
    USERS_LOOKUP,
)
from ..spec import TaskSpec
from .calls import ApiCall, Body, CallKey, call_identity
from .effects import ADDITIVE_KINDS, NO_EFFECTS, Effect, Effects, accumulate, effects_of_answer
from .milestones import MILESTONES, outcome_held
from .outcome import expectation_met
from .reward_table import (
    BASE_ALLOWANCE,
    BONUS_RULES,
    OUTCOME_ROWS,
    REWARD_TABLE,
    SCORE_DIGITS,
    UNDONE,
    VERIFICATION_ROWS,
)

__all__ = ["ApiCall", "Progress", "StepOutcome", "REWARD_TABLE", "is_on_target", "score_call"]

WRITE_ENDPOINTS: frozenset[tuple[str, str]] = frozenset(
    (entry.service, entry.path) for entry in ENDPOINTS if entry.method != "GET"
)
ABOUT_USER = frozenset({USERS_LOOKUP, ORDERS_BY_USER})
ABOUT_ORDER = frozenset({ORDERS_LOOKUP, SHIPMENTS_BY_ORDER, PAYMENTS_BY_ORDER, CASES_BY_ORDER})
VIOLATIONS = frozenset({"unintended_write", "wrong_amount", "write_before_verification"})
"""Rows that break the served policy: a family's `policy_followed` bonus needs none."""


class Progress(NamedTuple):
    """What an episode has earned so far, and what its writes did; small and immutable."""

    step: int = 0
    score: float = 0.0
    balance: float = 0.0
    """Every row's value summed (capped at 1.0): below 0 it is a debt of penalties."""
    milestones: tuple[str, ...] = ()
    seen_calls: frozenset[CallKey] = frozenset()
    first_correct_paid: bool = False
    base_paid: float = 0.0
    wrong_refund_issued: bool = False
    policy_violated: bool = False
    completed: bool = False
    effects: Effects = NO_EFFECTS
    """What the episode's successful writes did (effects.py), from the services' answers."""
    completion_pending: bool = False
    """A revealed write's rows changed, and the call that revealed it decides completion."""

    @property
    def penalty_balance(self) -> float:
        """Penalties carried while the score was 0, still to be repaid."""
        return round(-self.balance, SCORE_DIGITS) if self.balance < 0 else 0.0


class StepOutcome(NamedTuple):
    progress: Progress
    reward: float
    signals: tuple[str, ...]


def _milestones_by_endpoint(table: Mapping[str, float]) -> Mapping[str, tuple[str, ...]]:
    """For one table: which of its milestone rows a call to each endpoint may reach, in order."""
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
    {table_id: _milestones_by_endpoint(table) for table_id, table in REWARD_TABLE.items()}
)
"""Table -> endpoint -> the milestone rows to check after a successful call to it."""
OUTCOMES_BY_TABLE: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        table_id: tuple(name for name in table if name in OUTCOME_ROWS)
        for table_id, table in REWARD_TABLE.items()
    }
)


def _intended(spec: TaskSpec, effects: list[Effect]) -> bool:
    """Whether every effect of a write is one the task intends (a set one: to its value)."""
    for key, value in effects:
        if key not in spec.intended_keys:
            return False
        wanted = spec.intended_keys[key]
        if key[0] not in ADDITIVE_KINDS and wanted is not None and wanted != value:
            return False
    return bool(effects)


def is_on_target(
    spec: TaskSpec, call: ApiCall, body: Body, new: list[Effect] | None = None
) -> bool:
    """Whether a successful call is about the task's customer, order or its items, and a
    write among them one the task intends (`new`: the write's effects, if known)."""
    endpoint = call.endpoint
    if call.route in WRITE_ENDPOINTS:
        return _intended(spec, effects_of_answer(endpoint, body) if new is None else new)
    if endpoint in ABOUT_USER:
        return body.get("user_id") in spec.user_ids
    if endpoint in ABOUT_ORDER:
        return body.get("order_id") == spec.order_id
    sku = body.get("sku")
    return sku is not None and normalize_id(sku) in spec.order_skus


def _penalties(
    spec: TaskSpec,
    table: Mapping[str, float],
    progress: Progress,
    call: ApiCall,
    new: list[Effect],
    effects: Effects,
) -> list[str]:
    """Penalty rows of an intended write (`new`: its effects; `effects`: the total after it)."""
    found: list[str] = []
    missed = any(
        expect.key[0] in ADDITIVE_KINDS
        and (expectation_met(expect, progress.effects) or not expectation_met(expect, effects))
        for expect in spec.expected
        if any(key == expect.key for key, _ in new)
    )
    if missed:
        found.append("wrong_refund_amount" if "wrong_refund_amount" in table else "wrong_amount")
    if (
        "refund_before_eligibility" in table
        and call.endpoint == ORDERS_PROCESS_REFUND
        and "return_eligibility_confirmed" not in progress.milestones
    ):
        found.append("refund_before_eligibility")
    if "write_before_verification" in table and any(
        name in table and name not in progress.milestones for name in VERIFICATION_ROWS
    ):
        found.append("write_before_verification")
    return found


def _bonuses(spec: TaskSpec, step: int, wrong_refund: bool, violated: bool) -> list[str]:
    found = []
    for rule in BONUS_RULES[spec.table_id]:
        last = spec.optimal_calls + rule.slack if rule.slack is not None else rule.max_steps
        if not rule.min_steps <= step <= (last or step):
            continue
        if (rule.needs_no_wrong_refund and wrong_refund) or (rule.needs_no_violation and violated):
            continue
        found.append(rule.signal)
    return found


def _follow_outcomes(
    spec: TaskSpec, milestones: tuple[str, ...], effects: Effects, signals: list[str]
) -> tuple[str, ...]:
    """Pay the outcome rows the world now holds, take back those it no longer holds."""
    for name in OUTCOMES_BY_TABLE[spec.table_id]:
        held = name in milestones
        if outcome_held(spec, name, effects) is not held:
            if held:
                milestones = tuple(reached for reached in milestones if reached != name)
                signals.append(name + UNDONE)
            else:
                milestones += (name,)
                signals.append(name)
    return milestones


def score_call(
    spec: TaskSpec,
    progress: Progress,
    call: ApiCall,
    status: int,
    body: Body,
    free: bool = False,
    replayed: bool = False,
    defer_completion: bool = False,
) -> StepOutcome:
    """Judge one call; return the new progress, the reward and the rows it triggered.

    Under faults (server/servicebench/faults/calls.py): `free`, a call the faults called
    for (the check of a timed-out write, its keyed retry) takes no penalty row and is not
    counted as a step; `replayed`, a keyed write answered from the service's record,
    changed nothing, so it has no effect; `defer_completion`, a revealed write graded just
    before the call that revealed it leaves completion (and its bonuses) to that call.
    """
    table_id = spec.table_id
    table = REWARD_TABLE[table_id]
    key = call_identity(call, status, body)
    new = effects_of_answer(call.endpoint, body) if status == 200 and not replayed else []
    effects = accumulate(progress.effects, new) if new else progress.effects
    signals: list[str] = []
    milestones = progress.milestones
    first_correct_paid, base_paid = progress.first_correct_paid, progress.base_paid
    judged = False
    if key in progress.seen_calls:
        if not free:
            signals.append("duplicate_call")
    elif call.route not in spec.relevant_endpoints:
        if not free:
            signals.append("irrelevant_endpoint")
    elif status == 200 and not is_on_target(spec, call, body, new):
        if call.route in WRITE_ENDPOINTS and not free:
            signals.append(
                "unintended_write" if "unintended_write" in table else "irrelevant_endpoint"
            )
    elif status == 200:
        judged = True
        if new:
            signals += _penalties(spec, table, progress, call, new, effects)
        for name in MILESTONES_BY_ENDPOINT[table_id][call.endpoint]:
            if name not in milestones and MILESTONES[name].check(spec, call, body, milestones):
                milestones += (name,)
                signals.append(name)
    if new:
        milestones = _follow_outcomes(spec, milestones, effects, signals)
    if judged:
        if (
            not signals
            and "base_progress" in table
            and (base_paid + table["base_progress"] <= BASE_ALLOWANCE[table_id] + 1e-9)
        ):
            signals.append("base_progress")
            base_paid = round(base_paid + table["base_progress"], SCORE_DIGITS)
        if "first_correct_call" in table and not first_correct_paid:
            signals.append("first_correct_call")
            first_correct_paid = True
    wrong_refund_issued = progress.wrong_refund_issued or (
        "wrong_refund_amount" in signals or "wrong_amount" in signals
    )
    violated = progress.policy_violated or not VIOLATIONS.isdisjoint(signals)
    step = progress.step + (0 if free else 1)
    changed = milestones is not progress.milestones or progress.completion_pending
    completed = progress.completed or (  # only a newly held row can complete the task
        changed and not defer_completion and all(name in milestones for name in spec.completion)
    )
    if completed and not progress.completed:
        signals += _bonuses(spec, step, wrong_refund_issued, violated)
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
        policy_violated=violated,
        completed=completed,
        effects=effects,
        completion_pending=defer_completion and changed,
    )
    return StepOutcome(new_progress, round(score - progress.score, SCORE_DIGITS), tuple(signals))
