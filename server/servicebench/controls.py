"""ServiceBench's family-agnostic negative controls: policies that never do the task.

Each plays from the observations alone (ids and amounts it has seen in the prompt and
the answers), knows no family and reads no spec, so it runs unchanged on every family:

* `do_nothing`: resets and stops;
* `read_everything`: every read endpoint of the catalogue with every id seen, as new ids
  turn up, until the step budget runs out;
* `spam_writes`: every write endpoint in turn with the ids and amounts seen (in the prompt
  and in its writes' answers: every refund amount, every status, every case category),
  never reading;
* `obvious_write`: looks up the order the prompt names (to learn its charge), refunds it
  in full and marks it returned, whatever the request.

Reads are the answer of a lookup task (order_status), so a control whose reads happen to
be the two records the prompt names completes it; the obvious write and the spam of
writes read nothing before writing but the order, and so score what writing earns.

tests/server/servicebench/test_negative_controls.py holds every family to its bounds;
family_table.py measures them, with the oracle, for the table of families in docs/servicebench.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from ...models import ServiceBenchAction, ServiceBenchObservation
from .environment import ServiceBenchEnvironment

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
IDS = {
    "email": EMAIL,
    "user_id": re.compile(r"\bUSR-\d+\b"),
    "order_id": re.compile(r"\bORD-\d+\b"),
    "sku": re.compile(r"\bSKU-\d+\b"),
    "shipment_id": re.compile(r"\bSHP-\d+-\d+\b"),
    "payment_id": re.compile(r"\bPAY-\d+\b"),
}
MONEY = re.compile(r"\$(\d+\.\d{2})")


class Seen:
    """Every id (by kind) and amount an episode's observations have shown, in order."""

    def __init__(self) -> None:
        self.ids: dict[str, list[str]] = {kind: [] for kind in IDS}
        self.amounts: list[float] = []

    def read(self, observation: ServiceBenchObservation) -> None:
        text = observation.task_description + json.dumps(observation.api_response)
        for kind, pattern in IDS.items():
            for found in pattern.findall(text):
                if found not in self.ids[kind]:
                    self.ids[kind].append(found)
        numbers = [float(m) for m in MONEY.findall(observation.task_description)]
        numbers += _floats(observation.api_response.get("data"))
        for number in numbers:
            if number > 0 and number not in self.amounts:
                self.amounts.append(number)


def _floats(value: Any) -> list[float]:
    if isinstance(value, dict):
        return [n for item in value.values() for n in _floats(item)]
    if isinstance(value, list):
        return [n for item in value for n in _floats(item)]
    return [value] if isinstance(value, float) else []


class Play:
    """One episode of (task, seed, family), with what it has seen."""

    def __init__(self, task_id: str, seed: int | None, family: str | None) -> None:
        self.env = ServiceBenchEnvironment()
        self.seen = Seen()
        self.history = [self.env.reset(task_id=task_id, seed=seed, family=family)]
        self.seen.read(self.history[0])
        self.tried: set[str] = set()

    @property
    def done(self) -> bool:
        return self.history[-1].done

    @property
    def catalogue(self) -> list[dict[str, Any]]:
        return list(self.history[0].available_endpoints)

    def call(self, row: dict[str, Any], params: dict[str, Any]) -> bool:
        """Make the call unless made before or the episode is over; whether it was made."""
        key = json.dumps([row["endpoint"], params], sort_keys=True)
        if self.done or key in self.tried:
            return False
        self.tried.add(key)
        action = ServiceBenchAction(
            service=row["service"], endpoint=row["endpoint"], method=row["method"], params=params
        )
        self.history.append(self.env.step(action))
        self.seen.read(self.history[-1])
        return True

    def fetched_user(self, name: str, value: str) -> bool:
        """Whether a user record with this email or id has been shown already."""
        return any(
            str(o.api_response.get("data", {}).get(name, "")).lower() == value.lower()
            and "email" in o.api_response.get("data", {})
            for o in self.history[1:]
        )

    def row(self, endpoint: str) -> dict[str, Any] | None:
        return next((row for row in self.catalogue if row["endpoint"] == endpoint), None)


