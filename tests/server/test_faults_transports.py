"""Faults over every transport: `faults` on HTTP's /reset, a WebSocket's reset message, an
MCP session's query or `openenv/session/create`, and a Task API split reset, play the very
episode the environment plays in process (same faults, same observations, same state),
and a bad level is a 4xx naming it everywhere."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp_support import Session, rpc
from servicebench_faults_support import oracle_policy, play
from tool_calls import tool_call
from ws_support import close, ws_send

from servicebench_support_queue.models import ServiceBenchObservation
from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.settings import Settings

TASK, SEED, LEVEL = "cancel_request", 2, "heavy"
RESET = {"task_id": TASK, "seed": SEED, "faults": LEVEL}


@pytest.fixture()
def client() -> TestClient:
    return TestClient(create_app(Settings()))


FIELDS = ("api_response", "success", "error_message", "cumulative_reward", "task_completed")


def expected() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The episode in process: the oracle's observations and state (less the episode id)."""
    env, history = play(oracle_policy, TASK, seed=SEED, faults=LEVEL)
    assert any(record.kind != "stale_read" for record in env.state.faults)  # faults were met
    observations = [{**o.model_dump(mode="json"), "reward": o.reward} for o in history]
    return observations, comparable_state(env.state.model_dump(mode="json"))


def comparable(observation: dict[str, Any]) -> dict[str, Any]:
    """What every transport shows of an observation: its fields, reward, done and info."""
    info = {k: v for k, v in observation["info"].items() if k != "episode_id"}
    shown = {name: observation[name] for name in (*FIELDS, "reward", "done")}
    return {**shown, "info": info}


def comparable_state(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k != "episode_id"}


def drive(step: Any, first: dict[str, Any]) -> list[dict[str, Any]]:
    """Play the oracle over a transport: `step(action)` returns the observation's JSON."""
    history = [first]
    while not history[-1]["done"]:
        action = oracle_policy([ServiceBenchObservation.model_validate(o) for o in history])
        assert action is not None
        history.append(step(action))
    return history


def test_http(client: TestClient) -> None:
    observations, state = expected()
    answer = client.post("/reset", json=RESET).json()
    episode = answer["observation"]["info"]["episode_id"]

    def step(action: Any) -> dict[str, Any]:
        body = {"action": action.model_dump(exclude={"metadata"}), "episode_id": episode}
        response = client.post("/step", json=body)
        assert response.status_code == 200, response.text
        answer = response.json()
        return {**answer["observation"], "done": answer["done"], "reward": answer["reward"]}

    first = {**answer["observation"], "done": answer["done"], "reward": answer["reward"]}
    seen = drive(step, first)
    assert [comparable(o) for o in seen] == [comparable(o) for o in observations]
    served = client.get("/state", params={"episode_id": episode}).json()
    assert comparable_state(served) == state


def test_websocket(client: TestClient) -> None:
    observations, state = expected()
    with client.websocket_connect("/servicebench/ws") as socket:
        answer = ws_send(socket, "reset", RESET)["data"]

        def step(action: Any) -> dict[str, Any]:
            reply = ws_send(socket, "step", action.model_dump(exclude={"metadata"}))
            assert reply["type"] == "observation", reply
            data = reply["data"]
            return {**data["observation"], "done": data["done"], "reward": data["reward"]}

        first = {**answer["observation"], "done": answer["done"], "reward": answer["reward"]}
        seen = drive(step, first)
        served = ws_send(socket, "state")["data"]
        close(socket)
    assert [comparable(o) for o in seen] == [comparable(o) for o in observations]
    assert comparable_state(served) == state


def test_mcp(client: TestClient) -> None:
    observations, state = expected()
    session = Session(client, "/servicebench", f"?task_id={TASK}&seed={SEED}&faults={LEVEL}")
    env_state = session.state().json()
    assert env_state["fault_level"] == LEVEL and env_state["faults"] == []

    def step(action: Any) -> dict[str, Any]:
        name, arguments = tool_call(action)
        result = session.call(name, **arguments)["structuredContent"]
        return {**result["observation"], "done": result["done"], "reward": result["reward"]}

    seen = drive(step, observations[0])  # the session's first observation is the reset's
    assert [comparable(o) for o in seen] == [comparable(o) for o in observations]
    assert comparable_state(session.state().json()) == state


def test_a_split_task_with_faults_and_a_replayed_session_keep_their_level(
    client: TestClient,
) -> None:
    answer = client.post(
        "/reset", json={"env": "servicebench", "split": "train", "index": 3, "faults": "light"}
    ).json()
    episode = answer["observation"]["info"]["episode_id"]
    state = client.get("/state", params={"episode_id": episode}).json()
    assert state["fault_level"] == "light" and state["split"] == "train"
    session = Session(client, "/servicebench", "?faults=heavy")
    session.result("prompts/get", {"name": "return_and_refund", "arguments": {"seed": "4"}})
    assert session.state().json()["fault_level"] == "heavy"  # a restart keeps the level


@pytest.mark.parametrize("level", ["extreme", "Heavy", ""])
def test_a_bad_level_is_a_4xx_naming_it_on_every_transport(client: TestClient, level: str) -> None:
    response = client.post("/reset", json={**RESET, "faults": level})
    assert response.status_code == 422 and repr(level) in response.json()["detail"]
    with client.websocket_connect("/ws") as socket:
        reply = ws_send(socket, "reset", {**RESET, "faults": level})
        assert reply["type"] == "error" and repr(level) in json.dumps(reply["data"])
        close(socket)
    created = client.post(
        "/mcp", json=rpc("openenv/session/create", {"task_id": TASK, "faults": level})
    ).json()
    assert repr(level) in json.dumps(created)
    queue = client.post("/reset", json={"env": "support_queue", "faults": "light"})
    assert queue.status_code == 422 and "ServiceBench only" in queue.json()["detail"]
    assert client.post("/reset", json={"env": "support_queue", "faults": "off"}).status_code == 200


def test_off_over_http_is_the_reset_without_faults(client: TestClient) -> None:
    named = client.post("/reset", json={"task_id": TASK, "seed": SEED, "faults": "off"}).json()
    plain = client.post("/reset", json={"task_id": TASK, "seed": SEED}).json()
    for answer in (named, plain):
        del answer["observation"]["info"]["episode_id"], answer["episode_id"]
    assert named == plain and "faults_injected" not in json.dumps(plain)
    assert ServiceBenchEnvironment  # the environment the app serves
