"""An episode's services under a fault schedule (server/servicebench/faults/schedule.py).

`FaultyServices.call` answers one call: by a fault the schedule picks (a 503, a 429 or
a call to a service still rate limited, a 504), or by the services, whose answer to a read
right after a write may be stale. It keeps what faults leave behind, and tells the grader
(environment.py, rewards.py) what the agent could know:

* A write answered by a timeout calls for a check: the next read the services answer
  from the same service (the lookup of the refunded order, of the restocked SKU) is free:
  no duplicate or irrelevant-call penalty, no step counted, whatever the write's fate.
* A timed-out write that was applied is an *open write*: beside the episode's world it
  keeps the world without it, kept in step with every later call. It is *revealed* by the
  first answer the agent is shown that differs from the world without it (a lookup
  showing the refund; not a stale one), or by its own `idempotency_key` sent again (the
  service answers the write's first answer). Only then does the grader see it: it is graded
  as made then, so nothing (reward, completion, the budget) tells the agent before its
  answers do; one never revealed is graded when the episode ends. A write re-sent without
  its key after an applied timeout applies twice (a double refund): the outcome rows
  follow the world, so the task does not complete, and `double_applied_writes` says so in
  the final report. The key sent again after the write was revealed is answered from the
  service's record and is free: a safe retry is never penalised.
* A read right after a write to its record may show the record as it was (once): a stale
  read, graded as the read it appears to be. Silent like a timeout's fate, it is listed in
  the state only once the episode is done.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

from ....mock_services import ServiceError, ServiceState, resolve_route
from ....mock_services.state import Served
from ..grading.calls import ApiCall
from ..grading.effects import effects_of_answer
from .schedule import (
    MAX_CONSECUTIVE,
    RATE_LIMITED,
    STALE_READ,
    TIMEOUT,
    FaultPlan,
    fault_answer,
    fault_cost,
    most_growth,
)

KEY = "idempotency_key"
SHOWN = ("step", "kind", "service", "endpoint", "applied")
"""A fault's fields as the state lists them (models.FaultRecord)."""


@dataclass
class OpenWrite:
    """A write answered by a timeout that was applied, until the agent is shown it."""

    record: int
    """Its entry in `FaultyServices.records`."""
    call: ApiCall
    answer: Served
    """What the service answered (or would have answered) the write."""
    other: ServiceState
    """The world without it, kept in step with later calls."""


@dataclass
class Answer:
    """One call's answer and what the grader must know of it."""

    response: dict[str, Any]
    """The observation's `api_response`."""
    status: int
    body: dict[str, Any]
    fault: str | None = None
    """The kind of fault that answered instead of the service (none: the service did)."""
    free: bool = False
    """A check of a timed-out write, or a keyed retry of one: no penalty, no step counted."""
    replayed: bool = False
    """The service answered a keyed write from its record: nothing new happened."""
    revealed: list[tuple[ApiCall, dict[str, Any]]] = field(default_factory=list)
    """Applied writes hidden by a timeout that this answer shows: graded before it."""


def api_response(status: int, body: dict[str, Any]) -> dict[str, Any]:
    """The observation's `api_response` of a service's answer: the status code plus `data` or
    `error` (a fault's own answer is `faults.fault_answer`)."""
    if status < 400:
        return {"status_code": status, "data": body}
    return {"status_code": status, "error": body.get("error", "request failed")}


def _served(status: int, body: dict[str, Any], replayed: bool = False) -> Served:
    return Served(status, body, replayed)


def _same(one: Served, other: Served) -> bool:
    return one.status == other.status and one.body == other.body


def _keys(endpoint: str, answer: Served) -> set[Any]:
    if answer.status != 200:
        return set()
    return {key for key, _ in effects_of_answer(endpoint, answer.body)}


