"""Controls of fault handling: the oracle with one bad habit each, to show faults are graded.

Both play the oracle's calls (oracle.py), so without faults they solve every task as it
does; with faults on (`reset(..., faults="light" | "heavy")`) each mishandles them:

* `blind_resender`: sends its writes without an `idempotency_key` and, whenever a write
  is answered with an error (a 503, 429 or 504 among them), sends it again at once, still
  without a key. A 504 write that had been applied is then applied twice: collateral
  damage, the task not completed.
* `never_retrier`: gives up at the first fault it is answered (503, 429 or 504): the
  episode ends there, unfinished.

tests/server/servicebench/faults/test_controls.py holds both below the oracle at light
and heavy; bench/fault_scores.py measures all three at every level for the docs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ....mock_services.registry import IDEMPOTENCY_KEY as KEY
from ....models import ServiceBenchAction, ServiceBenchObservation
from ..environment import ServiceBenchEnvironment
from ..oracle import next_action
from .schedule import STATUS

FAULT_STATUS = frozenset(STATUS.values())
"""The status codes of injected faults (a stale read answers 200 with old data)."""
MAX_CALLS = 300
"""A bound on one episode's calls, whatever the budget: a control never loops for ever."""


@dataclass
class FaultPlay:
    """One episode of (task, seed, family) at a fault level: its observations and calls."""

    task_id: str
    seed: int | None
    family: str | None = None
    faults: str = "off"
    env: ServiceBenchEnvironment = field(default_factory=ServiceBenchEnvironment)
    history: list[ServiceBenchObservation] = field(default_factory=list)
    actions: list[ServiceBenchAction] = field(default_factory=list)

    def __post_init__(self) -> None:
        first = self.env.reset(
            task_id=self.task_id, seed=self.seed, family=self.family, faults=self.faults
        )
        self.history.append(first)

    @property
    def done(self) -> bool:
        return self.history[-1].done or len(self.actions) >= MAX_CALLS

    def send(self, action: ServiceBenchAction) -> None:
        self.actions.append(action)
        self.history.append(self.env.step(action))


def status(observation: ServiceBenchObservation) -> int | None:
    code = observation.api_response.get("status_code")
    return code if isinstance(code, int) else None


def is_write(action: ServiceBenchAction) -> bool:
    return action.method != "GET"


def without_key(action: ServiceBenchAction) -> ServiceBenchAction:
    params = {name: value for name, value in action.params.items() if name != KEY}
    return action.model_copy(update={"params": params})


def oracle(play: FaultPlay) -> None:
    """The optimal policy, which retries, waits, keys its writes and checks unknown writes."""
    while not play.done and (action := next_action(play.history)) is not None:
        play.send(action)


def blind_resender(play: FaultPlay) -> None:
    """The oracle's calls, writes without a key, and every failed write sent again at once."""
    while not play.done:
        last = play.actions[-1] if play.actions else None
        if last is not None and is_write(last) and play.history[-1].success is False:
            play.send(last)  # blind: no lookup first, no key to make it safe
            continue
        action = next_action(play.history)
        if action is None:
            return
        play.send(without_key(action) if is_write(action) else action)


def never_retrier(play: FaultPlay) -> None:
    """The oracle's calls, until the first fault: then it gives up."""
    while not play.done:
        if play.actions and status(play.history[-1]) in FAULT_STATUS:
            return
        action = next_action(play.history)
        if action is None:
            return
        play.send(action)


FAULT_CONTROLS: dict[str, Callable[[FaultPlay], None]] = {
    "oracle": oracle,
    "blind_resender": blind_resender,
    "never_retrier": never_retrier,
}
"""The oracle and the two controls of fault handling, by name."""


def run_fault_control(
    name: str, task_id: str, seed: int | None, family: str | None = None, faults: str = "off"
) -> FaultPlay:
    play = FaultPlay(task_id, seed, family, faults)
    FAULT_CONTROLS[name](play)
    return play
