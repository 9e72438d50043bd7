"""Whose fault a failed ServiceBench episode is: the services' injected faults, or the agent's.

Read from the episode's final state (`GET /state` once it is done), which lists every call
with its status code and every fault the server injected (`faults`, each 504 on a write
with `applied`). A failed episode (the task not completed, or a stand-in) is put down to:

* `fault_double_write`: a write answered 504 had in fact been applied, and the same write
  (the same endpoint on the same record) went through again later without the first call's
  `idempotency_key`: the double refund a blind re-send causes. The state tells a timeout's
  fate (`applied`) only once the episode is done; in an episode the agent left unfinished
  the fate is unknown, and such a re-send counts (it risked the double write);
* `fault_unretried`: some call answered 503, 429 or 504 never got a real answer from that
  endpoint afterwards (the agent gave up on it, or ran out of steps before retrying); a
  504 write that had been applied is not one (it did its work);
* `agent`: anything else, faults or none: the agent's own mistake.

The first that applies wins. A success has no cause. The rule uses only what the state
shows after the episode, so a results file can be audited against the server's record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..mock_services.registry import IDEMPOTENCY_KEY as KEY
from ..server.servicebench.faults.schedule import STATUS, TIMEOUT

FAULT_STATUS = frozenset(STATUS.values())
"""The status codes of injected faults (a stale read answers 200 with old data)."""
TIMEOUT_STATUS = STATUS[TIMEOUT]
CAUSES = ("fault_double_write", "fault_unretried", "agent")
"""Every cause of a failure, in the order the rule tries them."""
FAULT_CAUSES = CAUSES[:2]


def _record(params: Mapping[str, Any]) -> dict[str, Any]:
    """The record a write addresses: its id parameters (order_id, sku, ...), not its free text."""
    return {name: value for name, value in params.items() if name.endswith("_id") or name == "sku"}


def _same_write(first: Mapping[str, Any], later: Mapping[str, Any]) -> bool:
    return (later["service"], later["endpoint"]) == (first["service"], first["endpoint"]) and (
        _record(later["params"]) == _record(first["params"])
    )


def double_writes(calls: Sequence[Mapping[str, Any]], faults: Iterable[Mapping[str, Any]]) -> int:
    """How many 504 writes that had applied (or whose fate the state does not tell yet: an
    episode left unfinished) went through again later without their key."""
    by_step = {call["step"]: call for call in calls}
    found = 0
    for fault in faults:
        first = by_step.get(fault.get("step"))
        if first is None or first["status_code"] != TIMEOUT_STATUS or first["method"] == "GET":
            continue
        if fault.get("applied") is False:
            continue  # it had not applied: the re-send was the one write
        key = first["params"].get(KEY)
        found += any(
            call["step"] > first["step"]
            and call["status_code"] not in FAULT_STATUS
            and _same_write(first, call)
            and (key is None or call["params"].get(KEY) != key)
            for call in calls
        )
    return found


def unretried(calls: Sequence[Mapping[str, Any]], faults: Iterable[Mapping[str, Any]]) -> int:
    """How many endpoints' last call was answered with a fault (a 504 write that had been
    applied did its work: checking it with a lookup instead of re-sending it is right)."""
    applied = {fault.get("step") for fault in faults if fault.get("applied")}
    last: dict[tuple[str, str], Mapping[str, Any]] = {}
    for call in calls:
        last[(call["service"], call["endpoint"])] = call
    return sum(
        call["status_code"] in FAULT_STATUS and call["step"] not in applied
        for call in last.values()
    )


def failure_cause(
    state: Mapping[str, Any], success: bool, summary: Mapping[str, Any] | None = None
) -> str | None:
    """The cause of a failed episode from its final state (as JSON); None for a success.

    `summary` is the final observation's `info["faults"]` when the run saw it: the server's
    own count of writes applied twice (`double_applied_writes`) then settles the first clause.
    """
    if success:
        return None
    calls, faults = state.get("call_history") or [], state.get("faults") or []
    if (summary or {}).get("double_applied_writes") or double_writes(calls, faults):
        return "fault_double_write"
    if unretried(calls, faults):
        return "fault_unretried"
    return "agent"


def fault_counts(state: Mapping[str, Any]) -> dict[str, int]:
    """The faults the episode was served, by kind."""
    counts: dict[str, int] = {}
    for fault in state.get("faults") or []:
        kind = str(fault.get("kind"))
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def failure_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Failed episodes by cause (every cause listed, zeros too), for the summary and reports."""
    counts = dict.fromkeys(CAUSES, 0)
    for record in records:
        if not record.get("success"):
            cause = record.get("failure_cause") or "agent"
            counts[cause] = counts.get(cause, 0) + 1
    return counts
