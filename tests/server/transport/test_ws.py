"""Whole episodes over OpenEnv's WebSocket protocol with openenv's own GenericEnvClient
(blocking, async, and OpenEnv 0.10's blocking use of the async client), at the root and
under both prefixes, and the protocol's error messages."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from openenv.core import GenericEnvClient
from robustness_support import TRIAGE
from websockets.asyncio.client import connect

from servicebench_support_queue.server.servicebench.oracle import next_action as servicebench_next
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.heuristic import triage

SUPPORT_QUEUE_TASKS = frozenset(card.id for card in SupportQueueEnvironment.tasks)


# (where the client points, the task, the seed): each environment at its prefix and at the root.
EPISODES = {
    "servicebench_prefix": ("/servicebench", "return_and_refund", 17),
    "servicebench_root": ("", "billing_discrepancy", 0),
    "support_queue_prefix": ("/support_queue", "hard_exec_escalations", 100_004),
    "support_queue_root": ("", "medium_sla_defense", 0),
}


def next_action(task_id: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    """The reference policy's next action, from the observations as GenericEnvClient gives them."""
    if task_id in SUPPORT_QUEUE_TASKS:
        return triage(history[-1]).model_dump()
    action = servicebench_next(history)
    assert action is not None, "the oracle found no next call"
    return action.model_dump()


def check_episode(task_id: str, results: list[Any], state: dict[str, Any]) -> None:
    """What a whole episode must show, however the client drove it."""
    first, rest = results[0], results[1:]
    assert first.done is False and first.observation["task_id"] == task_id and rest
    assert rest[-1].done is True and all(not r.done for r in rest[:-1])
    assert state["episode_id"] and state["step_count"] == len(rest) and state["done"] is True
    rewards = [r.reward for r in rest]
    if task_id in SUPPORT_QUEUE_TASKS:
        assert len(rest) == first.observation["total_tickets"] and all(
            0.0 <= r <= 1.0 for r in rewards
        )
        assert state["average_reward"] == pytest.approx(sum(rewards) / len(rewards))
    else:  # the oracle solves every ServiceBench variant, and step rewards add up to the score
        assert rest[-1].observation["task_completed"] is True
        assert state["cumulative_reward"] == pytest.approx(1.0) == pytest.approx(sum(rewards))


def play_sync(env: Any, task_id: str, seed: int) -> tuple[list[Any], dict[str, Any]]:
    results = [env.reset(task_id=task_id, seed=seed)]
    while not results[-1].done:
        results.append(env.step(next_action(task_id, [r.observation for r in results])))
    return results, env.state()


async def play_async(
    env: GenericEnvClient, task_id: str, seed: int
) -> tuple[list[Any], dict[str, Any]]:
    results = [await env.reset(task_id=task_id, seed=seed)]
    while not results[-1].done:
        results.append(await env.step(next_action(task_id, [r.observation for r in results])))
    return results, await env.state()


@pytest.mark.parametrize("name", EPISODES)
def test_generic_env_client_sync_plays_a_whole_episode(live_server: str, name: str) -> None:
    prefix, task_id, seed = EPISODES[name]
    with GenericEnvClient(base_url=live_server + prefix).sync() as env:
        check_episode(task_id, *play_sync(env, task_id, seed))


@pytest.mark.parametrize("name", EPISODES)
def test_generic_env_client_async_plays_a_whole_episode(live_server: str, name: str) -> None:
    prefix, task_id, seed = EPISODES[name]

    async def play() -> tuple[list[Any], dict[str, Any]]:
        async with GenericEnvClient(base_url=live_server + prefix) as env:
            return await play_async(env, task_id, seed)

    check_episode(task_id, *asyncio.run(play()))


@pytest.mark.parametrize("name", ["servicebench_root", "support_queue_prefix"])
def test_generic_env_client_used_without_sync_in_blocking_code(live_server: str, name: str) -> None:
    """OpenEnv 0.10 runs the async client's calls to completion when no event loop is running."""
    prefix, task_id, seed = EPISODES[name]
    with GenericEnvClient(base_url=live_server + prefix) as env:
        check_episode(task_id, *play_sync(env, task_id, seed))


def test_async_sessions_at_the_root_and_both_prefixes_run_side_by_side(live_server: str) -> None:
    async def play(prefix: str, task_id: str, seed: int) -> tuple[list[Any], dict[str, Any]]:
        async with GenericEnvClient(base_url=live_server + prefix) as env:
            return await play_async(env, task_id, seed)

    async def all_at_once() -> list[tuple[list[Any], dict[str, Any]]]:
        return await asyncio.gather(*(play(*episode) for episode in EPISODES.values()))

    played = asyncio.run(all_at_once())
    for (_, task_id, _), (results, state) in zip(EPISODES.values(), played, strict=True):
        check_episode(task_id, results, state)
    assert len({state["episode_id"] for _, state in played}) == len(EPISODES)


def test_server_errors_reach_the_generic_client_with_their_code(live_server: str) -> None:
    with GenericEnvClient(base_url=f"{live_server}/support_queue").sync() as env:
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            env.reset(task_id="easy_inbox_cleanup", seed=-1)
        result = env.reset(task_id="easy_inbox_cleanup")
        while not result.done:
            result = env.step(TRIAGE)
        with pytest.raises(RuntimeError, match=r"done.*EXECUTION_ERROR"):
            env.step(TRIAGE)


def test_protocol_errors_are_messages_not_disconnects(live_server: str) -> None:
    async def play() -> list[dict]:
        url = live_server.replace("http://", "ws://") + "/support_queue/ws"
        replies = []
        async with connect(url) as socket:
            for message in (
                "{nope",
                json.dumps({"type": "step", "data": TRIAGE}),
                json.dumps({"type": "dance"}),
                json.dumps({"type": "reset", "data": {"task_id": "nope"}}),
                json.dumps({"type": "reset", "data": {"seed": -4}}),
                json.dumps({"type": "reset", "data": {}}),
                json.dumps({"type": "step", "data": {**TRIAGE, "queue": "sales"}}),
                json.dumps({"type": "step", "data": TRIAGE}),
            ):
                await socket.send(message)
                replies.append(json.loads(await socket.recv()))
        return replies

    replies = asyncio.run(play())
    kinds = [(r["type"], r["data"].get("code")) for r in replies]
    assert kinds == [
        ("error", "INVALID_JSON"),
        ("error", "EXECUTION_ERROR"),
        ("error", "UNKNOWN_TYPE"),
        ("error", "EXECUTION_ERROR"),
        ("error", "VALIDATION_ERROR"),
        ("observation", None),
        ("error", "VALIDATION_ERROR"),
        ("observation", None),
    ]
    assert "action.queue" in replies[6]["data"]["message"]
    assert replies[7]["data"]["observation"]["current_index"] == 1
