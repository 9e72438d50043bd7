"""The stateful HTTP surface: reset/step/state at the root and under each prefix, and bad input."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings

LOOKUP_JANE = {
    "service": "user",
    "endpoint": "/users/lookup",
    "method": "GET",
    "params": {"email": "jane.doe@example.com"},
}
LOOKUP_ORDER = {
    "service": "order",
    "endpoint": "/orders/lookup",
    "method": "GET",
    "params": {"order_id": "ORD-1005"},
}
TRIAGE = {
    "priority": "P3",
    "queue": "billing",
    "disposition": "respond",
    "summary": "s",
    "response": "r",
    "confidence": 0.5,
}


@pytest.fixture()
def client() -> TestClient:
    return TestClient(create_app(Settings()))


JSON = {"Content-Type": "application/json"}


def reset(client: TestClient, body: Any = None, path: str = "/reset") -> dict[str, Any]:
    response = client.post(path, json=body) if body is not None else client.post(path, headers=JSON)
    assert response.status_code == 200, response.text
    return response.json()


def test_empty_reset_starts_servicebench_task_one(client: TestClient) -> None:
    for call in (
        lambda: client.post("/reset", headers=JSON),
        lambda: client.post("/reset", json={}),
    ):
        body = call()
        assert body.status_code == 200
        result = body.json()
        assert set(result) == {"observation", "reward", "done", "episode_id"}
        assert result["done"] is False
        assert result["observation"]["task_id"] == "order_status_lookup"
        assert "ORD-1005" in result["observation"]["task_description"]
        assert result["observation"]["info"]["episode_id"] == result["episode_id"]


@pytest.mark.parametrize(
    ("task_id", "expected"),
    [
        (1, "order_status_lookup"),
        (2, "return_and_refund"),
        (3, "billing_discrepancy"),
        ("2", "return_and_refund"),
        ("billing_discrepancy", "billing_discrepancy"),
    ],
)
def test_servicebench_task_ids_and_integer_aliases(
    client: TestClient, task_id: Any, expected: str
) -> None:
    assert reset(client, {"task_id": task_id})["observation"]["task_id"] == expected


def test_env_is_inferred_from_the_task_id(client: TestClient) -> None:
    observation = reset(client, {"task_id": "medium_sla_defense"})["observation"]
    assert observation["task_id"] == "medium_sla_defense"
    assert observation["ticket"]["ticket_id"]
    assert reset(client, {"env": "support_queue"})["observation"]["task_id"] == "easy_inbox_cleanup"


def test_step_accepts_envelope_bare_action_and_header(client: TestClient) -> None:
    first = reset(client, {"task_id": 1})
    episode = first["episode_id"]
    step = client.post("/step", json={"action": LOOKUP_JANE, "episode_id": episode}).json()
    assert step["reward"] == pytest.approx(0.45) and step["episode_id"] == episode
    other = reset(client, {"task_id": 1})["episode_id"]
    step = client.post("/step", json=LOOKUP_ORDER, headers={"X-Episode-Id": episode}).json()
    assert step["episode_id"] == episode and step["done"] is True
    assert step["observation"]["task_completed"] is True
    assert client.get("/state", params={"episode_id": episode}).json()[
        "cumulative_reward"
    ] == pytest.approx(1.0)
    assert client.get("/state", params={"episode_id": other}).json()["step_count"] == 0


def test_step_without_id_goes_to_the_latest_reset(client: TestClient) -> None:
    reset(client, {"task_id": 1})
    latest = reset(client, {"task_id": 2})["episode_id"]
    assert client.post("/step", json=LOOKUP_JANE).json()["episode_id"] == latest
    assert client.get("/state").json()["episode_id"] == latest


def test_require_episode_id_turns_the_latest_fallback_off() -> None:
    client = TestClient(create_app(Settings(require_episode_id=True)))
    episode = reset(client)["episode_id"]
    refused = client.post("/step", json=LOOKUP_JANE)
    assert refused.status_code == 400 and "episode_id" in refused.json()["detail"]
    assert client.get("/state").status_code == 400
    assert (
        client.post("/step", json={"action": LOOKUP_JANE, "episode_id": episode}).status_code == 200
    )


def test_interleaved_episodes_stay_isolated(client: TestClient) -> None:
    a = reset(client, {"task_id": 2})["episode_id"]
    b = reset(client, {"task_id": 2})["episode_id"]
    refund = {
        "service": "order",
        "endpoint": "/orders/process-refund",
        "method": "POST",
        "params": {"order_id": "ORD-1005", "amount": 49.99, "reason": "damaged"},
    }
    client.post("/step", json={"action": refund, "episode_id": a})
    lookup_b = client.post("/step", json={"action": LOOKUP_ORDER, "episode_id": b}).json()
    assert "49.99" not in str(
        lookup_b["observation"]["api_response"].get("data", {}).get("refunds", "")
    )
    state_a = client.get("/state", params={"episode_id": a}).json()
    state_b = client.get("/state", params={"episode_id": b}).json()
    assert state_a["step_count"] == 1 and state_b["step_count"] == 1
    assert state_a["call_history"][0]["endpoint"] == "/orders/process-refund"
    assert state_b["call_history"][0]["endpoint"] == "/orders/lookup"


def test_step_after_done_is_409_and_changes_nothing(client: TestClient) -> None:
    episode = reset(client, {"task_id": 1})["episode_id"]
    for action in (LOOKUP_JANE, LOOKUP_ORDER):
        client.post("/step", json={"action": action, "episode_id": episode})
    before = client.get("/state", params={"episode_id": episode}).json()
    again = client.post("/step", json={"action": LOOKUP_JANE, "episode_id": episode})
    assert again.status_code == 409 and "reset" in again.json()["detail"]
    assert client.get("/state", params={"episode_id": episode}).json() == before


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"task_id": "nope"}, 404, "nope"),
        ({"env": "chess"}, 404, "chess"),
        ({"env": "servicebench", "task_id": "easy_inbox_cleanup"}, 404, "easy_inbox_cleanup"),
        ({"seed": -1}, 422, "seed"),
        ({"seed": "3"}, 422, "seed"),
        ({"seed": 1.5}, 422, "seed"),
        ({"seed": True}, 422, "seed"),
        ({"bogus": 1}, 422, "bogus"),
        ([1, 2], 422, "object"),
        ("text", 422, "object"),
        ({"episode_id": "has spaces"}, 422, "episode_id"),
    ],
)
def test_bad_reset_bodies_are_4xx_naming_the_problem(
    client: TestClient, body: Any, status: int, needle: str
) -> None:
    response = client.post("/reset", json=body)
    assert response.status_code == status
    assert needle in response.json()["detail"]


def test_thousands_of_bad_fields_get_a_short_answer(client: TestClient) -> None:
    body = {f"b{i}": 0 for i in range(5000)}  # about 50 KB, under the limit
    response = client.post("/reset", json=body)
    assert response.status_code == 422 and len(response.json()["errors"]) == 20
    assert len(response.content) < 4000


def test_malformed_json_is_400(client: TestClient) -> None:
    for path in ("/reset", "/step", "/servicebench/step"):
        response = client.post(
            path, content=b"{not json", headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 400 and "JSON" in response.json()["detail"]


def test_bad_step_bodies_are_rejected_without_advancing(client: TestClient) -> None:
    episode = reset(client, {"task_id": "easy_inbox_cleanup"})["episode_id"]
    cases = [
        ({"action": {**TRIAGE, "priority": "P9"}, "episode_id": episode}, 422, "action.priority"),
        (
            {"action": {**TRIAGE, "confidence": 1.5}, "episode_id": episode},
            422,
            "action.confidence",
        ),
        ({"action": {**TRIAGE, "extra": 1}, "episode_id": episode}, 422, "action.extra"),
        ({"action": "P1", "episode_id": episode}, 422, "action"),
        ({"action": TRIAGE, "episode_id": episode, "junk": 1}, 422, "junk"),
        ({"action": TRIAGE, "episode_id": "missing"}, 404, "missing"),
        ({"action": TRIAGE, "episode_id": 7}, 422, "episode_id"),
    ]
    for body, status, needle in cases:
        response = client.post("/step", json=body)
        assert response.status_code == status, (body, response.text)
        assert needle in response.json()["detail"]
    state = client.get("/state", params={"episode_id": episode}).json()
    assert state["current_index"] == 0 and state["action_history"] == []
    assert client.post("/step", headers=JSON).status_code == 422
    assert client.post("/step").status_code == 415  # not declared as JSON


def test_body_over_the_limit_is_413() -> None:
    client = TestClient(create_app(Settings(max_body_bytes=1024)))
    response = client.post(
        "/reset",
        content=b'{"task_id": "' + b"x" * 2048 + b'"}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 413 and "limit" in response.json()["detail"]


def test_unknown_route_and_method_are_json(client: TestClient) -> None:
    assert client.get("/nope").json()["detail"]
    response = client.get("/step")
    assert response.status_code == 405 and response.json()["detail"]


def test_prefix_surfaces_serve_one_env_each(client: TestClient) -> None:
    sb = reset(client, path="/servicebench/reset")
    sq = reset(client, path="/support_queue/reset")
    assert sb["observation"]["task_id"] == "order_status_lookup"
    assert sq["observation"]["task_id"] == "easy_inbox_cleanup"
    wrong = client.post(
        "/servicebench/step", json={"action": TRIAGE, "episode_id": sq["episode_id"]}
    )
    assert wrong.status_code == 404
    refused = client.post("/support_queue/reset", json={"task_id": 1})
    assert refused.status_code == 404
    step = client.post("/support_queue/step", json=TRIAGE).json()
    assert step["episode_id"] == sq["episode_id"]
    assert client.get("/servicebench/state").json()["episode_id"] == sb["episode_id"]
    # the root scope reaches episodes started under a prefix
    assert client.get("/state", params={"episode_id": sb["episode_id"]}).status_code == 200


def test_tasks_lists_every_task_with_budgets(client: TestClient) -> None:
    tasks = client.get("/tasks").json()["tasks"]
    assert [(t["env"], t["id"]) for t in tasks] == [
        ("servicebench", "order_status_lookup"),
        ("servicebench", "return_and_refund"),
        ("servicebench", "billing_discrepancy"),
        ("servicebench", "damage_claim"),
        ("servicebench", "exchange_request"),
        ("servicebench", "cancel_request"),
        ("servicebench", "address_change"),
        ("servicebench", "duplicate_charge"),
        ("servicebench", "price_adjustment"),
        ("support_queue", "easy_inbox_cleanup"),
        ("support_queue", "medium_sla_defense"),
        ("support_queue", "hard_exec_escalations"),
    ]
    assert all(t["max_steps"] > 0 and t["title"] and t["description"] for t in tasks)
    assert [t["id"] for t in client.get("/support_queue/tasks").json()["tasks"]] == [
        "easy_inbox_cleanup",
        "medium_sla_defense",
        "hard_exec_escalations",
    ]


def test_info_routes(client: TestClient) -> None:
    assert client.get("/health").json() == {"status": "healthy"}
    for prefix in ("", "/servicebench", "/support_queue"):
        metadata = client.get(f"{prefix}/metadata").json()
        assert metadata["name"] and metadata["description"] and metadata["version"]
        schema = client.get(f"{prefix}/schema").json()
        assert {"action", "observation", "state"} <= set(schema)
    assert "priority" in client.get("/support_queue/schema").json()["action"]["properties"]
    page = client.get("/")
    assert page.status_code == 200 and "hard_exec_escalations" in page.text and "curl" in page.text


def test_mcp_speaks_json_rpc_and_shares_episodes_with_http(client: TestClient) -> None:
    assert client.post("/mcp", json={}).json()["error"]["code"] == -32600
    assert client.post("/mcp", content=b"{", headers=JSON).json()["error"]["code"] == -32700
    unknown = client.post("/mcp", json={"jsonrpc": "2.0", "id": 3, "method": "nope"}).json()
    assert unknown["error"]["code"] == -32601

    def call(name: str, arguments: dict[str, Any], session: str) -> dict[str, Any]:
        body = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "session_id": session},
        }
        return client.post("/servicebench/mcp", json=body).json()

    create = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
    session = client.post("/servicebench/mcp", json=create).json()["result"]["session_id"]
    stepped = call("lookup_user", LOOKUP_JANE["params"], session)["result"]
    assert stepped["isError"] is False and stepped["structuredContent"]["session_id"] == session
    assert client.get("/state", params={"episode_id": session}).json()["step_count"] == 1
    http_step = client.post("/step", json={"action": LOOKUP_JANE, "episode_id": session})
    assert http_step.json()["observation"]["info"]["step"] == 2  # its id is its episode's
    assert call("lookup_user", LOOKUP_JANE["params"], "nope")["error"]["code"] == -32602
    episode = reset(client, {"task_id": 1})["episode_id"]  # an HTTP episode is no session
    assert call("lookup_user", LOOKUP_JANE["params"], episode)["error"]["code"] == -32602
    assert client.get("/state", params={"episode_id": episode}).json()["step_count"] == 0


@pytest.mark.parametrize("prefix", ["", "/servicebench", "/support_queue"])
def test_http_and_mcp_describe_an_action_with_one_schema_and_name_the_package_version(
    client: TestClient, prefix: str
) -> None:
    from servicebench_support_queue import __version__

    openapi = client.get(f"{prefix}/openapi.json").json()
    body = openapi["paths"]["/step"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    envelope, bare_action = body["anyOf"]
    assert envelope["properties"]["action"] == bare_action
    names = {option.get("title") for option in bare_action.get("anyOf", [bare_action])}
    expected = {
        "": {"ServiceBenchAction", "SupportQueueAction"},
        "/servicebench": {"ServiceBenchAction"},
        "/support_queue": {"SupportQueueAction"},
    }[prefix]
    assert names == expected
    tools = client.post(
        f"{prefix}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    ).json()["result"]["tools"]
    triage = [tool for tool in tools if tool["name"] == "triage"]
    if "SupportQueueAction" in names:  # the triage tool's arguments are the action's fields
        action = next(
            a for a in bare_action.get("anyOf", [bare_action]) if "priority" in a["properties"]
        )
        assert set(triage[0]["inputSchema"]["properties"]) == set(action["properties"]) - {
            "metadata"
        } | {"step_index"}  # the call's own: the step it means
    else:
        assert not triage
    hello = client.post(
        f"{prefix}/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 2,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}},
        },
    ).json()
    assert hello["result"]["serverInfo"]["version"] == openapi["info"]["version"] == __version__
    assert client.get(f"{prefix}/metadata").json()["version"] == __version__


@pytest.mark.parametrize("prefix", ["", "/support_queue"])
def test_whole_support_queue_episode_over_http_matches_in_process(
    client: TestClient, prefix: str
) -> None:
    from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
    from servicebench_support_queue.server.support_queue.heuristic import triage

    local = SupportQueueEnvironment()
    local_observation = local.reset(task_id="medium_sla_defense")
    result = reset(client, {"task_id": "medium_sla_defense"}, path=f"{prefix}/reset")
    episode, rewards = result["episode_id"], []
    while not result["done"]:
        action = triage(result["observation"]).model_dump(exclude={"metadata"})
        assert action == triage(local_observation).model_dump(exclude={"metadata"})
        local_observation = local.step(triage(local_observation))
        result = client.post(
            f"{prefix}/step", json={"action": action, "episode_id": episode}
        ).json()
        assert result["reward"] == pytest.approx(local_observation.reward)
        rewards.append(result["reward"])
    state = client.get(f"{prefix}/state", params={"episode_id": episode}).json()
    assert len(rewards) == 3 and state["processed_ticket_ids"] == [
        g["ticket_id"] for g in state["grading_history"]
    ]
    assert state["average_reward"] == pytest.approx(local.score) == pytest.approx(sum(rewards) / 3)


def test_fastapi_telemetry_is_off_unless_asked_for() -> None:
    assert Settings().telemetry is False and Settings.from_env({}).telemetry is False
    assert Settings.from_env({"TELEMETRY": "1"}).telemetry is True
    for settings in (Settings(), Settings(telemetry=True)):
        client = TestClient(create_app(settings))
        reset = client.post("/servicebench/reset", json={"task_id": "order_status_lookup"})
        assert reset.status_code == 200 and reset.json()["episode_id"]


def test_a_served_app_runs_young_gc_collections_less_often_and_restores_them_after() -> None:
    """Requests waiting for a durable store must not be promoted to the oldest generation
    by a young collection every 700 new objects (see GC_YOUNG_THRESHOLD)."""
    import gc

    from servicebench_support_queue.server.transport.http_api import GC_YOUNG_THRESHOLD

    before = gc.get_threshold()
    with TestClient(create_app(Settings())) as client:
        assert client.get("/health").status_code == 200
        assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, *before[1:])
    assert gc.get_threshold() == before


def test_reset_by_family_over_http(client: TestClient) -> None:
    """A family plays deterministically by (family, seed); task_id may be left out; a family of
    another task, or none, is a 404 naming the task's families."""
    body = {"family": "cancel_shipped", "seed": 3}
    first = client.post("/reset", json=body).json()["observation"]
    again = client.post("/servicebench/reset", json={**body, "task_id": "cancel_request"}).json()
    assert first["task_id"] == "cancel_request" == again["observation"]["task_id"]
    assert first["task_description"] == again["observation"]["task_description"]
    assert first["policy"].startswith("Support policy") and len(first["available_endpoints"]) == 18
    wrong = client.post("/reset", json={"task_id": "damage_claim", "family": "cancel_shipped"})
    assert wrong.status_code == 404 and "its families: damage_refund" in wrong.json()["detail"]
    unknown = client.post("/reset", json={"family": "no_such_family"})
    assert unknown.status_code == 404 and "unknown family" in unknown.json()["detail"]
    assert client.post("/reset", json={"family": 7}).status_code == 422
