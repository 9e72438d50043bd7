"""Episodes played alone, in process: what a client must send, and what must come back.

The reliability and fault tests play these against servers, interleaved, across
restarts and crashes, and compare: every episode must end exactly as it did alone.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from servicebench_support_queue.models import (
    DISPOSITIONS,
    PRIORITIES,
    QUEUES,
    ServiceBenchAction,
    SupportQueueAction,
)
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment

WRONG_TURNS = (
    ServiceBenchAction(service="user", endpoint="/users/list", params={"page": 2}),
    ServiceBenchAction(
        service="inventory", endpoint="/inventory/check-stock", params={"sku": "SKU-445"}
    ),
    ServiceBenchAction(service="order", endpoint="/orders/lookup", params={"order_id": "ORD-9999"}),
    ServiceBenchAction(service="user", endpoint="/users/lookup"),
    ServiceBenchAction(service="billing", endpoint="/invoices"),
)


@dataclass(frozen=True)
class SoloEpisode:
    """An episode as it played alone, in-process: what to send and what must come back."""

    reset: dict[str, Any]
    actions: tuple[dict[str, Any], ...]
    rewards: tuple[float, ...]
    score: float
    state: dict[str, Any]
    """The final state as JSON, less the episode id (which differs by design)."""


def final_state(env: Any) -> dict[str, Any]:
    state = json.loads(env.state.model_dump_json())
    state.pop("episode_id")
    return state


def solo_servicebench(task_id: str, seed: int | None, rng: random.Random) -> SoloEpisode:
    """The oracle's path with seeded wrong turns (irrelevant, failing and repeated calls)."""
    env = ServiceBenchEnvironment()
    observation = env.reset(task_id=task_id, seed=seed)
    history = [observation]  # the oracle sees the wrong turns too, and skips them
    actions: list[ServiceBenchAction] = []
    rewards: list[float] = []
    while not observation.done:
        action = next_action(history)
        if action is None or rng.random() < 0.3:
            action = rng.choice([*WRONG_TURNS, *actions[-1:]])
        observation = env.step(action)
        history.append(observation)
        actions.append(action)
        rewards.append(observation.reward)
    return SoloEpisode(
        {"env": "servicebench", "task_id": task_id, "seed": seed},
        tuple(a.model_dump(exclude={"metadata"}) for a in actions),
        tuple(rewards),
        env.score,
        final_state(env),
    )


def solo_support_queue(task_id: str, seed: int | None, rng: random.Random) -> SoloEpisode:
    """Seeded random triage decisions, so that scores differ from episode to episode."""
    env = SupportQueueEnvironment()
    observation = env.reset(task_id=task_id, seed=seed)
    actions, rewards = [], []
    while not observation.done:
        action = SupportQueueAction(
            priority=rng.choice(PRIORITIES),
            queue=rng.choice(QUEUES),
            disposition=rng.choice(DISPOSITIONS),
            summary=f"triage note {rng.randrange(10**6)}",
            response="We are looking into it.",
            confidence=round(rng.random(), 3),
        )
        observation = env.step(action)
        actions.append(action.model_dump(exclude={"metadata"}))
        rewards.append(observation.reward)
    return SoloEpisode(
        {"env": "support_queue", "task_id": task_id, "seed": seed},
        tuple(actions),
        tuple(rewards),
        env.score,
        final_state(env),
    )


def solo_episodes(count: int, seed: int = 7) -> list[SoloEpisode]:
    rng = random.Random(seed)
    episodes = []
    for number in range(count):
        env_cls, play = (
            (ServiceBenchEnvironment, solo_servicebench)
            if number % 2 == 0
            else (SupportQueueEnvironment, solo_support_queue)
        )
        card = rng.choice(env_cls.tasks)
        episodes.append(play(card.id, rng.choice([None, 1, 2, 3]), rng))
    return episodes
