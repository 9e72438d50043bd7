"""How the oracles play through faults (server/servicebench/faults/schedule.py).

The procedures (oracle.py, requests/oracle.py) read only successful answers, so a fault
answer tells them nothing and their next call is the one that was spoilt. On top of them:

* every write carries an `idempotency_key` when the catalogue offers one: a digest of the
  write's route and parameters, so the same write sent again carries the same key and the
  service applies it at most once;
* after a 503, a 429 or a 504 on a read, the spoilt call is sent again. While a service is
  rate limited, sending it again is how the oracle waits: each call before
  `retry_after_steps` have passed is answered 429 again, a fault like the first, which
  earns nothing, costs nothing and adds its step back to the budget (so waiting fits the
  budget, and needs no made-up call that the grader would have to excuse);
* after a 504 on a write, whose fate the answer does not say, it looks up the record the
  write changes (the *check*, `CHECKS`) before writing again: if the lookup shows the write
  applied, the procedure learns it and moves on; if not (or when the lookup cannot tell),
  the write is sent again with its key, which is safe either way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ....mock_services.paths import (
    CASE,
    CASES_BY_ORDER,
    CASES_OPEN,
    INVENTORY,
    INVENTORY_CHECK_STOCK,
    INVENTORY_UPDATE_STOCK,
    ORDER,
    ORDERS_LOOKUP,
    ORDERS_PROCESS_REFUND,
    ORDERS_UPDATE_STATUS,
    PAYMENT,
    PAYMENTS_BY_ORDER,
    PAYMENTS_REFUND,
    SHIPMENT,
    SHIPMENTS_BY_ORDER,
    SHIPMENTS_RESHIP,
    SHIPMENTS_UPDATE_ADDRESS,
    USER,
    USERS_LOOKUP,
    USERS_UPDATE,
)
from ....models import ServiceBenchAction
from ..observations import ORDER_ID, ObservationLike, call, field

KEY = "idempotency_key"
FAULT_STATUSES = frozenset({429, 503, 504})
TIMEOUT_STATUS = 504

Check = Callable[[Mapping[str, Any], str], ServiceBenchAction]
"""A write's parameters and the task's order id -> the lookup that shows the write."""
CHECKS: Mapping[str, Check] = MappingProxyType(
    {
        ORDERS_PROCESS_REFUND: lambda p, order: call(ORDER, ORDERS_LOOKUP, order_id=p["order_id"]),
        ORDERS_UPDATE_STATUS: lambda p, order: call(ORDER, ORDERS_LOOKUP, order_id=p["order_id"]),
        INVENTORY_UPDATE_STOCK: lambda p, order: call(
            INVENTORY, INVENTORY_CHECK_STOCK, sku=p["sku"]
        ),
        USERS_UPDATE: lambda p, order: call(USER, USERS_LOOKUP, user_id=p["user_id"]),
        SHIPMENTS_RESHIP: lambda p, order: call(
            SHIPMENT, SHIPMENTS_BY_ORDER, order_id=p["order_id"]
        ),
        SHIPMENTS_UPDATE_ADDRESS: lambda p, order: call(
            SHIPMENT, SHIPMENTS_BY_ORDER, order_id=order
        ),
        CASES_OPEN: lambda p, order: call(CASE, CASES_BY_ORDER, order_id=p["order_id"]),
        PAYMENTS_REFUND: lambda p, order: call(PAYMENT, PAYMENTS_BY_ORDER, order_id=order),
    }
)
"""Per write endpoint, the lookup whose answer shows whether the write was applied."""


def is_fault(observation: ObservationLike) -> bool:
    """Whether the services answered with a fault (a stale read cannot be told apart)."""
    response = field(observation, "api_response") or {}
    return field(observation, "success") is False and response.get("status_code") in FAULT_STATUSES


def without_faults(history: Sequence[ObservationLike]) -> list[ObservationLike]:
    """The history as the procedures read it: the fault answers dropped."""
    return [history[0], *(seen for seen in history[1:] if not is_fault(seen))]


def _timed_out(history: Sequence[ObservationLike]) -> bool:
    """Whether a 504 is among the fault answers since the last answer from the services."""
    for observation in reversed(history[1:]):
        if not is_fault(observation):
            return False
        if (field(observation, "api_response") or {}).get("status_code") == TIMEOUT_STATUS:
            return True
    return False


def offers_keys(first: ObservationLike) -> bool:
    """Whether the catalogue shows the writes' idempotency key (it does when writes can fail)."""
    return any(
        KEY in (spec.get("params") or {}) for spec in field(first, "available_endpoints") or ()
    )


def keyed(action: ServiceBenchAction) -> ServiceBenchAction:
    """The write with its key: a digest of its route and parameters (the same write, the
    same key, in any process)."""
    text = json.dumps([action.service, action.endpoint, action.params], sort_keys=True)
    key = "oracle-" + hashlib.blake2b(text.encode(), digest_size=12).hexdigest()
    return action.model_copy(update={"params": {**action.params, KEY: key}})


def through_faults(
    history: Sequence[ObservationLike],
    plan: Callable[[Sequence[ObservationLike]], ServiceBenchAction | None],
) -> ServiceBenchAction | None:
    """The procedure's next call (`plan`, read off the history without faults), made safe to
    retry, or the check of a write whose call timed out."""
    action = plan(without_faults(history))
    if action is None or action.method == "GET":
        return action
    if not offers_keys(history[0]):
        return action
    if _timed_out(history):
        description = field(history[0], "task_description") or ""
        match = ORDER_ID.search(description)
        return CHECKS[action.endpoint](action.params, match.group(0) if match else "")
    return keyed(action)
