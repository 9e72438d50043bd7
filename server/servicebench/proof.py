"""Generation-time validity: a variant is served only once it is proven.

`prove(variant, make_env)` plays the fallback oracle (server/servicebench/oracle,
which reads observations only and is never told the answer) against a fresh
environment on that variant, and rejects the variant unless:

1. the oracle completes the task with exactly the optimal number of calls, every
   call succeeding (but the lookup of a requester no account has), the reward-table
   rows it earns sum to exactly 1.0 before any clamping (so the final score is
   exactly 1.0), and the world it leaves is exactly the expected end state (the
   intended writes, nothing else: outcome.py);
2. the prompt names the variant's identifiers;
3. for a refund task, exactly one refund amount is correct: the oracle's amount, the
   grader's amount (`spec.refund_amount`, from the construction) and the right
   reading derived from the world's records (server/servicebench/refund_readings) agree to
   the cent; every wrong-but-plausible reading lies more than a cent away (so that no
   variant hangs on how a reader rounds a cent) and, issued in place of the oracle's
   refund, is graded a wrong amount; and so is the right amount a cent over or under
   (refunds are graded in exact cents: outcome.expectation_met);
4. no derived amount (`variant.hidden_cents`) is stated in the prompt or in any
   response the oracle combined: it has to be worked out;
5. at every fault level (server/servicebench/faults/schedule.py), the oracle playing through
   the variant's faults still scores exactly 1.0, its rows summing to 1.0, and leaves
   exactly the expected end state.

The environment is passed in as a factory, so this module sits below the
environment in the import order and the environment can prove its own variants.
Only these checks reject a variant (`require`, server/tasks/variants.py): an exception
raised while the oracle plays is a bug in the oracle or the generator, and it
propagates.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ...mock_services import to_cents
from ...mock_services.paths import ORDERS_PROCESS_REFUND, USERS_LOOKUP
from ...models import ServiceBenchAction, ServiceBenchObservation
from ..tasks.variants import require
from .faults.schedule import LEVELS
from .grading.rewards import REWARD_TABLE
from .oracle import next_action
from .variants import Variant

OPTIMAL_CALLS = {"order_status_lookup": 2, "return_and_refund": 5, "billing_discrepancy": 4}
"""The seed tasks' optimal paths (a request family's variant states its own)."""
CORRECT_REFUND_SIGNALS = frozenset(
    {"correct_refund_issued", "correct_adjustment_issued", "refund_issued"}
)
WRONG_AMOUNT_SIGNALS = frozenset({"wrong_refund_amount", "wrong_amount"})
FAULT_LEVELS = LEVELS[1:]
"""The levels a variant is also proven at (every one but "off")."""


class PlayableEnvironment(Protocol):
    """What the proof needs of an environment (ServiceBenchEnvironment, passed in by it)."""

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: Any = None,
        variant: Any = None,
        faults: str = "off",
    ) -> ServiceBenchObservation: ...

    def step(self, action: ServiceBenchAction) -> ServiceBenchObservation: ...

    def fork(self) -> PlayableEnvironment: ...


@dataclass
class OracleRun:
    """The oracle's episode: what it saw, what it called, and a snapshot to try other refunds."""

    history: list[ServiceBenchObservation]
    """Observations, the reset's first."""
    actions: list[ServiceBenchAction]
    before_refund: PlayableEnvironment | None = None
    """A fork of the episode just before the oracle's first refund."""

    @property
    def refund(self) -> ServiceBenchAction | None:
        return next(
            (action for action in self.actions if action.endpoint == ORDERS_PROCESS_REFUND), None
        )


def play_oracle(variant: Variant, env: PlayableEnvironment, faults: str = "off") -> OracleRun:
    """The oracle's whole episode on the variant (its services failing at `faults`)."""
    first = env.reset(seed=variant.seed, task_id=variant.task_id, variant=variant, faults=faults)
    run = OracleRun([first], [])
    while not run.history[-1].done and (action := next_action(run.history)) is not None:
        if action.endpoint == ORDERS_PROCESS_REFUND and run.before_refund is None:
            run.before_refund = env.fork()
        run.actions.append(action)
        run.history.append(env.step(action))
    return run


def _graded_wrong(
    before_refund: PlayableEnvironment, refund: ServiceBenchAction, amount: float
) -> bool:
    """Whether issuing this amount instead of the oracle's refund is graded a wrong refund."""
    wrong = refund.model_copy(update={"params": {**refund.params, "amount": amount}})
    observation = before_refund.fork().step(wrong)
    signals = observation.info.get("reward_signals", [])
    if not observation.success:
        return True  # refused by the service (e.g. more than was charged): not a correct refund
    return bool(WRONG_AMOUNT_SIGNALS & set(signals)) and not CORRECT_REFUND_SIGNALS & set(signals)


