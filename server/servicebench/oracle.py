"""A deterministic, optimal ServiceBench policy (used by `inference.py --fallback`).

`next_action(history)` takes the observations of the episode so far (the reset
observation first) and returns the next call, or None when it has nothing left to
do. It knows the three business procedures, not the data: identifiers come from the
task description (regexes), and every later parameter is read from the responses
seen (user ids, line items, prices, price histories, coupon metadata, refunds).

Each procedure is a sequence of steps; the next call is the first step whose answer
is not yet in the history. An answer is recognised by its content (a customer record
with the task's email or id, the task's order with its line items, a refund on that
order, ...), wherever it stands and whoever asked for it, so the oracle resumes any
episode: calls someone else made are not repeated, and failed, unrelated or repeated
calls are skipped. It stops rather than guesses when a response contradicts the task
(wrong owner, not eligible, a refund the order cannot cover) or when the last call
failed on what its next call is about (see `_refused`). It is never given a variant's
answer: the variant proofs (server/servicebench/proof.py) play it against the
environment to show each generated task is solvable from the observations alone, with
faults on too: it retries, waits, keys its writes and checks a timed-out write
(faults/oracle.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from ...mock_services import BilledLine, coupon_discount, to_cents
from ...mock_services.paths import (
    INVENTORY,
    INVENTORY_LOOKUP,
    INVENTORY_PRICE_HISTORY,
    ORDER,
    ORDERS_LOOKUP,
    ORDERS_PROCESS_REFUND,
    ORDERS_UPDATE_STATUS,
    USER,
    USERS_LOOKUP,
)
from ...models import ServiceBenchAction
from .faults.oracle import through_faults
from .observations import (
    CENT,
    EMAIL,
    ORDER_ID,
    SKU,
    USER_ID,
    Data,
    ObservationLike,
)
from .observations import call as _call
from .observations import data as _data
from .observations import field as _field
from .observations import find as _find
from .observations import money as _money
from .requests.oracle import PROCEDURES as REQUEST_TASKS
from .requests.oracle import next_request_action

TARGET_STATUS = re.compile(r"status to '([a-z_]+)'")
DAMAGED_UNITS = re.compile(r"\b(\d+) of the \d+ units\b")
"""How many units arrived damaged, when the prompt says (otherwise the one item)."""
SUBJECTS = ("email", "user_id", "order_id", "sku")
"""The parameter naming what a call is about, in the order looked for."""


@dataclass
class Case:
    """The task's targets (from its description) and what the responses said about them."""

    description: str
    customer: dict[str, str]
    """How the description names the customer: the /users/lookup parameters."""
    order_id: str
    user: Data | None = None
    order: Data | None = None
    """The latest /orders/lookup answer about the task's order."""
    status: str | None = None
    """The order's latest status (order details and status changes)."""
    refunds: dict[str, Decimal] = field(default_factory=dict)
    """Refunds issued on the order, by refund id (order details and refund answers)."""
    products: dict[str, Data] = field(default_factory=dict)
    """/inventory/lookup answers, by SKU."""
    histories: dict[str, Data] = field(default_factory=dict)
    """/inventory/price-history answers, by SKU."""

    def learn(self, data: Data) -> None:
        """Keep what one successful response says about the task; ignore anything else."""
        if "user_id" in data and "email" in data:  # a customer record
            if all(
                str(data[name]).lower() == value.lower() for name, value in self.customer.items()
            ):
                self.user = data
        elif data.get("order_id") == self.order_id:  # details, a refund or a status change
            if "items" in data:
                self.order = data
            issued = list(data.get("refunds", [])) + ([data["refund"]] if "refund" in data else [])
            self.refunds.update(
                (refund["refund_id"], _money(refund["amount"])) for refund in issued
            )
            if "status" in data:
                self.status = data["status"]
        elif "sku" in data and "price" in data:
            self.products[data["sku"]] = data
        elif "sku" in data and "history" in data:
            self.histories[data["sku"]] = data


Plan = Callable[[Case], ServiceBenchAction | None]


def _lookups(case: Case) -> ServiceBenchAction | None:
    """The customer, then the order: every procedure starts from both."""
    if case.user is None:
        return _call(USER, USERS_LOOKUP, **case.customer)
    if case.order is None:
        return _call(ORDER, ORDERS_LOOKUP, order_id=case.order_id)
    return None