class FaultyServices:
    """One episode's services and fault schedule, and what the faults left behind."""

    def __init__(self, plan: FaultPlan, services: ServiceState, max_steps: int) -> None:
        self.plan = plan
        self.services = services
        self.max_growth = most_growth(max_steps)
        self.growth = 0
        """Steps the faults added to the budget."""
        self.records: list[dict[str, Any]] = []
        """Every fault: step, kind, service, endpoint, applied (the truth), hidden (silent)."""
        self.rate_limited: dict[str, int] = {}
        """Service -> the first step at which it answers again."""
        self.streaks: dict[tuple[str, str], int] = {}
        self.open_writes: list[OpenWrite] = []
        self.before_write: tuple[int, ServiceState] | None = None
        """The step of the last applied write and the world just before it (stale reads)."""
        self.checks: dict[str, int] = {}
        """Service -> write timeouts whose check (a read of that service) is still to come."""
        self.settled_keys: frozenset[str] = frozenset()
        """Keys of timed-out writes that another answer revealed: sent again, they are free."""

    def fork(self) -> FaultyServices:
        twin = copy.copy(self)
        twin.services = self.services.fork()
        twin.records = [dict(record) for record in self.records]
        twin.rate_limited = dict(self.rate_limited)
        twin.streaks = dict(self.streaks)
        twin.checks = dict(self.checks)
        twin.open_writes = [replace(write, other=write.other.fork()) for write in self.open_writes]
        return twin

    # ------------------------------------------------------------------ reports

    def shown(self, done: bool) -> list[dict[str, Any]]:
        """The faults as the state lists them: silent ones and a timeout's fate once done."""
        return [
            {name: record[name] for name in SHOWN} | ({} if done else {"applied": None})
            for record in self.records
            if done or not record["hidden"]
        ]

    def summary(self) -> dict[str, Any]:
        """What an evaluation needs to tell faults' failures from the agent's own (final
        observation's `info["faults"]`): counts by kind, the write timeouts and their fate,
        and whether a write was applied twice (re-sent without its key after an applied
        timeout)."""
        kinds: dict[str, int] = {}
        for record in self.records:
            kinds[record["kind"]] = kinds.get(record["kind"], 0) + 1
        timeouts = [r for r in self.records if r["kind"] == TIMEOUT and r["applied"] is not None]
        return {
            "level": self.plan.level,
            "injected": len(self.records),
            "by_kind": kinds,
            "write_timeouts": len(timeouts),
            "write_timeouts_applied": sum(1 for r in timeouts if r["applied"]),
            "double_applied_writes": sum(1 for r in self.records if r.get("double_applied")),
            "budget_growth": self.growth,
        }

    def reveal_all(self) -> list[tuple[ApiCall, dict[str, Any]]]:
        """At the end of the episode, every applied write still hidden: the grader sees the
        whole world then, so a write the agent never looked at is graded too (its penalties,
        and the outcome rows it moved)."""
        hidden = [(write.call, write.answer.body) for write in self.open_writes]
        self.open_writes = []
        return hidden

    def visible_count(self) -> int:
        return sum(1 for record in self.records if not record["hidden"])

    # -------------------------------------------------------------------- calls

    def call(
        self, step: int, service: str, endpoint: str, method: str, params: dict[str, Any]
    ) -> Answer:
        """Answer the call of `step`: a fault, or the services (possibly a stale read)."""
        try:
            entry = resolve_route(service, endpoint, method, self.services.surface)
        except ServiceError:
            entry = None
        if entry is None or not isinstance(params, dict):  # refused as before: never a fault
            served = self.services.serve(service, endpoint, method, params)
            return self._answer(served, served)
        route = (entry.service, entry.path, entry.method)
        write = entry.method != "GET"
        call = ApiCall(entry.service, entry.path, entry.method, params)
        until = self.rate_limited.get(entry.service)
        if until is not None and step < until:
            return self._fault(step, route, RATE_LIMITED, until - step)
        scheduled = None
        if self.streaks.get(route[:2], 0) < MAX_CONSECUTIVE:
            scheduled = self.plan.decide(step, route, write)
        if scheduled is None:
            self.streaks[route[:2]] = 0
            return self._serve(step, route, call, write)
        if scheduled.kind == RATE_LIMITED:
            self.rate_limited[entry.service] = step + scheduled.wait
        if scheduled.kind == TIMEOUT and write:
            self._time_out(step, call, scheduled.applied)
        return self._fault(step, route, scheduled.kind, scheduled.wait, write)

    def _record(self, step: int, route: tuple[str, str, str], kind: str, **extra: Any) -> int:
        self.records.append(
            {
                "step": step,
                "kind": kind,
                "service": route[0],
                "endpoint": route[1],
                "applied": None,
                "hidden": kind == STALE_READ,
                **extra,
            }
        )
        return len(self.records) - 1

    def _fault(
        self, step: int, route: tuple[str, str, str], kind: str, wait: int = 0, write: bool = False
    ) -> Answer:
        self.streaks[route[:2]] = self.streaks.get(route[:2], 0) + 1
        self.growth = min(self.max_growth, self.growth + fault_cost(kind, write))
        if not (kind == TIMEOUT and write):  # a write's timeout is recorded by `_time_out`
            self._record(step, route, kind)
        response = fault_answer(kind, route[0], wait)
        return Answer(response, response["status_code"], {"error": response["error"]}, kind)

    def _time_out(self, step: int, call: ApiCall, applied: bool) -> None:
        """A write answered by a timeout: applied to the world or not, as scheduled."""
        before = self.services
        after = before.fork()
        served = after.serve(call.service, call.endpoint, call.method, call.params)
        changed = applied and served.status == 200 and not served.replayed
        self._step_open_writes(call, changed)
        index = self._record(step, call[:3], TIMEOUT, applied=changed)
        self.checks[call.service] = self.checks.get(call.service, 0) + 1
        if applied:  # (a keyed write is recorded by the service even if it failed)
            self.services = after
        if changed:
            self.before_write = (step, before)
            self.open_writes.append(OpenWrite(index, call, served, before))

    def _step_open_writes(self, call: ApiCall, applies: bool) -> None:
        """Apply a timed-out write to the other worlds of the open writes, if it applied."""
        if applies:
            for write in self.open_writes:
                write.other.serve(call.service, call.endpoint, call.method, call.params)

    def _serve(self, step: int, route: tuple[str, str, str], call: ApiCall, write: bool) -> Answer:
        before = self.services.fork() if write and self.plan.rates[STALE_READ] else None
        served = self.services.serve(call.service, call.endpoint, call.method, call.params)
        shown = served
        last = self.before_write
        if not write and last is not None and last[0] == step - 1 and self.plan.stale(step, route):
            old = last[1].serve(call.service, call.endpoint, call.method, call.params)
            if not _same(old, served):
                shown = old
                self._record(step, route, STALE_READ)
        self.before_write = None
        if write and served.status == 200 and not served.replayed and before is not None:
            self.before_write = (step, before)
        return self._settle(step, call, write, served, shown)

    def _settle(
        self, step: int, call: ApiCall, write: bool, served: Served, shown: Served
    ) -> Answer:
        """What the answer tells about the timed-out writes: checks, reveals, keyed retries."""
        answer = self._answer(served, shown)
        key = call.params.get(KEY) if write else None
        if served.replayed and key in self.settled_keys:
            answer.free = True  # its answer again, after the agent was shown its effect
        if not write and self.checks.get(call.service):
            self.checks[call.service] -= 1
            answer.free = True  # the check a timeout called for
        still_open = []
        for open_write in self.open_writes:
            other = open_write.other.serve(call.service, call.endpoint, call.method, call.params)
            if served.replayed and key is not None and key == open_write.call.params.get(KEY):
                answer.replayed = False  # the write's own answer: graded as made now
                continue
            if _same(other, shown):
                still_open.append(open_write)
                continue
            answer.revealed.append((open_write.call, open_write.answer.body))
            if open_write.call.params.get(KEY) is not None:
                self.settled_keys |= {open_write.call.params[KEY]}
            if write and _keys(call.endpoint, served) & _keys(
                open_write.call.endpoint, open_write.answer
            ):
                self.records[open_write.record]["double_applied"] = True
        self.open_writes = still_open
        return answer

    @staticmethod
    def _answer(served: Served, shown: Served) -> Answer:
        response = api_response(shown.status, shown.body)
        return Answer(response, shown.status, shown.body, replayed=served.replayed)
