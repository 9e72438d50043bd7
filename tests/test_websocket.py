"""Whole episodes over OpenEnv's WebSocket protocol with openenv's own GenericEnvClient."""

from __future__ import annotations

import asyncio
import json

import pytest
from openenv.core import GenericEnvClient
from websockets.asyncio.client import connect

TRIAGE = {"priority": "P2", "queue": "billing", "disposition": "respond",
          "summary": "Customer reports a problem.", "response": "Thanks, we are looking into it.",
          "confidence": 0.5}


def test_servicebench_episode_with_generic_env_client(live_server: str) -> None:
    with GenericEnvClient(base_url=f"{live_server}/servicebench").sync() as env:
        result = env.reset(task_id="order_status_lookup")
        assert result.done is False
        assert result.observation["available_endpoints"]
        result = env.step({"service": "user", "endpoint": "/users/lookup", "method": "GET",
                           "params": {"email": "jane.doe@example.com"}})
        assert result.reward == pytest.approx(0.45)
        result = env.step({"service": "order", "endpoint": "/orders/lookup", "method": "GET",
                           "params": {"order_id": "ORD-1005"}})
        assert result.done is True and result.observation["task_completed"] is True
        state = env.state()
        assert state["cumulative_reward"] == pytest.approx(1.0) and state["step_count"] == 2


def test_support_queue_episode_with_generic_env_client(live_server: str) -> None:
    with GenericEnvClient(base_url=f"{live_server}/support_queue").sync() as env:
        result = env.reset(task_id="hard_exec_escalations")
        total = result.observation["total_tickets"]
        rewards = []
        while not result.done:
            result = env.step(TRIAGE)
            assert 0.0 <= result.reward <= 1.0
            rewards.append(result.reward)
        assert len(rewards) == total == 4
        state = env.state()
        assert state["average_reward"] == pytest.approx(sum(rewards) / total)
        with pytest.raises(RuntimeError, match="done"):
            env.step(TRIAGE)


def test_protocol_errors_are_messages_not_disconnects(live_server: str) -> None:
    async def play() -> list[dict]:
        url = live_server.replace("http://", "ws://") + "/support_queue/ws"
        replies = []
        async with connect(url) as socket:
            for message in ("{nope", json.dumps({"type": "step", "data": TRIAGE}),
                            json.dumps({"type": "dance"}),
                            json.dumps({"type": "reset", "data": {"task_id": "nope"}}),
                            json.dumps({"type": "reset", "data": {"seed": -4}}),
                            json.dumps({"type": "reset", "data": {}}),
                            json.dumps({"type": "step", "data": {**TRIAGE, "queue": "sales"}}),
                            json.dumps({"type": "step", "data": TRIAGE})):
                await socket.send(message)
                replies.append(json.loads(await socket.recv()))
        return replies

    replies = asyncio.run(play())
    kinds = [(r["type"], r["data"].get("code")) for r in replies]
    assert kinds == [
        ("error", "INVALID_JSON"), ("error", "EXECUTION_ERROR"), ("error", "UNKNOWN_TYPE"),
        ("error", "EXECUTION_ERROR"), ("error", "VALIDATION_ERROR"), ("observation", None),
        ("error", "VALIDATION_ERROR"), ("observation", None),
    ]
    assert "action.queue" in replies[6]["data"]["message"]
    assert replies[7]["data"]["observation"]["current_index"] == 1
