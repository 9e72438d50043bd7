"""The request mixes every load generator plays, derived from the optimal policy.

A `Plan` is a cycle of episodes, each a reset body and the step actions that
follow it. The ServiceBench plans are not typed in: they are played once
in-process with the oracle policy and checked to score 1.0, so they stay right
when the data or the tasks change. The peers play the same shape of cycle
(same number of resets and steps) with their echo action.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.oracle import next_action

ECHO_ACTION = '{"message":"hello"}'


@dataclass(frozen=True)
class EpisodePlan:
    reset_body: str
    steps: tuple[str, ...]
    ends_done: bool | None = None
    """True: the last step must finish the episode with score 1.0; False: must not; None: unchecked."""


@dataclass(frozen=True)
class Plan:
    name: str
    episodes: tuple[EpisodePlan, ...]

    @property
    def steps_per_cycle(self) -> int:
        return sum(len(episode.steps) for episode in self.episodes)

    def as_echo(self) -> Plan:
        """The same cycle for a peer: a bare reset and the echo action at every step."""
        return Plan(
            f"{self.name}-echo",
            tuple(
                EpisodePlan("{}", (ECHO_ACTION,) * len(episode.steps)) for episode in self.episodes
            ),
        )


def _optimal_actions(task_id: str) -> list[str]:
    """The oracle's calls for `task_id`, verified in-process to score exactly 1.0."""
    env = ServiceBenchEnvironment()
    history = [env.reset(task_id=task_id)]
    actions = []
    while (action := next_action(history)) is not None:
        actions.append(action.model_dump_json(exclude={"metadata"}))
        history.append(env.step(action))
    if not (history[-1].done and env.score == 1.0):
        raise RuntimeError(f"oracle path for {task_id} does not score 1.0: {env.score}")
    return actions


def episode_mix(task_ids: Sequence[str] | None = None) -> Plan:
    """Whole ServiceBench episodes: each task's reset, then its optimal path. `task_ids` picks
    the tasks (default: every task card), e.g. those an older revision also serves."""
    ids = [card.id for card in ServiceBenchEnvironment.tasks] if task_ids is None else task_ids
    return Plan(
        "episode-mix",
        tuple(
            EpisodePlan(json.dumps({"task_id": task_id}), tuple(_optimal_actions(task_id)), True)
            for task_id in ids
        ),
    )


def step_cycle() -> Plan:
    """Mostly steps: the hardest task reset, then its order lookup until one step is left."""
    card = ServiceBenchEnvironment.tasks[-1]
    lookup = _optimal_actions(card.id)[1]
    return Plan(
        "single-step",
        (EpisodePlan(json.dumps({"task_id": card.id}), (lookup,) * (card.max_steps - 1), False),),
    )


def _lua_string(text: str) -> str:
    if "]==]" in text:
        raise ValueError("body would end the Lua long string")
    return f"[==[{text}]==]"


def write_lua(plan: Plan, path: Path, reset_path: str = "/reset", step_path: str = "/step") -> Path:
    """The plan as a Lua table for bench/lua/episodes.lua (`dofile`d by each wrk thread)."""
    lines = [
        "return {",
        f"  reset_path = {_lua_string(reset_path)},",
        f"  step_path = {_lua_string(step_path)},",
        "  episodes = {",
    ]
    for episode in plan.episodes:
        steps = ", ".join(_lua_string(step) for step in episode.steps)
        ends = "nil" if episode.ends_done is None else str(episode.ends_done).lower()
        lines.append(
            f"    {{ reset = {_lua_string(episode.reset_body)}, steps = {{ {steps} }}, "
            f"ends_done = {ends} }},"
        )
    lines += ["  },", "}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
