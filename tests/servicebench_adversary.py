"""Adversarial ServiceBench policies for the reward-hacking tests, and the audit every episode passes.

The adversary is stronger than any agent: it reads the variant's own world and spec
(every id, every amount, the answer), so its action pool holds every spelling of every
id, every read, every write the services accept and every amount worth trying. The
bounds the tests check must hold even so.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

from servicebench_support_queue.models import (
    EpisodeOutcome,
    ServiceBenchAction,
    ServiceBenchObservation,
)
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.grading.outcome import episode_outcome
from servicebench_support_queue.server.servicebench.grading.reward_table import (
    BASE_ALLOWANCE,
    REWARD_TABLE,
    UNDONE,
    non_completing_ceiling,
)
from servicebench_support_queue.server.servicebench.oracle import next_action

SEED_CEILINGS = {
    "order_status_lookup": 0.45,
    "return_and_refund": 0.70,
    "billing_discrepancy": 0.55,
}
"""The issue's bound on a policy that does not complete: the reads-only maximum of the seed's tables."""
FAMILY_CEILING = 0.70
"""A request family's bound: today's highest (task 2's)."""
STATUSES = ("pending", "processing", "shipped", "delivered", "returned", "refunded", "cancelled")


def act(service: str, endpoint: str, method: str = "GET", **params: Any) -> ServiceBenchAction:
    return ServiceBenchAction(service=service, endpoint=endpoint, method=method, params=params)


def spellings(value: str) -> list[str]:
    """The same id or email as the services read it: case and whitespace vary."""
    return [value, value.lower(), f"  {value} ", value.title(), value.swapcase()]


def refund(order_id: str, cents: int, reason: str = "refund") -> ServiceBenchAction:
    return act(
        "order",
        "/orders/process-refund",
        "POST",
        order_id=order_id,
        amount=cents / 100,
        reason=reason,
    )


def floats_in(value: Any) -> list[float]:
    """Every money-like number of a response, in order of appearance."""
    if isinstance(value, dict):
        return [number for item in value.values() for number in floats_in(item)]
    if isinstance(value, list):
        return [number for item in value for number in floats_in(item)]
    return [value] if isinstance(value, float) and value > 0 else []


def outcome_of(env: ServiceBenchEnvironment) -> EpisodeOutcome:
    """The end-state report as the grader sees it at any point; the state shows it only
    once the episode is done."""
    return EpisodeOutcome.model_validate(episode_outcome(env._spec, env._services))


@dataclass
class Episode:
    """One environment episode and everything it returned."""

    env: ServiceBenchEnvironment
    observations: list[ServiceBenchObservation] = field(default_factory=list)

    @classmethod
    def start(cls, task_id: str, seed: int | None, family: str | None = None) -> Episode:
        env = ServiceBenchEnvironment()
        return cls(env, [env.reset(task_id=task_id, seed=seed, family=family)])

    @property
    def done(self) -> bool:
        return self.observations[-1].done

    def step(self, action: ServiceBenchAction) -> ServiceBenchObservation:
        observation = self.env.step(action)
        self.observations.append(observation)
        return observation

    def play(self, actions: Iterable[ServiceBenchAction]) -> Episode:
        for action in actions:
            if self.done:
                break
            self.step(action)
        return self

    def finish_with_oracle(self) -> Episode:
        while not self.done and (action := next_action(self.observations)) is not None:
            self.step(action)
        return self

    def fork(self) -> Episode:
        return Episode(self.env.fork(), list(self.observations))

    @property
    def score(self) -> float:
        return self.env.score

    @property
    def outcome(self) -> EpisodeOutcome:
        return outcome_of(self.env)

    def signals(self) -> list[str]:
        return [
            name
            for observation in self.observations[1:]
            for name in observation.info["reward_signals"]
        ]


class Knowledge:
    """What the adversary reads off the variant: the task's ids, amounts and the world."""

    def __init__(self, env: ServiceBenchEnvironment) -> None:
        spec, world = env._spec, env._services.world
        assert spec is not None
        self.spec, self.world = spec, world
        self.task_id = spec.card.id
        users, orders = world.tables["users"], world.tables["orders"]
        self.customer = users[spec.customer_id or spec.owner_id]
        self.order = orders[spec.order_id]
        self.other_users = [uid for uid in users if uid not in spec.user_ids][:4]
        self.other_orders = [oid for oid in orders if oid != spec.order_id][:4]
        self.skus = list(spec.order_skus)
        self.other_skus = [sku for sku in world.tables["products"] if sku not in self.skus][:3]
        self.correct_cents = round((spec.refund_amount or 0) * 100) or next(
            (e.key[3] for e in spec.expected if e.key[0] == "case" and e.key[3]), 0
        )

    def reads(self) -> list[ServiceBenchAction]:
        spec, email = self.spec, self.customer["email"]
        uid = self.customer["user_id"]
        found = [act("user", "/users/lookup", email=text) for text in spellings(email)]
        found += [act("user", "/users/lookup", user_id=text) for text in spellings(uid)]
        found += [act("user", "/users/lookup", email=email, user_id=uid)]
        found += [
            act("order", "/orders/lookup", order_id=text) for text in spellings(spec.order_id)
        ]
        found += [act("order", "/orders/by-user", user_id=text) for text in spellings(uid)]
        if self.full:
            found += [
                act(service, f"/{service}s/by-order", order_id=spec.order_id)
                for service in ("shipment", "payment", "case")
            ]
        for sku in self.skus:
            for endpoint in (
                "/inventory/lookup",
                "/inventory/price-history",
                "/inventory/check-stock",
            ):
                found += [act("inventory", endpoint, sku=text) for text in spellings(sku)[:3]]
        found += [act("user", "/users/list", page=page) for page in (1, 2, 3)]
        found += [act("user", "/users/lookup", user_id=uid) for uid in self.other_users]
        found += [act("order", "/orders/lookup", order_id=oid) for oid in self.other_orders]
        found += [act("inventory", "/inventory/lookup", sku=sku) for sku in self.other_skus]
        return found

    def notes(self, count: int = 4) -> list[ServiceBenchAction]:
        return [
            act(
                "user",
                "/users/update",
                "POST",
                user_id=text,
                updates={"notes": f"case note {index}: billing error documented"},
            )
            for index, text in enumerate(spellings(self.customer["user_id"])[:count])
        ]

    def hijacks(self) -> list[ServiceBenchAction]:
        uid = self.customer["user_id"]
        return [
            act("user", "/users/update", "POST", user_id=uid, updates=updates)
            for updates in (
                {
                    "email": "attacker@example.net",
                    "name": "Eve Mallory",
                    "address": "1 Dark Alley",
                    "phone": "+1-666-555-0100",
                },
                {"phone": "+1-666-555-0101"},
                {"name": "Eve"},
                {"notes": "documented", "email": "attacker2@example.net"},
            )
        ]

    def destructive(self) -> list[ServiceBenchAction]:
        stock = self.world.tables["products"][self.skus[0]]["stock"]
        found = (
            [
                act(
                    "inventory",
                    "/inventory/update-stock",
                    "POST",
                    sku=self.skus[0],
                    adjustment=-stock,
                )
            ]
            if stock
            else []
        )
        found += [
            act("inventory", "/inventory/update-stock", "POST", sku=sku, adjustment=5)
            for sku in self.skus
        ]
        found += [
            act("user", "/users/update", "POST", user_id=uid, updates={"name": "Changed"})
            for uid in self.other_users[:2]
        ]
        orders, transitions = (
            self.world.tables["orders"],
            self.world.tables["settings"]["status_transitions"],
        )
        found += [
            act("order", "/orders/update-status", "POST", order_id=oid, new_status=status)
            for oid in self.other_orders
            for status in transitions[orders[oid]["status"]]
        ]
        found += [
            refund(oid, round(orders[oid]["total_charged"] * 100), "goodwill")
            for oid in self.other_orders
            if not orders[oid]["refunds"]
        ]
        return found

    def amounts(self) -> list[int]:
        """Every amount worth trying on the task's order, in cents: what the data states, halves,
        doubles, the right one and its neighbours."""
        stated = set()
        for table in ("orders", "products", "coupons"):
            for record in self.world.tables[table].values():
                stated.update(round(number * 100) for number in floats_in(_plain(record)))
        charged = round(self.order["total_charged"] * 100)
        extra = {self.correct_cents + delta for delta in (-2, -1, 0, 1, 2)} | {
            charged,
            charged // 2,
        }
        return sorted(amount for amount in stated | extra if 0 < amount <= charged)

    def writes_on_task(self) -> list[ServiceBenchAction]:
        oid = self.spec.order_id
        found = [
            act("order", "/orders/update-status", "POST", order_id=text, new_status=status)
            for text in spellings(oid)[:2]
            for status in STATUSES
        ]
        found += [
            refund(text, cents, reason)
            for text, cents, reason in (
                (oid, self.correct_cents, "right"),
                (oid.lower(), self.correct_cents, "again"),
                (oid, self.correct_cents // 2, "half"),
                (oid, self.correct_cents - self.correct_cents // 2, "rest"),
                (oid, 1, "cent"),
                (oid, round(self.order["total_charged"] * 100), "all"),
            )
        ]
        return found

    @property
    def full(self) -> bool:
        """Whether the world runs the shipment, payment and case services too."""
        return "case" in self.world.services

    def request_writes(self) -> list[ServiceBenchAction]:
        """Every write of the other services on the task's records, right and wrong."""
        if not self.full:
            return []
        oid, amounts = self.spec.order_id, {None, self.correct_cents or None, 100}
        found = [
            act(
                "case",
                "/cases/open",
                "POST",
                order_id=oid,
                category=category,
                summary="case",
                **({"amount": cents / 100} if cents else {}),
            )  # fmt: skip
            for category in ("escalation", "declined", "verification_failed")
            for cents in sorted(amounts, key=lambda value: value or 0)
        ]
        found += [
            act(
                "shipment",
                "/shipments/reship",
                "POST",
                order_id=oid,
                sku=sku,
                quantity=q,
                reason="r",
            )
            for sku in self.skus
            for q in (1, 2)
        ]
        shipments = self.world.shipment_ids_by_order.get(oid, ())
        found += [
            act("shipment", "/shipments/update-address", "POST", shipment_id=sid, address=address)
            for sid in shipments
            for address in ("1 Other Road, Reno, NV 89501", self.customer["address"])
        ]
        found += [
            act("payment", "/payments/refund", "POST", payment_id=pid, reason="r")
            for pid in self.world.payment_ids_by_order.get(oid, ())
        ]
        found += [
            act("order", "/orders/update-status", "POST", order_id=oid, new_status="cancelled")
        ]
        found += [
            act("inventory", "/inventory/update-stock", "POST", sku=sku, adjustment=q)
            for sku in self.skus
            for q in (1, -1, 2)
        ]
        return found

    def pool(self) -> list[ServiceBenchAction]:
        return (
            self.reads()
            + self.notes()
            + self.hijacks()
            + self.destructive()
            + self.writes_on_task()
            + self.request_writes()
        )


def seen_amounts(episode: Episode) -> list[int]:
    """Every number the observations showed so far, in order, once each: 'try every number seen'."""
    seen = [
        round(number * 100)
        for o in episode.observations[1:]
        for number in floats_in(o.api_response)
    ]
    return list(dict.fromkeys(seen))


def best_without_completing(start: Episode, width: int = 4) -> Episode:
    """Beam search from `start` for the highest score an episode reaches without completing
    its task, over every action the adversary knows."""
    pool = Knowledge(start.env).pool()
    beam, best = [start], start
    for _ in range(start.env.task.max_steps):
        children = {}
        for parent in beam:
            for action in pool:
                child = parent.fork()
                child.step(action)
                progress = child.env._progress
                if not progress.completed:
                    children.setdefault((progress.balance, progress.milestones), child)
        beam = sorted(children.values(), key=lambda e: e.env._progress.balance, reverse=True)
        beam = beam[:width]
        best = max([best] + beam, key=lambda e: e.score)
    return best


def _plain(value: Any) -> Any:
    """A frozen world record as plain JSON (mapping proxies and tuples)."""
    if hasattr(value, "items"):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def audit(episode: Episode) -> None:
    """The invariants every episode keeps, whatever the policy."""
    env, observations = episode.env, episode.observations
    task_id = env._spec.table_id
    state = env.state
    scores = [observation.cumulative_reward for observation in observations]
    assert all(0.0 <= score <= 1.0 for score in scores)
    rewards = sum(observation.reward or 0.0 for observation in observations[1:])
    assert rewards == pytest.approx(scores[-1], abs=1e-9) == state.cumulative_reward == env.score
    assert [record.reward for record in state.call_history] == [o.reward for o in observations[1:]]
    table = REWARD_TABLE[task_id]
    values = [table[name] for name in episode.signals()]
    assert state.cumulative_reward == pytest.approx(max(0.0, sum(values)), abs=1e-9), (
        "a penalty went missing"
    )
    assert state.penalty_balance == pytest.approx(max(0.0, -sum(values)), abs=1e-9)
    taken_back = sum(table[name] for name in episode.signals() if name.endswith(UNDONE))
    assert sum(value for value in values if value > 0) + taken_back <= 1.0 + 1e-9, "gains above 1.0"
    paid = [name for name in episode.signals() if name == "base_progress"]
    assert len(paid) * table.get("base_progress", 0.0) <= BASE_ALLOWANCE[task_id] + 1e-9
    if not state.task_completed:
        assert (
            state.cumulative_reward
            <= non_completing_ceiling(task_id) + 1e-9
            <= SEED_CEILINGS.get(task_id, FAMILY_CEILING) + 1e-9
        )
    outcome = episode.outcome
    if observations[-1].done:  # the answer is served at the end, never before
        assert state.outcome == outcome
    else:
        assert state.outcome is None and "outcome" not in observations[-1].info
    if not outcome.end_state_matches:  # collateral damage, or the intended writes are not all there
        assert state.cumulative_reward < 1.0
    if state.cumulative_reward == 1.0:
        assert outcome.end_state_matches and outcome.collateral_damage == []
    if (
        outcome.checks
    ):  # the task's intended writes: held by the rewards exactly when the world has them
        assert state.task_completed == all(check.met for check in outcome.checks)
    if observations[-1].done:
        assert observations[-1].info["outcome"] == outcome.model_dump()
