"""Reading ServiceBench observations as an agent does: fields, response data, ids in text.

What the oracles (oracle.py for the seed's tasks, requests/oracle.py for the request
families) share: they know procedures, not data, and read every id and amount out of
the observations with these.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ...models import ServiceBenchAction, ServiceBenchObservation

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
USER_ID = re.compile(r"\bUSR-\d+\b")
ORDER_ID = re.compile(r"\bORD-\d+\b")
SKU = re.compile(r"\bSKU-\d+\b")
CENT = Decimal("0.01")

ObservationLike = ServiceBenchObservation | Mapping[str, Any]
Data = dict[str, Any]


def field(observation: ObservationLike, name: str) -> Any:
    """Read a field of a typed observation or of its JSON form alike."""
    if isinstance(observation, Mapping):
        return observation.get(name)
    return getattr(observation, name, None)


def find(pattern: re.Pattern[str], text: str) -> str:
    """The pattern's first match (its group if it has one) in a task description."""
    match = pattern.search(text)
    if match is None:
        raise ValueError(f"task description has no {pattern.pattern!r}: {text!r}")
    return match.group(1) if pattern.groups else match.group(0)


def money(value: Any) -> Decimal:
    return Decimal(str(value)).quantize(CENT)


def call(service: str, endpoint: str, method: str = "GET", **params: Any) -> ServiceBenchAction:
    return ServiceBenchAction(service=service, endpoint=endpoint, method=method, params=params)


def data(observation: ObservationLike) -> Data | None:
    """The response data of a successful call, or None (a failure, or the reset)."""
    found = (field(observation, "api_response") or {}).get("data")
    return found if field(observation, "success") is not False and isinstance(found, dict) else None


def error(observation: ObservationLike) -> tuple[int | None, str]:
    """The status code and error text of a failed call (None, "" for a success)."""
    response = field(observation, "api_response") or {}
    if field(observation, "success") is not False:
        return None, ""
    return response.get("status_code"), str(
        response.get("error") or field(observation, "error_message") or ""
    )
