"""ServiceBench reward shaping: the seed's reward tables, as a pure function.

`score_call(spec, progress, call, status, body)` judges one API call from the task,
the episode's progress so far, the call and the service's response, and returns the
new progress, the reward and the table rows (signal names) the call triggered.
It touches nothing else, so every row is unit-testable without an environment.

How the tables are read (so that each optimal path sums to exactly 1.00):
* A repeated call (same service, endpoint, method, params) earns -0.10 and nothing else.
* A call to an endpoint that does not bear on the task (see servicebench_tasks), or a
  successful write to another order/user or to another status, earns -0.05 only.
* A failed call (4xx) earns nothing more.
* A successful call about the task's entities earns the milestones it reaches (each
  once, in table order, so the task-3 composite sees the checks made by the same call)
  and its penalties; if it earns neither, +0.05 base progress (tasks 2 and 3).
  Task 1 pays +0.15 once for its first such call.
* A refund on the task's order is a wrong amount when it is not within $0.01 of the
  derived amount, or when the correct refund was already issued (the total is then wrong).
* Task 3's order_data_retrieved needs the order's lookup to show the fields the root
  cause depends on (`spec.order_evidence`: items and the coupon, or items alone for a
  stale price), and inventory_prices_verified an answer from one of `spec.price_evidence`
  about a SKU of the order (lookup for list prices, price-history for a stale price).
* When the completion milestones are all reached, the task's bonuses are paid once.
The running score is clamped to [0, 1] after every call; the reward is its change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping, NamedTuple, Optional, Union

from services import ENDPOINTS, normalize_id, normalize_route, to_cents
from server.servicebench_tasks import TaskSpec

SCORE_DIGITS = 6

REWARD_TABLE: Mapping[str, Mapping[str, float]] = MappingProxyType({
    "order_status_lookup": MappingProxyType({
        "duplicate_call": -0.10,
        "irrelevant_endpoint": -0.05,
        "first_correct_call": 0.15,
        "user_id_retrieved": 0.30,
        "order_status_retrieved": 0.45,
        "completed_within_2_steps": 0.10,
        "completed_in_3_steps": 0.05,
    }),
    "return_and_refund": MappingProxyType({
        "duplicate_call": -0.10,
        "irrelevant_endpoint": -0.05,
        "base_progress": 0.05,
        "return_eligibility_confirmed": 0.15,
        "item_presence_verified": 0.15,
        "inventory_checked": 0.10,
        "correct_refund_issued": 0.25,
        "status_updated_to_returned": 0.20,
        "refund_before_eligibility": -0.15,
        "wrong_refund_amount": -0.10,
        "completed_within_5_steps": 0.10,
    }),
    "billing_discrepancy": MappingProxyType({
        "duplicate_call": -0.10,
        "irrelevant_endpoint": -0.05,
        "base_progress": 0.05,
        "order_data_retrieved": 0.10,
        "inventory_prices_verified": 0.10,
        "root_cause_identified": 0.25,
        "correct_adjustment_issued": 0.30,
        "wrong_refund_amount": -0.15,
        "completed_within_6_steps": 0.10,
        "precision_no_wrong_refund": 0.10,
    }),
})


@dataclass(frozen=True)
class BonusRule:
    """A completion bonus: paid if completion came within the step range (and cleanly)."""

    signal: str
    min_steps: int = 1
    max_steps: Optional[int] = None
    needs_no_wrong_refund: bool = False


BONUS_RULES: Mapping[str, tuple[BonusRule, ...]] = MappingProxyType({
    "order_status_lookup": (BonusRule("completed_within_2_steps", max_steps=2),
                            BonusRule("completed_in_3_steps", min_steps=3, max_steps=3)),
    "return_and_refund": (BonusRule("completed_within_5_steps", max_steps=5),),
    "billing_discrepancy": (BonusRule("completed_within_6_steps", max_steps=6),
                            BonusRule("precision_no_wrong_refund", needs_no_wrong_refund=True)),
})

WRITE_ENDPOINTS: frozenset[tuple[str, str]] = frozenset(
    (entry.service, entry.path) for entry in ENDPOINTS if entry.method != "GET"
)


CallKey = Union[str, tuple[str, str, str, tuple[tuple[str, str], ...]]]


class ApiCall(NamedTuple):
    """One call, normalised the way the services route it.

    This, `Progress` and `StepOutcome` are named tuples: immutable, and made on
    every step, where a frozen dataclass costs several times more to build.
    """

    service: str
    endpoint: str
    method: str
    params: Mapping[str, Any] = MappingProxyType({})

    @classmethod
    def of(cls, service: str, endpoint: str, method: str, params: Mapping[str, Any]) -> "ApiCall":
        return cls(*normalize_route(service, endpoint, method), params)

    @property
    def route(self) -> tuple[str, str]:
        return self.service, self.endpoint

    def key(self) -> CallKey:
        """Identity for the duplicate rule: same service, endpoint, method and params.

        Calls whose params are all strings (nearly every call) key as a sorted tuple;
        any other call as canonical JSON, which keeps 1, 1.0 and true apart as JSON
        does. A tuple never equals a string, so the two kinds cannot collide.
        """
        params = self.params
        if all(type(value) is str for value in params.values()):
            return self.service, self.endpoint, self.method, tuple(sorted(params.items()))
        return json.dumps([self.service, self.endpoint, self.method, self.params],
                          sort_keys=True, default=repr)


class Progress(NamedTuple):
    """What an episode has earned so far; small and immutable."""

    step: int = 0
    score: float = 0.0
    milestones: tuple[str, ...] = ()
    seen_calls: frozenset[CallKey] = frozenset()
    first_correct_paid: bool = False
    wrong_refund_issued: bool = False
    completed: bool = False


class StepOutcome(NamedTuple):
    progress: Progress
    reward: float
    signals: tuple[str, ...]


Body = Mapping[str, Any]


def _refund_is_correct(spec: TaskSpec, call: ApiCall, body: Body, reached: tuple[str, ...]) -> bool:
    if call.endpoint != "/orders/process-refund" or spec.refund_amount is None:
        return False
    return abs(to_cents(body["refund"]["amount"]) - to_cents(spec.refund_amount)) <= 1


def _is_task_order(spec: TaskSpec, body: Body) -> bool:
    return body.get("order_id") == spec.order_id


Check = Callable[[TaskSpec, ApiCall, Body, tuple[str, ...]], bool]


class Milestone(NamedTuple):
    """A milestone row: reached by a successful call to one of `endpoints` (any call if
    there are none: a composite of other milestones) whose answer passes `check`."""

    endpoints: frozenset[str]
    check: Check


ORDER_LOOKUP = frozenset({"/orders/lookup"})
REFUND = frozenset({"/orders/process-refund"})
ANY_CALL: frozenset[str] = frozenset()

MILESTONES: Mapping[str, Milestone] = MappingProxyType({
    "user_id_retrieved": Milestone(frozenset({"/users/lookup"}), lambda spec, call, body, reached: (
        body.get("user_id") == spec.customer_id)),
    "order_status_retrieved": Milestone(ORDER_LOOKUP | {"/orders/by-user"}, lambda spec, call, body, reached: (
        _is_task_order(spec, body) if call.endpoint == "/orders/lookup"
        else any(order["order_id"] == spec.order_id for order in body.get("orders", ())))),
    "return_eligibility_confirmed": Milestone(ORDER_LOOKUP, lambda spec, call, body, reached: (
        _is_task_order(spec, body) and body.get("return_eligible") is True)),
    "item_presence_verified": Milestone(ORDER_LOOKUP, lambda spec, call, body, reached: (
        _is_task_order(spec, body) and any(item["sku"] == spec.item_sku for item in body.get("items", ())))),
    "inventory_checked": Milestone(frozenset({"/inventory/lookup"}), lambda spec, call, body, reached: (
        body.get("sku") == spec.item_sku)),
    "correct_refund_issued": Milestone(REFUND, _refund_is_correct),
    "status_updated_to_returned": Milestone(frozenset({"/orders/update-status"}), lambda spec, call, body, reached: (
        body.get("status") == spec.target_status)),
    "order_data_retrieved": Milestone(ORDER_LOOKUP, lambda spec, call, body, reached: (
        _is_task_order(spec, body) and all(bool(body.get(name)) for name in spec.order_evidence))),
    "inventory_prices_verified": Milestone(
        frozenset({"/inventory/lookup", "/inventory/price-history"}), lambda spec, call, body, reached: (
            call.endpoint in spec.price_evidence and body.get("sku") in spec.order_skus)),
    "root_cause_identified": Milestone(ANY_CALL, lambda spec, call, body, reached: (
        "order_data_retrieved" in reached and "inventory_prices_verified" in reached)),
    "correct_adjustment_issued": Milestone(REFUND, _refund_is_correct),
})


def _milestones_by_endpoint(table: Mapping[str, float]) -> Mapping[str, tuple[str, ...]]:
    """For one task: which of its milestone rows a call to each endpoint may reach, in table order."""
    rows = [name for name in table if name in MILESTONES]
    return MappingProxyType({
        entry.path: tuple(name for name in rows
                          if not MILESTONES[name].endpoints or entry.path in MILESTONES[name].endpoints)
        for entry in ENDPOINTS
    })


MILESTONES_BY_ENDPOINT: Mapping[str, Mapping[str, tuple[str, ...]]] = MappingProxyType(
    {task_id: _milestones_by_endpoint(table) for task_id, table in REWARD_TABLE.items()})
"""Task -> endpoint -> the milestone rows to check after a successful call to it."""


def is_on_target(spec: TaskSpec, call: ApiCall, body: Body) -> bool:
    """Whether a successful call is about the task's customer, order or its items."""
    endpoint = call.endpoint
    if endpoint in ("/users/lookup", "/orders/by-user"):
        return body.get("user_id") == spec.customer_id
    if endpoint == "/users/update":
        return body["user"]["user_id"] == spec.customer_id
    if endpoint in ("/orders/lookup", "/orders/process-refund"):
        return body.get("order_id") == spec.order_id
    if endpoint == "/orders/update-status":
        return body.get("order_id") == spec.order_id and body.get("status") == spec.target_status
    sku = body.get("sku")
    return sku is not None and normalize_id(sku) in spec.order_skus