def _numbers_and_text(value: Any, numbers: list[int], text: list[str]) -> None:
    """Collect every money amount (JSON floats, as cents) and every string of a response."""
    if isinstance(value, dict):
        for item in value.values():
            _numbers_and_text(item, numbers, text)
    elif isinstance(value, list):
        for item in value:
            _numbers_and_text(item, numbers, text)
    elif isinstance(value, float):
        numbers.append(to_cents(value))
    elif isinstance(value, str):
        text.append(value)


MONEY_IN_TEXT = re.compile(r"(?<![\d.])(\d+)\.(\d{2})(?!\d)")


def _stated_amounts(prompt: str, run: OracleRun) -> frozenset[int]:
    """Every amount (cents) the prompt or a read response states, as a number or as text."""
    numbers: list[int] = []
    text = [prompt]
    for action, observation in zip(run.actions, run.history[1:], strict=True):
        if action.method == "GET":
            _numbers_and_text(observation.api_response.get("data", {}), numbers, text)
    found = {int(whole) * 100 + int(part) for whole, part in MONEY_IN_TEXT.findall(" ".join(text))}
    return frozenset(numbers) | found


def _rows_sum(table_id: str, history: list[ServiceBenchObservation]) -> float:
    """What the reward-table rows the episode triggered add up to, before any clamping."""
    table = REWARD_TABLE[table_id]
    earned = sum(
        table[signal]
        for observation in history[1:]
        for signal in observation.info["reward_signals"]
    )
    return round(earned, 6)


def _require_perfect(variant: Variant, run: OracleRun, level: str) -> None:
    """The oracle's episode scored exactly 1.0, its rows summing to 1.0 before clamping,
    and left exactly the expected end state (`level`: the services' faults)."""
    last = run.history[-1]
    where = "" if level == "off" else f", with faults {level}"
    require(
        last.done and last.task_completed and last.cumulative_reward == 1.0,
        variant,
        f"oracle scored {last.cumulative_reward}, not 1.0{where}",
    )
    outcome = last.info["outcome"]
    require(
        outcome["end_state_matches"],
        variant,
        f"oracle's end state differs{where}: {outcome['checks']}, {outcome['collateral_damage']}",
    )
    earned = _rows_sum(variant.spec.table_id, run.history)
    require(earned == 1.0, variant, f"reward rows sum to {earned} before clamping{where}")


def prove(variant: Variant, make_env: Callable[[], PlayableEnvironment]) -> float | None:
    """Raise `VariantRejected` unless the variant is solvable and uniquely graded.

    Returns the oracle's refund amount (None for a task without a refund).
    """
    run = play_oracle(variant, make_env())  # the oracle raising is a bug, never a rejection
    history, actions = run.history, run.actions
    prompt = variant.spec.card.description
    spec = variant.spec
    optimal = spec.optimal_calls or OPTIMAL_CALLS[variant.task_id]
    require(
        len(actions) == optimal, variant, f"oracle made {len(actions)} calls, optimal is {optimal}"
    )
    failed = [action for action, seen in zip(actions, history[1:], strict=True) if not seen.success]
    unknown_requester = not spec.customer_id and [a.endpoint for a in failed] == [USERS_LOOKUP]
    require(not failed or unknown_requester, variant, "an oracle call failed")
    _require_perfect(variant, run, "off")
    for level in FAULT_LEVELS:  # the oracle retries, waits, keys its writes, checks timeouts
        _require_perfect(variant, play_oracle(variant, make_env(), level), level)
    require(
        all(mention in prompt for mention in variant.mentions),
        variant,
        "prompt lacks an identifier",
    )

    refund: float | None = None
    if variant.readings is not None:
        require(
            run.refund is not None and run.before_refund is not None,
            variant,
            "oracle issued no refund",
        )
        assert run.refund is not None and run.before_refund is not None
        refund = float(run.refund.params["amount"])
        correct = variant.readings.correct
        require(
            to_cents(refund) == correct == to_cents(variant.spec.refund_amount or 0),
            variant,
            f"oracle {refund}, readings {correct}, grader {variant.spec.refund_amount} disagree",
        )
        graded: set[int] = set()
        for name, amount in variant.readings.wrong.items():
            require(
                abs(amount - correct) > 1, variant, f"reading {name} ({amount}) is also correct"
            )
            if amount not in graded:
                graded.add(amount)
                require(
                    _graded_wrong(run.before_refund, run.refund, amount / 100),
                    variant,
                    f"reading {name} ({amount}) is not graded wrong",
                )
        for near in (correct - 1, correct + 1):  # a cent off: another amount, graded wrong
            require(
                _graded_wrong(run.before_refund, run.refund, near / 100),
                variant,
                f"{near} cents, a cent off the right {correct}, is not graded wrong",
            )
    if variant.hidden_cents:
        stated = _stated_amounts(prompt, run)
        for amount in variant.hidden_cents:
            require(amount not in stated, variant, f"{amount} cents is stated outright")
    return refund