def do_nothing(play: Play) -> None:
    """Reset and stop."""


def _read_calls(play: Play) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Reads by id first (each user once, whether by email or by id), lists last."""
    reads = [row for row in play.catalogue if row["method"] == "GET"]
    for row in reads:
        for name in row["params"]:
            for value in play.seen.ids.get(name, []):
                if not (row["endpoint"] == "/users/lookup" and play.fetched_user(name, value)):
                    yield row, {name: value}
    for row in reads:
        if "page" in row["params"]:
            yield from ((row, {"page": page}) for page in (1, 2, 3))


def read_everything(play: Play) -> None:
    """Every read the catalogue offers with every id seen, until the budget is spent."""
    while not play.done and any(play.call(row, params) for row, params in _read_calls(play)):
        pass


def _write_calls(play: Play, row: dict[str, Any]) -> Iterator[dict[str, Any]]:
    ids, amounts = play.seen.ids, play.seen.amounts
    endpoint = row["endpoint"]
    if endpoint == "/orders/process-refund":
        yield from (
            {"order_id": o, "amount": a, "reason": "spam"} for o in ids["order_id"] for a in amounts
        )
    elif endpoint == "/orders/update-status":
        statuses = row["params"]["new_status"].get("enum", [])
        yield from ({"order_id": o, "new_status": s} for o in ids["order_id"] for s in statuses)
    elif endpoint == "/inventory/update-stock":
        yield from ({"sku": s, "adjustment": d} for s in ids["sku"] for d in (1, -1, 2))
    elif endpoint == "/users/update":
        yield from ({"user_id": u, "updates": {"notes": "spam"}} for u in ids["user_id"])
    elif endpoint == "/shipments/reship":
        yield from (
            {"order_id": o, "sku": s, "quantity": q, "reason": "spam"}
            for o in ids["order_id"]
            for s in ids["sku"]
            for q in (1, 2)
        )
    elif endpoint == "/shipments/update-address":
        yield from ({"shipment_id": s, "address": "1 Spam Street"} for s in ids["shipment_id"])
    elif endpoint == "/payments/refund":
        yield from ({"payment_id": p, "reason": "spam"} for p in ids["payment_id"])
    elif endpoint == "/cases/open":
        categories = row["params"]["category"].get("enum", [])
        yield from (
            {"order_id": o, "category": c, "summary": "spam", **({"amount": a} if a else {})}
            for o in ids["order_id"]
            for c in categories
            for a in [None, *amounts]
        )


def spam_writes(play: Play) -> None:
    """Every write endpoint in turn with the ids and amounts seen, and no read."""
    writes = [row for row in play.catalogue if row["method"] != "GET"]
    streams = [_write_calls(play, row) for row in writes]
    while not play.done and streams:
        for stream, row in zip(list(streams), list(writes), strict=True):
            params = next(stream, None)
            if params is None:
                streams.remove(stream)
                writes.remove(row)
            else:
                play.call(row, params)


def obvious_write(play: Play) -> None:
    """Look up the order, refund it in full, mark it returned."""
    play.call(play.row("/orders/lookup"), {"order_id": play.seen.ids["order_id"][0]})
    order = next(
        (
            o.api_response["data"]
            for o in play.history[1:]
            if "items" in o.api_response.get("data", {})
        ),
        None,
    )
    if order is None:
        return
    balance = round(order["total_charged"] - order["refunded_total"], 2)
    if balance > 0:
        play.call(
            play.row("/orders/process-refund"),
            {"order_id": order["order_id"], "amount": balance, "reason": "refund in full"},
        )
    play.call(
        play.row("/orders/update-status"), {"order_id": order["order_id"], "new_status": "returned"}
    )


CONTROLS: dict[str, Callable[[Play], None]] = {
    "do_nothing": do_nothing,
    "read_everything": read_everything,
    "spam_writes": spam_writes,
    "obvious_write": obvious_write,
}


def run_control(name: str, task_id: str, seed: int | None, family: str | None) -> Play:
    play = Play(task_id, seed, family)
    CONTROLS[name](play)
    return play
