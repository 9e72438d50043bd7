"""A deterministic, optimal ServiceBench policy (used by `inference.py --fallback`).

`next_action(history)` takes the observations of the episode so far (the reset
observation first) and returns the next call, or None when it has nothing left to
do. It knows the three business procedures, not the data: identifiers come from the
task description (regexes), and every later parameter is read from the responses
it has seen (user ids, line items, prices, price histories, coupon metadata). It
stops rather than guesses when a response fails or contradicts the task (wrong
owner, not eligible). It is never given a variant's answer: the variant proofs
(server/servicebench_proof.py) play it against the environment to show each
generated task is solvable from the observations alone.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from models import ServiceBenchAction, ServiceBenchObservation

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
USER_ID = re.compile(r"\bUSR-\d+\b")
ORDER_ID = re.compile(r"\bORD-\d+\b")
SKU = re.compile(r"\bSKU-\d+\b")
TARGET_STATUS = re.compile(r"status to '([a-z_]+)'")
CENT = Decimal("0.01")

ObservationLike = Union[ServiceBenchObservation, Mapping[str, Any]]
Data = dict[str, Any]
Plan = Callable[[str, list[Data]], Optional[ServiceBenchAction]]


def _field(observation: ObservationLike, name: str) -> Any:
    """Read a field of a typed observation or of its JSON form alike."""
    if isinstance(observation, Mapping):
        return observation.get(name)
    return getattr(observation, name)


def _find(pattern: re.Pattern[str], text: str) -> str:
    match = pattern.search(text)
    if match is None:
        raise ValueError(f"task description has no {pattern.pattern!r}: {text!r}")
    return match.group(1) if pattern.groups else match.group(0)


def _money(value: Any) -> Decimal:
    return Decimal(str(value)).quantize(CENT)


def _call(service: str, endpoint: str, method: str = "GET", **params: Any) -> ServiceBenchAction:
    return ServiceBenchAction(service=service, endpoint=endpoint, method=method, params=params)


def _line_item(order: Data, sku: str) -> Optional[Data]:
    return next((item for item in order.get("items", []) if item["sku"] == sku), None)


def _order_status(description: str, seen: list[Data]) -> Optional[ServiceBenchAction]:
    """Customer by email, then the order: its status is the answer."""
    if len(seen) == 0:
        return _call("user", "/users/lookup", email=_find(EMAIL, description))
    if len(seen) == 1:
        return _call("order", "/orders/lookup", order_id=_find(ORDER_ID, description))
    return None


def _return_and_refund(description: str, seen: list[Data]) -> Optional[ServiceBenchAction]:
    """Customer, order (owner, eligibility, item), item value, refund, status."""
    order_id, sku = _find(ORDER_ID, description), _find(SKU, description)
    if len(seen) == 0:
        return _call("user", "/users/lookup", email=_find(EMAIL, description))
    if len(seen) == 1:
        return _call("order", "/orders/lookup", order_id=order_id)
    user, order = seen[0], seen[1]
    item = _line_item(order, sku)
    if order.get("user_id") != user["user_id"] or order.get("return_eligible") is not True or item is None:
        return None
    if len(seen) == 2:
        return _call("inventory", "/inventory/lookup", sku=sku)
    if len(seen) == 3:
        product = seen[2]
        reason = (f"{product['name']} ({sku}) arrived damaged; refunding one unit at the "
                  f"price charged on {order_id}")
        return _call("order", "/orders/process-refund", "POST", order_id=order_id,
                     amount=float(_money(item["unit_price"])), reason=reason)
    if len(seen) == 4:
        return _call("order", "/orders/update-status", "POST", order_id=order_id,
                     new_status=_find(TARGET_STATUS, description))
    return None


def _coupon_skus(order: Data) -> list[str]:
    """SKUs of the order the coupon covers, whose catalogue prices are checked before refunding."""
    coupon = order.get("coupon_applied") or {}
    eligible = coupon.get("eligible_skus")
    if not coupon or (eligible is None and coupon.get("type") != "percent_off_list_price"):
        return []
    return list(dict.fromkeys(item["sku"] for item in order["items"]
                              if eligible is None or item["sku"] in eligible))


def _coupon_value(order: Data, list_prices: Mapping[str, Decimal]) -> Decimal:
    """The coupon's value on the order by its own rule: percent of list or sale price, or flat."""
    coupon = order.get("coupon_applied") or {}
    eligible = coupon.get("eligible_skus")
    covered = [item for item in order["items"] if eligible is None or item["sku"] in eligible]
    if coupon.get("type") == "fixed_amount_off":
        return _money(coupon["amount"]) if covered else Decimal(0)
    if coupon.get("type") == "percent_off_list_price":
        base = sum((list_prices[item["sku"]] * item["quantity"] for item in covered
                    if item["sku"] in list_prices), Decimal(0))
    elif coupon.get("type") == "percent_off_sale_price":
        base = sum((_money(item["unit_price"]) * item["quantity"] for item in covered), Decimal(0))
    else:
        return Decimal(0)
    return (base * Decimal(str(coupon["percent"])) / 100).quantize(CENT)


