"""The final-state outcome check, as tau2-bench grades: the world against the task's end state.

The expected end state of a task is the world at reset plus exactly the task's
intended writes, `spec.expected` (spec.py): expectations over effects (effects.py),
e.g. the task's order carries new refunds totalling exactly the derived amount, to the
cent (how many refunds and their reasons are free), task 2's order has the status
`returned`, a cancelled order's units are back in stock, one escalation case holds
the amount at stake. Task 3 also allows (but does not require) a note on the
customer's `notes` (`TaskSpec.note_fields`).

`episode_outcome(spec, services)` diffs the episode's copy-on-write overlay against
the shared world it started from (mock_services/state.py keeps only what the episode
wrote or added, so this reads a handful of records, once, when asked), reads the
effects off that diff, sorts every changed field or added record into intended
changes and collateral damage, and checks each expectation. A change to an intended
record that does not have the expected result (an over- or under-refund, another
status, a case with another amount) is collateral damage too. It is a report: the
reward rules (rewards.py) have penalised each damaging call as it was made.
This module depends on the services, the effects and the task specs only.

Amounts are compared in exact cents (`expectation_met`, the one place that decides whether
an effect is the task's): a cent over or under is another end state, as it is another
ledger. The services take an amount only in whole cents (a sub-cent amount such as 49.985
is refused with a 400, mock_services/orders.py), so no rounding can turn a wrong amount
into the right one. The rewards (rewards.py, milestones.py) and the variant proof
(proof.py) read the same function.

The report holds the expected end state, i.e. the answer: the environment serves it
only once the episode is done (the final observation's `info["outcome"]`, the state's
`outcome`), never before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ....mock_services import ServiceState, thaw
from ..spec import Expect, TaskSpec
from .effects import EffectKey, Effects, accumulate, change_key, effects_of_change

REFUND_TOLERANCE_CENTS = 0
"""Refunds are graded in exact cents (the proof checks that a cent either way is wrong)."""
NEW_RECORD = "(new record)"
"""The `field` of a change that is a whole record the episode added (a case, a shipment)."""
Report = dict[str, Any]


def expectation_met(expect: Expect, effects: Effects) -> bool:
    """Whether the effects hold the intended write (a refund total to the exact cent)."""
    actual = effects.get(expect.key)
    if expect.key[0] == "refund":
        return (
            actual is not None
            and actual > 0
            and abs(actual - expect.value) <= REFUND_TOLERANCE_CENTS
        )
    return actual == expect.value


def _diff(services: ServiceState) -> tuple[list[Report], Effects]:
    """Every field the episode changed, `{table, key, field, before, after}`, in write order
    (a record it added is one change of field `(new record)`), and the effects they hold."""
    changes: list[Report] = []
    effects: Effects = {}
    for table, key, before, after in services.written():
        effects = accumulate(effects, effects_of_change(table, key, before, after))
        if not before:
            changes.append(
                {
                    "table": table,
                    "key": key,
                    "field": NEW_RECORD,
                    "before": None,
                    "after": thaw(after),
                }
            )
            continue
        for field, value in after.items():
            previous = before.get(field)
            if previous != value:  # read-only world data equals its plain copy
                changes.append(
                    {
                        "table": table,
                        "key": key,
                        "field": field,
                        "before": thaw(previous),
                        "after": thaw(value),
                    }
                )
    return changes, effects


def world_changes(services: ServiceState) -> list[Report]:
    """Every field the episode changed, in write order (see `_diff`)."""
    return _diff(services)[0]


def _change_keys(change: Mapping[str, Any]) -> list[EffectKey]:
    if change["field"] == NEW_RECORD:
        return [
            key for key, _ in effects_of_change(change["table"], change["key"], {}, change["after"])
        ]
    key = change_key(change["table"], change["key"], change["field"])
    return [key] if key is not None else []


def _is_intended(spec: TaskSpec, change: Mapping[str, Any], met: Mapping[EffectKey, bool]) -> bool:
    """A change is intended when every effect it holds is an intended write that the world
    now holds as expected, or a write the task allows whatever its value (a case note)."""
    keys = _change_keys(change)
    return bool(keys) and all(met.get(key, key in spec.intended_keys) for key in keys)


def _current(services: ServiceState, table: str, key: str, field: str) -> Any:
    record = services.read(table, key)
    return None if record is None else record[field]


ShowCheck = Callable[[Expect, Effects, ServiceState], tuple[str, Any, Any]]
"""An expectation -> (record, expected, actual) as its outcome check shows them."""
SHOW: Mapping[str, ShowCheck] = {
    "refund": lambda e, fx, s: (
        f"orders/{e.key[1]}",
        e.value / 100,
        fx.get(e.key, 0) / 100,
    ),
    "status": lambda e, fx, s: (
        f"orders/{e.key[1]}",
        e.value,
        _current(s, "orders", e.key[1], "status"),
    ),
    "stock": lambda e, fx, s: (f"products/{e.key[1]}", e.value, fx.get(e.key, 0)),
    "reship": lambda e, fx, s: (f"orders/{e.key[1]}", e.value, fx.get(e.key, 0)),
    "address": lambda e, fx, s: (
        f"shipments/{e.key[1]}",
        e.value,
        _current(s, "shipments", e.key[1], "address"),
    ),
    "case": lambda e, fx, s: (f"orders/{e.key[1]}", e.value, fx.get(e.key, 0)),
    "reversal": lambda e, fx, s: (f"payments/{e.key[1]}", e.value, fx.get(e.key, 0)),
}


def episode_outcome(spec: TaskSpec, services: ServiceState) -> Report:
    """The outcome report (models.EpisodeOutcome's fields) of the episode as it stands."""
    changes, effects = _diff(services)
    met: dict[EffectKey, bool] = {}
    for expect in spec.expected:
        met[expect.key] = met.get(expect.key, True) and expectation_met(expect, effects)
    intended: list[Report] = []
    collateral: list[Report] = []
    for change in changes:
        (intended if _is_intended(spec, change, met) else collateral).append(change)
    checks = []
    for expect in spec.expected:
        record, expected, actual = SHOW[expect.key[0]](expect, effects, services)
        checks.append(
            {
                "name": expect.check,
                "record": record,
                "expected": expected,
                "actual": actual,
                "met": expectation_met(expect, effects),
            }
        )
    return {
        "end_state_matches": not collateral and all(check["met"] for check in checks),
        "checks": checks,
        "intended_changes": intended,
        "collateral_damage": collateral,
    }