def _refund(case: Case, amount: Decimal, reason: str) -> ServiceBenchAction | None:
    """The refund, or None when it was already issued or the order cannot cover it."""
    assert case.order is not None
    balance = _money(case.order["total_charged"]) - sum(case.refunds.values(), Decimal(0))
    if amount in case.refunds.values() or amount > balance:
        return None
    return _call(
        ORDER,
        ORDERS_PROCESS_REFUND,
        "POST",
        order_id=case.order_id,
        amount=float(amount),
        reason=reason,
    )


def _order_status(case: Case) -> ServiceBenchAction | None:
    """Customer by email, then the order: its status is the answer."""
    return None if case.order is not None else _lookups(case)


def _return_and_refund(case: Case) -> ServiceBenchAction | None:
    """Customer, order (owner, eligibility, item), item value, refund, status."""
    sku = _find(SKU, case.description)
    if (lookup := _lookups(case)) is not None:
        return lookup
    assert case.user is not None and case.order is not None
    item = next((item for item in case.order["items"] if item["sku"] == sku), None)
    if (
        case.order.get("user_id") != case.user["user_id"]
        or case.order.get("return_eligible") is not True
        or item is None
    ):
        return None
    if sku not in case.products:
        return _call(INVENTORY, INVENTORY_LOOKUP, sku=sku)
    damaged = DAMAGED_UNITS.search(case.description)
    units = int(damaged.group(1)) if damaged else 1
    amount = _money(item["unit_price"]) * units
    if amount not in case.refunds.values():
        reason = (
            f"{case.products[sku]['name']} ({sku}) arrived damaged; refunding {units} "
            f"unit{'s' if units > 1 else ''} at the price charged on {case.order_id}"
        )
        return _refund(case, amount, reason)
    target = _find(TARGET_STATUS, case.description)
    if case.status != target:
        return _call(ORDER, ORDERS_UPDATE_STATUS, "POST", order_id=case.order_id, new_status=target)
    return None


def _skus(order: Data, covered: Sequence[str] | None = None) -> list[str]:
    """The order's SKUs (those in `covered` only, if given), once each, in line order."""
    return list(
        dict.fromkeys(
            item["sku"] for item in order["items"] if covered is None or item["sku"] in covered
        )
    )


def _coupon_skus(order: Data) -> list[str]:
    """SKUs of the order the coupon covers, whose catalogue prices are checked before refunding."""
    coupon = order.get("coupon_applied") or {}
    eligible = coupon.get("eligible_skus")
    if not coupon or (eligible is None and coupon.get("type") != "percent_off_list_price"):
        return []
    return _skus(order, eligible)


def _coupon_value(order: Data, list_prices: Mapping[str, Decimal]) -> Decimal:
    """The coupon's value on the order by its own rule (mock_services/billing.py), from the
    order's lines and the list prices looked up (those of the SKUs the coupon covers)."""
    lines = [
        BilledLine(
            item["sku"],
            item["quantity"],
            to_cents(item["unit_price"]),
            to_cents(list_prices[item["sku"]]) if item["sku"] in list_prices else None,
        )
        for item in order["items"]
    ]
    return (Decimal(coupon_discount(order["coupon_applied"], lines)) / 100).quantize(CENT)


def _lines_total(order: Data) -> Decimal:
    return sum(
        (_money(item["unit_price"]) * item["quantity"] for item in order["items"]), Decimal(0)
    )


def _coupon_finding(order: Data, products: Mapping[str, Data]) -> tuple[Decimal, str]:
    """Overcharge against line items less the coupon, and why."""
    list_prices = {sku: _money(product["price"]) for sku, product in products.items()}
    lines, coupon = _lines_total(order), _coupon_value(order, list_prices)
    correct, charged = lines - coupon, _money(order["total_charged"])
    overcharge = charged - correct
    code = (order.get("coupon_applied") or {}).get("code", "none")
    cause = (
        f"coupon {code} ({coupon}) was added to the total instead of deducted"
        if charged == lines + coupon
        else f"the charge does not match the line items less coupon {code} ({coupon})"
    )
    return overcharge, (
        f"Billing error: {cause}. Line items {lines} - coupon {coupon} = {correct}, "
        f"but {charged} was charged; refunding the {overcharge} difference."
    )


def _price_then(check: Data, day: str) -> Decimal:
    """The price in effect on `day`, from a price-history response (ISO dates compare as text)."""
    in_effect = check["history"][0]["price"]
    for change in check["history"]:
        if change["effective_date"] <= day:
            in_effect = change["price"]
    return _money(in_effect)