def _penalties(spec: TaskSpec, table: Mapping[str, float], progress: Progress,
               call: ApiCall, body: Body) -> list[str]:
    """Penalty rows of an on-target refund: wrong amount, refund before eligibility."""
    if call.endpoint != "/orders/process-refund":
        return []
    found: list[str] = []
    already_refunded = any(name in progress.milestones
                           for name in ("correct_refund_issued", "correct_adjustment_issued"))
    if already_refunded or not _refund_is_correct(spec, call, body, progress.milestones):
        found.append("wrong_refund_amount")
    if "refund_before_eligibility" in table and "return_eligibility_confirmed" not in progress.milestones:
        found.append("refund_before_eligibility")
    return found


def _bonuses(spec: TaskSpec, step: int, wrong_refund_issued: bool) -> list[str]:
    return [rule.signal for rule in BONUS_RULES[spec.card.id]
            if rule.min_steps <= step <= (rule.max_steps or step)
            and not (rule.needs_no_wrong_refund and wrong_refund_issued)]


def score_call(spec: TaskSpec, progress: Progress, call: ApiCall, status: int, body: Body) -> StepOutcome:
    """Judge one call; return the new progress, the reward and the rows it triggered."""
    table = REWARD_TABLE[spec.card.id]
    key = call.key()
    signals: list[str] = []
    milestones = progress.milestones
    first_correct_paid = progress.first_correct_paid
    if key in progress.seen_calls:
        signals.append("duplicate_call")
    elif call.route not in spec.relevant_endpoints:
        signals.append("irrelevant_endpoint")
    elif status == 200 and not is_on_target(spec, call, body):
        if call.route in WRITE_ENDPOINTS:
            signals.append("irrelevant_endpoint")
    elif status == 200:
        signals += _penalties(spec, table, progress, call, body)
        for name in MILESTONES_BY_ENDPOINT[spec.card.id][call.endpoint]:
            if name not in milestones and MILESTONES[name].check(spec, call, body, milestones):
                milestones += (name,)
                signals.append(name)
        if not signals and "base_progress" in table:  # neither a penalty nor a milestone
            signals.append("base_progress")
        if "first_correct_call" in table and not first_correct_paid:
            signals.append("first_correct_call")
            first_correct_paid = True
    wrong_refund_issued = progress.wrong_refund_issued or "wrong_refund_amount" in signals
    step = progress.step + 1
    completed = progress.completed or (  # only a new milestone can complete the task
        milestones is not progress.milestones and all(name in milestones for name in spec.completion))
    if completed and not progress.completed:
        signals += _bonuses(spec, step, wrong_refund_issued)
    raw = round(progress.score + sum([table[name] for name in signals]), SCORE_DIGITS)
    score = min(1.0, max(0.0, raw))
    new_progress = Progress(step=step, score=score, milestones=milestones,
                            seen_calls=progress.seen_calls | {key},
                            first_correct_paid=first_correct_paid,
                            wrong_refund_issued=wrong_refund_issued, completed=completed)
    return StepOutcome(new_progress, round(score - progress.score, SCORE_DIGITS), tuple(signals))
