"""ServiceBench's fault schedule: services that fail like real ones, deterministically.

`reset(..., faults="light"|"heavy")` makes the episode's services fail now and then
(data/servicebench_faults.json holds the rates, as data: light ~10% of calls, heavy
~30%). A fault is an answer inside the observation's `api_response`, never an HTTP error:

* ``{"status_code": 503, "error": ...}``: the service is unavailable; nothing happened.
* ``{"status_code": 429, "error": ..., "retry_after_steps": N}`` (N from 1 to 3): the
  service is rate limited; every call to that service before N steps have passed is
  answered 429 again (with the steps still to wait), and is a fault too.
* ``{"status_code": 504, "error": ...}``: the call timed out. A read did nothing; a write
  may or may not have been applied (the schedule decides), and the answer never says
  which: only a lookup tells (or the write's `idempotency_key`, sent again).
* A stale read: a read right after a write to the same record may show the record as it
  was before that write (status 200, old data), once.

The schedule is a pure function of the episode's identity (the variant's task, family and
seed, its draw attempt, and the level) and of the calls (step and route): keyed BLAKE2b, never Python's
`hash()`, so the same reset and the same actions meet the same faults in any process (a
replayed episode too). No route is answered by a fault more than `max_consecutive_faults`
times in a row (rate-limit waits included), so an agent that retries always gets through.
Calls no endpoint serves (404, 405) never fault: they fail as before.

`FaultPlan.decide` is the schedule; server/servicebench/faults/calls.py plays it against an
episode's services and keeps what a fault leaves behind (a rate limit, an unknown write).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .... import DATA_DIR
from ....read_only_json import read_only

FAULTS_PATH = DATA_DIR / "servicebench_faults.json"
FAULT_DATA: Mapping[str, Any] = read_only(json.loads(FAULTS_PATH.read_text(encoding="utf-8")))
LEVELS: tuple[str, ...] = tuple(FAULT_DATA["levels"])
"""The fault levels a reset may name, "off" first."""
UNAVAILABLE, RATE_LIMITED, TIMEOUT, STALE_READ = (
    "unavailable",
    "rate_limited",
    "timeout",
    "stale_read",
)
ANSWERED_KINDS = (UNAVAILABLE, RATE_LIMITED, TIMEOUT)
"""The faults that answer instead of the service, in the order the schedule draws them."""
STATUS = {UNAVAILABLE: 503, RATE_LIMITED: 429, TIMEOUT: 504}
MESSAGES = {
    UNAVAILABLE: "{service} service unavailable: nothing was done, try again",
    RATE_LIMITED: "{service} service rate limited: retry after {wait} step(s)",
    TIMEOUT: "{service} service timed out: the call may or may not have been applied",
}
RETRY_AFTER = tuple(FAULT_DATA["retry_after_steps"])
MAX_CONSECUTIVE = int(FAULT_DATA["max_consecutive_faults"])
WRITE_APPLIED = float(FAULT_DATA["timeout_write_applied"])
BUDGET = FAULT_DATA["budget"]
Route = tuple[str, str, str]


def fault_answer(kind: str, service: str, wait: int = 0) -> dict[str, Any]:
    """The `api_response` of a fault (a 429's `retry_after_steps`: the steps still to wait)."""
    answer: dict[str, Any] = {
        "status_code": STATUS[kind],
        "error": MESSAGES[kind].format(service=service, wait=wait),
    }
    if kind == RATE_LIMITED:
        answer["retry_after_steps"] = wait
    return answer


def fault_cost(kind: str, write: bool) -> int:
    """How many steps a fault answer adds to the budget: one for the call it spoilt, and for
    a timeout on a write one more, for the lookup that settles whether it applied."""
    return int(BUDGET["per_write_timeout"] if kind == TIMEOUT and write else BUDGET["per_fault"])


def most_growth(max_steps: int) -> int:
    """The most the faults can add to a task's budget (what bounds an episode's length)."""
    return int(BUDGET["max_growth_per_max_steps"] * max_steps)


class Scheduled(NamedTuple):
    """The fault the schedule picks for a call: its kind, a 429's wait, a timed-out write's fate."""

    kind: str
    wait: int = 0
    applied: bool = False


@dataclass(frozen=True)
class FaultPlan:
    """One episode's schedule: its rates and the key of its identity."""

    level: str
    rates: Mapping[str, float]
    key: bytes

    @classmethod
    def of(
        cls, level: str, task_id: str, family: str | None, seed: int | None, attempt: int = 0
    ) -> FaultPlan:
        """The schedule of the variant (task, family, seed; the variant cache's attempt, itself
        a function of them) at `level`. The attempt is in it so that a draw the proof
        rejects is not followed by draws meeting the very same faults."""
        identity = json.dumps([task_id, family, seed, level, attempt]).encode()
        key = hashlib.blake2b(identity, digest_size=32, person=b"sb-fault-plan").digest()
        return cls(level, FAULT_DATA["levels"][level], key)

    def draw(self, step: int, route: Route, purpose: str) -> float:
        """A uniform number in [0, 1) for (step, route, purpose): the schedule's only chance."""
        text = json.dumps([step, *route, purpose]).encode()
        digest = hashlib.blake2b(text, digest_size=8, key=self.key).digest()
        return int.from_bytes(digest, "big") / 2**64

    def decide(self, step: int, route: Route, write: bool) -> Scheduled | None:
        """The fault that answers the call at `step` to `route`, or None (the service does)."""
        chance = self.draw(step, route, "kind")
        for kind in ANSWERED_KINDS:
            rate = self.rates[kind]
            if chance < rate:
                wait = RETRY_AFTER[0] + int(
                    self.draw(step, route, "wait") * (RETRY_AFTER[1] - RETRY_AFTER[0] + 1)
                )
                applied = write and self.draw(step, route, "applied") < WRITE_APPLIED
                return Scheduled(kind, wait if kind == RATE_LIMITED else 0, applied)
            chance -= rate
        return None

    def stale(self, step: int, route: Route) -> bool:
        """Whether a read at `step` right after a write to its record shows the old record."""
        return self.draw(step, route, STALE_READ) < self.rates[STALE_READ]