def _stale_finding(order: Data, histories: Mapping[str, Data]) -> tuple[Decimal, str]:
    """Overcharge from items billed above the price in effect on the order date, and why."""
    overcharge, notes = Decimal(0), []
    for sku in _skus(order, list(histories)):
        then = _price_then(histories[sku], order["placed_at"])
        for item in order["items"]:
            unit = _money(item["unit_price"])
            if item["sku"] == sku and unit > then:
                overcharge += (unit - then) * item["quantity"]
                notes.append(
                    f"{sku} was charged {unit} per unit although the price history "
                    f"shows {then} in effect on {order['placed_at']} ({item['quantity']} x "
                    f"{unit - then})"
                )
    return overcharge, f"Billing error: stale price. {'; '.join(notes)}; refunding {overcharge}."


def _billing_discrepancy(case: Case) -> ServiceBenchAction | None:
    """Customer, order, then the prices the charge depends on; refund what was overcharged.

    With a coupon on the order, the coupon is the suspect: look up the list price of each
    SKU it covers, then compare the charge with the line items less the coupon. Without
    one, the prices charged are: read each item's price history until an item turns out
    billed above the price in effect on the order date. The adjustment is the whole
    overcharge, issued once: a refund of exactly that amount on the order means it is done.
    """
    if (lookup := _lookups(case)) is not None:
        return lookup
    assert case.user is not None and case.order is not None
    order = case.order
    if order.get("user_id") != case.user["user_id"]:
        return None  # not the customer's order
    if order.get("coupon_applied"):
        unchecked = [sku for sku in _coupon_skus(order) if sku not in case.products]
        if unchecked:
            return _call(INVENTORY, INVENTORY_LOOKUP, sku=unchecked[0])
        overcharge, reason = _coupon_finding(order, case.products)
    else:
        overcharge, reason = _stale_finding(order, case.histories)
        unchecked = [sku for sku in _skus(order) if sku not in case.histories]
        if overcharge <= 0 and unchecked:
            return _call(INVENTORY, INVENTORY_PRICE_HISTORY, sku=unchecked[0])
    return _refund(case, overcharge, reason) if overcharge > 0 else None


PLANS: Mapping[str, Plan] = {
    "order_status_lookup": _order_status,
    "return_and_refund": _return_and_refund,
    "billing_discrepancy": _billing_discrepancy,
}


def _refused(observation: ObservationLike, action: ServiceBenchAction) -> bool:
    """Whether this observation is a failure that `action` would meet again.

    Failed calls tell nothing about the task and are otherwise skipped (anyone may have
    made them), but a 404 naming the email, id or SKU the call is about says that it does
    not exist: the services are deterministic, so asking cannot help. (A refund, the call
    that could be refused otherwise, is checked against the order's balance beforehand.)
    """
    response = _field(observation, "api_response") or {}
    error = str(response.get("error") or _field(observation, "error_message") or "")
    subject = next((str(action.params[name]) for name in SUBJECTS if name in action.params), None)
    if response.get("status_code") != 404 or subject is None:
        return False
    return (
        re.search(rf"(?<![\w.+-]){re.escape(subject)}(?![\w-])", error, re.IGNORECASE) is not None
    )


def next_action(history: Sequence[ObservationLike]) -> ServiceBenchAction | None:
    """The next optimal call given the episode's observations so far, or None when done;
    through faults, as faults/oracle.py plays them."""
    if not history or _field(history[-1], "done"):
        return None
    return through_faults(history, _planned)


def _planned(history: Sequence[ObservationLike]) -> ServiceBenchAction | None:
    """The procedure's next call, from the services' answers (fault answers left out)."""
    task_id = _field(history[0], "task_id") or ""
    plan = PLANS.get(task_id)
    if plan is None:
        if task_id not in REQUEST_TASKS:
            return None
        action = next_request_action(history)
        return None if action is None or _refused(history[-1], action) else action
    description = _field(history[0], "task_description") or ""
    email = EMAIL.search(description)
    customer = {"email": email.group(0)} if email else {"user_id": _find(USER_ID, description)}
    case = Case(description, customer, _find(ORDER_ID, description))
    for observation in history[1:]:
        if (data := _data(observation)) is not None:
            case.learn(data)
    action = plan(case)
    if action is None or (len(history) > 1 and _refused(history[-1], action)):
        return None
    return action