def _lines_total(order: Data) -> Decimal:
    return sum((_money(item["unit_price"]) * item["quantity"] for item in order["items"]), Decimal(0))


def _coupon_finding(order: Data, checks: list[Data]) -> tuple[Decimal, str]:
    """Overcharge against line items less the coupon, and why."""
    list_prices = {check["sku"]: _money(check["price"]) for check in checks}
    lines, coupon = _lines_total(order), _coupon_value(order, list_prices)
    correct, charged = lines - coupon, _money(order["total_charged"])
    overcharge = charged - correct - _money(order.get("refunded_total", 0))
    code = (order.get("coupon_applied") or {}).get("code", "none")
    cause = (f"coupon {code} ({coupon}) was added to the total instead of deducted"
             if charged == lines + coupon
             else f"the charge does not match the line items less coupon {code} ({coupon})")
    return overcharge, (f"Billing error: {cause}. Line items {lines} - coupon {coupon} = {correct}, "
                        f"but {charged} was charged; refunding the {overcharge} difference.")


def _price_then(check: Data, day: str) -> Decimal:
    """The price in effect on `day`, from a price-history response (ISO dates compare as text)."""
    in_effect = check["history"][0]["price"]
    for change in check["history"]:
        if change["effective_date"] <= day:
            in_effect = change["price"]
    return _money(in_effect)


def _stale_finding(order: Data, checks: list[Data]) -> tuple[Decimal, str]:
    """Overcharge from items billed above the price in effect on the order date, and why."""
    overcharge, notes = Decimal(0), []
    for check in checks:
        then = _price_then(check, order["placed_at"])
        for item in order["items"]:
            unit = _money(item["unit_price"])
            if item["sku"] == check["sku"] and unit > then:
                overcharge += (unit - then) * item["quantity"]
                notes.append(f"{item['sku']} was charged {unit} per unit although the price history "
                             f"shows {then} in effect on {order['placed_at']} ({item['quantity']} x "
                             f"{unit - then})")
    overcharge -= _money(order.get("refunded_total", 0))
    return overcharge, f"Billing error: stale price. {'; '.join(notes)}; refunding {overcharge}."


def _billing_discrepancy(description: str, seen: list[Data]) -> Optional[ServiceBenchAction]:
    """Customer, order, then the prices the charge depends on; refund what was overcharged.

    With a coupon on the order, the coupon is the suspect: look up the list price of each
    SKU it covers, then compare the charge with the line items less the coupon. Without
    one, the prices charged are: read each item's price history until an item turns out
    billed above the price in effect on the order date.
    """
    order_id = _find(ORDER_ID, description)
    if len(seen) == 0:
        return _call("user", "/users/lookup", user_id=_find(USER_ID, description))
    if len(seen) == 1:
        return _call("order", "/orders/lookup", order_id=order_id)
    user, order, checks = seen[0], seen[1], seen[2:]
    if order.get("user_id") != user["user_id"] or any("sku" not in check for check in checks):
        return None  # not the customer's order, or a refund was already issued
    if order.get("coupon_applied"):
        wanted = _coupon_skus(order)
        if len(checks) < len(wanted):
            return _call("inventory", "/inventory/lookup", sku=wanted[len(checks)])
        overcharge, reason = _coupon_finding(order, checks)
    else:
        overcharge, reason = _stale_finding(order, checks)
        skus = list(dict.fromkeys(item["sku"] for item in order["items"]))
        if overcharge <= 0 and len(checks) < len(skus):
            return _call("inventory", "/inventory/price-history", sku=skus[len(checks)])
    if overcharge <= 0:
        return None
    return _call("order", "/orders/process-refund", "POST", order_id=order_id,
                 amount=float(overcharge), reason=reason)


PLANS: Mapping[str, Plan] = {
    "order_status_lookup": _order_status,
    "return_and_refund": _return_and_refund,
    "billing_discrepancy": _billing_discrepancy,
}


def next_action(history: Sequence[ObservationLike]) -> Optional[ServiceBenchAction]:
    """The next optimal call given the episode's observations so far, or None when done."""
    if not history or _field(history[-1], "done"):
        return None
    plan = PLANS.get(_field(history[0], "task_id") or "")
    if plan is None:
        return None
    seen: list[Data] = []
    for observation in history[1:]:
        response = _field(observation, "api_response") or {}
        if _field(observation, "success") is False or "data" not in response:
            return None  # a failed call: stop rather than guess
        seen.append(response["data"])
    return plan(_field(history[0], "task_description") or "", seen)
