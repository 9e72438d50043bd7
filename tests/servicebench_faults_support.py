"""Playing ServiceBench with faults in tests: policies, and schedules written by hand.

`scripted(env, {step: Scheduled(...)})` replaces an episode's schedule after its reset by
one that faults exactly the steps named (and reads stale exactly at `stale` steps), so a
grading test sets up the very situation it checks instead of searching seeds for it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from servicebench_support_queue.models import ServiceBenchAction, ServiceBenchObservation
from servicebench_support_queue.server.servicebench import oracle
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.faults.oracle import (
    KEY,
    through_faults,
    without_faults,
)
from servicebench_support_queue.server.servicebench.faults.schedule import (
    RATE_LIMITED,
    TIMEOUT,
    UNAVAILABLE,
    Scheduled,
)

Policy = Callable[[Sequence[ServiceBenchObservation]], ServiceBenchAction | None]
FAULT_KINDS = (UNAVAILABLE, RATE_LIMITED, TIMEOUT)


class ScriptedPlan:
    """A schedule that faults the steps it is given, whatever the call."""

    def __init__(
        self, faults: Mapping[int, Scheduled], stale: Collection[int] = (), level: str = "heavy"
    ) -> None:
        self.faults = dict(faults)
        self.stale_steps = set(stale)
        self.level = level
        self.rates = {"stale_read": 1.0 if stale else 0.0}

    def decide(self, step: int, route: Any, write: bool) -> Scheduled | None:
        return self.faults.get(step)

    def stale(self, step: int, route: Any) -> bool:
        return step in self.stale_steps


def scripted(
    env: ServiceBenchEnvironment, faults: Mapping[int, Scheduled], stale: Collection[int] = ()
) -> ServiceBenchEnvironment:
    assert env._faults is not None, "reset with faults on first"
    env._faults.plan = ScriptedPlan(faults, stale)  # type: ignore[assignment]
    return env


def play(
    policy: Policy,
    task_id: str | None = None,
    seed: int | None = None,
    family: str | None = None,
    faults: str = "heavy",
    env: ServiceBenchEnvironment | None = None,
    schedule: Mapping[int, Scheduled] | None = None,
    stale: Collection[int] = (),
    limit: int = 200,
) -> tuple[ServiceBenchEnvironment, list[ServiceBenchObservation]]:
    """One episode of `policy` (the history, reset observation first)."""
    env = env or ServiceBenchEnvironment()
    history = [env.reset(task_id=task_id, seed=seed, family=family, faults=faults)]
    if schedule is not None or stale:
        scripted(env, schedule or {}, stale)
    while not history[-1].done and len(history) <= limit:
        action = policy(history)
        if action is None:
            break
        history.append(env.step(action))
    return env, history


def oracle_policy(history: Sequence[ServiceBenchObservation]) -> ServiceBenchAction | None:
    return oracle.next_action(history)


def blind_resender(history: Sequence[ServiceBenchObservation]) -> ServiceBenchAction | None:
    """The oracle's procedure, with no key and no check: a spoilt call is simply sent again."""
    if history[-1].done:
        return None
    return oracle._planned(without_faults(history))


def keyed_resender(history: Sequence[ServiceBenchObservation]) -> ServiceBenchAction | None:
    """Keys its writes, never looks a timed-out write up: sends it again, with its key."""
    if history[-1].done:
        return None
    return through_faults(without_faults(history), oracle._planned)


def without_key(action: ServiceBenchAction) -> ServiceBenchAction:
    return action.model_copy(
        update={"params": {k: v for k, v in action.params.items() if k != KEY}}
    )
