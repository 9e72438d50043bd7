"""Idempotent writes end to end: a keyed write retried over HTTP, WebSocket and MCP, also
all at once on one episode, is applied once and answered the same every time.

An episode's id is all a client needs to step it (server/lifecycle/owners.py): an episode reset
over HTTP is stepped here by HTTP requests and by WebSocket connections that `resume`
it, at the same moment, on a live server (one process on the memory store; two worker
processes on one SQLite store, where steps race for the log's append). The reward rules
see a replay as the same resolved call: a duplicate, whatever the key.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from mcp_support import Session
from server_process import ServerProcess
from websockets.asyncio.client import connect

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.settings import Settings

TASK = "billing_discrepancy"
"""15 steps: room for 14 retries at once and a lookup."""
REFUND = {"order_id": "ORD-1001", "amount": 1.25, "reason": "goodwill"}
LOOKUP = {"service": "order", "endpoint": "/orders/lookup", "params": {"order_id": "ORD-1001"}}


def refund(**params: Any) -> dict[str, Any]:
    action = {"service": "order", "endpoint": "/orders/process-refund", "method": "POST"}
    return {**action, "params": {**REFUND, **params}}


@pytest.fixture()
def client() -> TestClient:
    return TestClient(create_app(Settings()))


@pytest.fixture(scope="module")
def two_workers_one_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path: Path = tmp_path_factory.mktemp("idempotency") / "episodes.db"
    server = ServerProcess({"EPISODE_STORE": f"sqlite://{path}"}, args=["--workers", "2"])
    server.start()
    try:
        yield server.wait().url
    finally:
        server.stop()


async def retries_at_once(url: str, episode_id: str, over_http: int, over_ws: int) -> list[Any]:
    """The same keyed refund sent `over_http` times over HTTP and `over_ws` times over as many
    WebSocket connections, all released at one moment; each answer as (transport, result)."""
    action = refund(idempotency_key="refund-ORD-1001-once")
    ws_url = url.replace("http", "ws", 1) + "/ws"
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        sockets = [await connect(ws_url, open_timeout=60) for _ in range(over_ws)]
        try:
            for socket in sockets:
                await socket.send(
                    json.dumps({"type": "resume", "data": {"episode_id": episode_id}})
                )
                assert json.loads(await socket.recv())["type"] == "observation"
            go = asyncio.Event()

            async def by_http() -> Any:
                await go.wait()
                body = {"action": action, "episode_id": episode_id}
                response = await client.post("/step", json=body)
                return "http", response.status_code, response.json()

            async def by_ws(socket: Any) -> Any:
                await go.wait()
                await socket.send(json.dumps({"type": "step", "data": action}))
                message = json.loads(await socket.recv())
                return "ws", message["type"], message["data"]

            pending = [asyncio.ensure_future(by_http()) for _ in range(over_http)]
            pending += [asyncio.ensure_future(by_ws(socket)) for socket in sockets]
            await asyncio.sleep(0)
            go.set()
            return await asyncio.gather(*pending)
        finally:
            for socket in sockets:
                await socket.close()


def check_applied_once(url: str, over_http: int, over_ws: int) -> None:
    reset = httpx.post(f"{url}/reset", json={"task_id": TASK}, timeout=60).json()
    episode_id = reset["episode_id"]
    answers = asyncio.run(retries_at_once(url, episode_id, over_http, over_ws))
    played = []
    for transport, kind, body in answers:
        if (transport, kind) in (("http", 200), ("ws", "observation")):
            played.append(body["observation"])
        else:  # across processes a step may lose the race for the log every time: a 409
            assert kind in (409, "error") and "nothing was applied" in json.dumps(body), body
    assert played
    responses = {json.dumps(observation["api_response"], sort_keys=True) for observation in played}
    assert len(responses) == 1, responses
    assert json.loads(responses.pop())["data"]["refund"]["refund_id"] == "RF-ORD-1001-1"
    step = {"action": LOOKUP, "episode_id": episode_id}
    order = httpx.post(f"{url}/step", json=step, timeout=60).json()["observation"]["api_response"]
    assert [r["amount"] for r in order["data"]["refunds"]] == [1.25], "applied exactly once"
    state = httpx.get(f"{url}/state", params={"episode_id": episode_id}, timeout=60).json()
    refunds = [call for call in state["call_history"] if call["endpoint"].endswith("refund")]
    assert len(refunds) == len(played) and refunds[0]["signals"] != ["duplicate_call"]
    assert all(call["signals"] == ["duplicate_call"] for call in refunds[1:])


def test_retries_at_once_over_http_and_websocket_apply_once(live_server: str) -> None:
    check_applied_once(live_server, over_http=7, over_ws=7)


def test_retries_at_once_on_two_processes_apply_once(two_workers_one_sqlite: str) -> None:
    check_applied_once(two_workers_one_sqlite, over_http=7, over_ws=7)


def test_a_retry_over_http_is_answered_again_and_counted_as_a_duplicate(client) -> None:
    episode = client.post("/reset", json={"task_id": TASK}).json()["episode_id"]

    def step(action: dict[str, Any]) -> dict[str, Any]:
        return client.post("/step", json={"action": action, "episode_id": episode}).json()

    first, again = step(refund(idempotency_key="k")), step(refund(idempotency_key="k"))
    assert again["observation"]["api_response"] == first["observation"]["api_response"]
    assert again["observation"]["info"]["reward_signals"] == ["duplicate_call"]
    other = step(refund(amount=2, idempotency_key="k"))["observation"]
    assert other["api_response"]["status_code"] == 409 and other["success"] is False
    assert "already used for a different request" in other["error_message"]
    lookup = step(LOOKUP)["observation"]["api_response"]["data"]
    assert lookup["refunds"] == [first["observation"]["api_response"]["data"]["refund"]]
    history = client.get("/state", params={"episode_id": episode}).json()["call_history"]
    assert history[0]["params"]["idempotency_key"] == "k", "the state shows the call as sent"


def test_a_bad_key_over_http_is_a_failed_call_naming_it(client) -> None:
    client.post("/reset", json={"task_id": TASK})
    result = client.post("/step", json={"action": refund(idempotency_key="")}).json()
    observation = result["observation"]
    assert observation["api_response"]["status_code"] == 400
    assert "parameter 'idempotency_key' must be a string" in observation["error_message"]


def signals_of(actions: list[dict[str, Any]]) -> list[tuple[float, tuple[str, ...]]]:
    env = ServiceBenchEnvironment()
    env.reset(task_id=TASK)
    played = [env.step(env.action_cls.model_validate(action)) for action in actions]
    return [(obs.reward, tuple(obs.info["reward_signals"])) for obs in played]


@pytest.mark.parametrize(
    "params",
    [REFUND, {**REFUND, "amount": 999_999}],  # applied; refused by the service
    ids=["applied", "refused"],
)
def test_the_key_is_no_part_of_a_call_s_identity(params) -> None:
    """With keys or without, the same write scores the same: the key changes no reward."""
    plain = signals_of([refund(**params), refund(**params)])
    assert plain[1][1] == ("duplicate_call",)
    assert signals_of([refund(**params, idempotency_key="a"), refund(**params)]) == plain
    assert (
        signals_of([refund(**params, idempotency_key="a"), refund(**params, idempotency_key="b")])
        == plain
    )


def test_over_websocket_a_retry_is_answered_again(client) -> None:
    with client.websocket_connect("/ws") as socket:
        socket.send_text(json.dumps({"type": "reset", "data": {"task_id": TASK}}))
        socket.receive_text()
        answers = []
        for _ in range(2):
            socket.send_text(json.dumps({"type": "step", "data": refund(idempotency_key="w")}))
            answers.append(json.loads(socket.receive_text())["data"]["observation"])
        socket.send_text(json.dumps({"type": "step", "data": LOOKUP}))
        order = json.loads(socket.receive_text())["data"]["observation"]["api_response"]["data"]
        socket.send_text(json.dumps({"type": "close"}))
    assert answers[0]["api_response"] == answers[1]["api_response"]
    assert len(order["refunds"]) == 1


def test_over_mcp_the_write_tools_take_the_key_and_a_retry_is_answered_again(client) -> None:
    session = Session(client, "/servicebench", f"?task_id={TASK}")
    tools = {tool["name"]: tool for tool in session.result("tools/list")["tools"]}
    schema = tools["process_refund"]["inputSchema"]
    assert schema["properties"]["idempotency_key"]["type"] == "string"
    assert "idempotency_key" not in schema.get("required", [])
    assert "idempotency_key" not in tools["lookup_order"]["inputSchema"]["properties"]
    first = session.call("process_refund", **REFUND, idempotency_key="m")["structuredContent"]
    again = session.call("process_refund", **REFUND, idempotency_key="m")["structuredContent"]
    assert first["observation"]["api_response"] == again["observation"]["api_response"]
    order = session.call("lookup_order", order_id="ORD-1001")["structuredContent"]
    assert len(order["observation"]["api_response"]["data"]["refunds"]) == 1
    # a strict model's null means no key: two refunds
    session.call("process_refund", **REFUND, idempotency_key=None)
    order = session.call("lookup_order", order_id="ORD-1001")["structuredContent"]
    assert len(order["observation"]["api_response"]["data"]["refunds"]) == 2
