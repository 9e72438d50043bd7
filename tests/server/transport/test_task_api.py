"""server/transport/task_api.py: OpenEnv's Task API routes at the root and under each prefix, checked
against OpenEnv's own HTTPEnvServer serving the same environment classes, bad input, and
reset by split and index over HTTP, WebSocket (OpenEnv's GenericEnvClient too) and MCP."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp_support import Session, rpc
from openenv.core import GenericEnvClient
from openenv.core.env_server.http_server import create_app as openenv_app
from openenv.core.env_server.types import (
    GetTaskRangeRequest,
    GetTaskRequest,
    ListTasksRequest,
    NumTasksRequest,
)

from servicebench_support_queue.models import (
    ServiceBenchAction,
    ServiceBenchObservation,
    ServiceBenchState,
    SupportQueueAction,
    SupportQueueObservation,
    SupportQueueState,
)
from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.lifecycle.episode import EpisodeEnvironment
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.transport.task_api import (
    TaskApiRequest,
    TaskRangeRequest,
    TaskRequest,
)

ENVS: dict[str, type[EpisodeEnvironment]] = {
    "servicebench": ServiceBenchEnvironment,
    "support_queue": SupportQueueEnvironment,
}
OPENENV_TYPES = {
    "servicebench": (ServiceBenchAction, ServiceBenchObservation, ServiceBenchState),
    "support_queue": (SupportQueueAction, SupportQueueObservation, SupportQueueState),
}
# Where the routes of each environment are: at the root and under the environment's prefix
# (whose own base is the prefix, so an OpenEnv client pointed there asks /{prefix}/{env}/...).
JSON_TYPE = {"content-type": "application/json"}
TEST_TASKS = ServiceBenchEnvironment().num_tasks("test")
"""The size of ServiceBench's test split: its first index out of range."""
ROUTES = {(env, base): f"{base}/{env}" for env in ENVS for base in ("", f"/{env}")}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(Settings()))


@pytest.fixture(scope="module")
def reference() -> dict[str, TestClient]:
    """OpenEnv 0.10's own server for each environment class, as `create_app(env_name=...)`
    serves it: the Task API routes come from the classes' TaskProvider methods."""
    apps = {}
    for name, env_cls in ENVS.items():
        action, observation, state = OPENENV_TYPES[name]
        apps[name] = TestClient(
            openenv_app(env_cls, action, observation, env_name=name, state_cls=state)
        )
    return apps


def same_fields(ours: type, theirs: type) -> None:
    assert set(ours.model_fields) == set(theirs.model_fields)
    for field, info in theirs.model_fields.items():
        assert ours.model_fields[field].is_required() == info.is_required(), field


def test_the_request_bodies_have_openenvs_fields() -> None:
    same_fields(TaskApiRequest, NumTasksRequest)
    same_fields(TaskApiRequest, ListTasksRequest)
    same_fields(TaskRequest, GetTaskRequest)
    same_fields(TaskRangeRequest, GetTaskRangeRequest)


VALID = [
    ("GET", "splits", None),
    ("POST", "num_tasks", NumTasksRequest(split="train")),
    ("POST", "num_tasks", NumTasksRequest(split="test_families")),
    ("POST", "tasks", ListTasksRequest(split="validation")),
    ("POST", "task", GetTaskRequest(split="test", index=0)),
    ("POST", "task", GetTaskRequest(split="test_families", index=41)),
    ("POST", "task_range", GetTaskRangeRequest(split="test", start=0, stop=20)),
    ("POST", "task_range", GetTaskRangeRequest(split="train", start=-7)),
    ("POST", "task_range", GetTaskRangeRequest(split="validation", start=30, stop=10)),
    ("POST", "task_range", GetTaskRangeRequest(split="test_families", stop=5)),
]


def ask(client: TestClient, method: str, path: str, body: Any) -> Any:
    payload = body.model_dump(exclude_none=True) if hasattr(body, "model_dump") else body
    return client.request(method, path, json=payload) if method == "POST" else client.get(path)


@pytest.mark.parametrize("where", list(ROUTES), ids=[f"{e}{b or '@root'}" for e, b in ROUTES])
def test_every_route_answers_as_openenvs_own_server_does(
    client: TestClient, reference: dict[str, TestClient], where: tuple[str, str]
) -> None:
    env, _ = where
    for method, route, body in VALID:
        ours = ask(client, method, f"{ROUTES[where]}/{route}", body)
        theirs = ask(reference[env], method, f"/{env}/{route}", body)
        assert ours.status_code == theirs.status_code == 200, (route, body, ours.text)
        assert ours.json() == theirs.json(), (route, body)
    names = client.get(f"{where[1]}/list_environments").json()
    assert names == (list(ENVS) if not where[1] else [env])
    assert reference[env].get("/list_environments").json() == [env]


def test_an_index_out_of_range_is_a_400_as_openenv_answers_it(
    client: TestClient, reference: dict[str, TestClient]
) -> None:
    for index in (-1, TEST_TASKS, 2**40):
        body = {"split": "test", "index": index}
        ours = client.post("/servicebench/task", json=body)
        theirs = reference["servicebench"].post("/servicebench/task", json=body)
        assert ours.status_code == theirs.status_code == 400
        assert (
            "out of range" in ours.json()["detail"]
            and f"{TEST_TASKS} tasks" in ours.json()["detail"]
        )


def test_an_unknown_environment_is_a_404_as_openenv_answers_it(
    client: TestClient, reference: dict[str, TestClient]
) -> None:
    for path in ("/nope/splits", "/servicebench/support_queue/splits"):
        ours = client.get(path)
        assert ours.status_code == 404 and "unknown environment" in ours.json()["detail"]
    assert reference["servicebench"].get("/nope/splits").status_code == 404
    upper = client.post("/SERVICEBENCH/num_tasks", json={"split": "test"})
    assert (
        upper.json()
        == reference["servicebench"].post("/SERVICEBENCH/num_tasks", json={"split": "test"}).json()
    )


BAD = [  # (route, body, status, words the detail must hold)
    ("num_tasks", {"split": "nope"}, 404, "unknown split 'nope'"),
    ("num_tasks", {"split": ""}, 404, "train, validation, test, test_families"),
    ("num_tasks", {}, 422, "split: Field required"),
    ("num_tasks", {"split": 3}, 422, "split: Input should be a valid string"),
    ("num_tasks", {"split": "test", "colour": 1}, 422, "colour: Extra inputs"),
    ("num_tasks", {"split": "x" * 65}, 422, "at most 64 characters"),
    ("num_tasks", [], 422, "body must be a JSON object"),
    ("task", {"split": "test"}, 422, "index: Field required"),
    ("task", {"split": "test", "index": "3"}, 422, "index: Input should be a valid integer"),
    ("task", {"split": "test", "index": 3.0}, 422, "index: Input should be a valid integer"),
    ("task", {"split": "test", "index": True}, 422, "index: Input should be a valid integer"),
    ("task", {"split": "test", "index": 10**30}, 422, "outside the accepted range"),
    ("task", {"split": "test", "index": 9 * 10**18}, 400, "out of range"),
    ("task_range", {"split": "test"}, 400, "at most 1000"),
    ("task_range", {"split": "test", "start": 0, "stop": 1001}, 400, "at most 1000"),
    ("task_range", {"split": "test", "start": "0"}, 422, "start: Input should be"),
    ("tasks", {"split": None}, 422, "split: Input should be a valid string"),
]


@pytest.mark.parametrize(("route", "body", "status", "words"), BAD)
def test_bad_input_is_a_clear_4xx(
    client: TestClient, route: str, body: Any, status: int, words: str
) -> None:
    for base in ("", "/servicebench"):
        answer = client.post(f"{base}/servicebench/{route}", json=body)
        assert answer.status_code == status, answer.text
        assert answer.headers["content-type"] == "application/json"
        assert words in answer.json()["detail"], answer.json()


def test_malformed_or_foreign_bodies_are_4xx(client: TestClient) -> None:
    answers = [
        client.post("/servicebench/task", content=b"{nope", headers=JSON_TYPE),
        client.post(
            "/servicebench/task",
            content=b'{"split": "test", "split": "train"}',
            headers=JSON_TYPE,
        ),
        client.post("/servicebench/task", content=b"{}", headers={"content-type": "text/plain"}),
        client.post("/servicebench/task", content=b"[" * 100 + b"]" * 100, headers=JSON_TYPE),
        client.get("/servicebench/task"),
    ]
    assert [a.status_code for a in answers] == [400, 400, 415, 422, 405]
    assert all(a.json()["detail"] for a in answers)


def test_bare_routes_name_the_environment_routes(client: TestClient) -> None:
    answer = client.get("/splits")
    assert answer.status_code == 404
    assert "/servicebench/splits, /support_queue/splits" in answer.json()["detail"]
    for route in ("num_tasks", "task", "task_range"):
        answer = client.post(f"/{route}", json={"split": "test"})
        assert answer.status_code == 404 and f"/servicebench/{route}" in answer.json()["detail"]


def test_the_routes_are_in_the_openapi_schema_with_their_bodies(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for route in ("splits", "tasks", "num_tasks", "task", "task_range"):
        assert f"/{{env_name}}/{route}" in paths
    body = paths["/{env_name}/task"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["required"] == ["split", "index"]


# ------------------------------------------------------------------ reset by split and index


def in_process(env: str, split: str, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The observation and state that `reset(split, index)` gives in process (no id fields)."""
    episode = ENVS[env]()
    observation = episode.reset(split=split, index=index, episode_id="x")
    return observation.model_dump(mode="json"), episode.state.model_dump(mode="json")


def without_ids(observation: dict[str, Any]) -> dict[str, Any]:
    return {
        **observation,
        "info": {k: v for k, v in observation["info"].items() if k != "episode_id"},
    }


@pytest.mark.parametrize("env", list(ENVS))
def test_http_reset_by_split_and_index_at_the_root_and_the_prefix(
    client: TestClient, reference: dict[str, TestClient], env: str
) -> None:
    expected, state = in_process(env, "test_families", 3)
    for path, body in (
        ("/reset", {"env": env, "split": "test_families", "index": 3}),
        (f"/{env}/reset", {"split": "test_families", "index": 3}),
    ):
        answer = client.post(path, json=body)
        assert answer.status_code == 200, answer.text
        got = answer.json()
        assert without_ids(got["observation"]) == without_ids(strip(expected))
        served = client.get("/state", params={"episode_id": got["episode_id"]}).json()
        assert {**served, "episode_id": "x"} == state
    theirs = reference[env].post("/reset", json={"split": "test_families", "index": 3}).json()
    assert without_ids(strip(theirs["observation"])) == without_ids(strip(expected))


def strip(observation: dict[str, Any]) -> dict[str, Any]:
    """An observation as the wire carries it: reward, done and metadata beside it, not in it."""
    return {k: v for k, v in observation.items() if k not in ("reward", "done", "metadata")}


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"split": "nope", "index": 0}, 404, "unknown split"),
        ({"split": "test", "index": TEST_TASKS}, 400, "out of range"),
        ({"split": "test", "index": -1}, 422, "greater than or equal to 0"),
        ({"split": "test", "index": "1"}, 422, "valid integer"),
        ({"split": "test", "index": 2**31}, 422, "less than or equal to"),
        ({"split": ["test"], "index": 1}, 422, "valid string"),
        ({"index": 1}, 400, "needs the split"),
        ({"split": "test", "index": 1, "seed": 2}, 400, "leave seed out"),
        ({"split": "test", "task_id": "return_and_refund"}, 400, "leave task_id out"),
    ],
)
def test_a_bad_split_reset_is_a_4xx_and_starts_nothing(
    client: TestClient, body: dict[str, Any], status: int, words: str
) -> None:
    live = len(client.app.state.store)
    answer = client.post("/servicebench/reset", json=body)
    assert answer.status_code == status and words in answer.json()["detail"], answer.text
    assert len(client.app.state.store) == live


def test_websocket_reset_by_split_and_index(client: TestClient) -> None:
    expected, _ = in_process("support_queue", "test", 13)
    with client.websocket_connect("/support_queue/ws") as socket:
        socket.send_text(json.dumps({"type": "reset", "data": {"split": "test", "index": 13}}))
        reply = socket.receive_json()
        socket.send_text(json.dumps({"type": "reset", "data": {"split": "test", "index": -5}}))
        refused = socket.receive_json()
    assert without_ids(reply["data"]["observation"]) == without_ids(strip(expected))
    assert refused["type"] == "error" and "index" in json.dumps(refused)


def test_openenvs_generic_client_resets_by_split_and_index(live_server: str) -> None:
    expected, state = in_process("servicebench", "validation", 9)
    with GenericEnvClient(base_url=f"{live_server}/servicebench").sync() as env:
        result = env.reset(split="validation", index=9)
        served = env.state()
    assert without_ids(result.observation) == without_ids(strip(expected))
    assert (served["split"], served["index"], served["seed"]) == ("validation", 9, state["seed"])


def test_mcp_sessions_start_on_a_split_task_and_replay_it(client: TestClient) -> None:
    session = Session(client, "/servicebench", "?split=test_families&index=4")
    state = session.state().json()
    spec = client.post("/servicebench/task", json={"split": "test_families", "index": 4}).json()[
        "task"
    ]
    assert (state["split"], state["index"], state["seed"]) == ("test_families", 4, spec["seed"])
    assert "task 4 of split test_families" in session.initialized["instructions"]
    n = client.post("/servicebench/num_tasks", json={"split": "test_families"}).json()["num_tasks"]
    with client.websocket_connect(f"/servicebench/ws?session_id={session.id}") as socket:
        for data, index in (({}, 4), ({"seed": n + 11}, 11), ({}, 11)):
            socket.send_text(json.dumps({"type": "reset", "data": data}))
            assert socket.receive_json()["type"] == "observation"
            replayed = session.state().json()  # a session's reset replays its split task
            assert (replayed["split"], replayed["index"]) == ("test_families", index), data
    created = client.post(
        "/support_queue/mcp", json=rpc("openenv/session/create", {"split": "test", "index": 2})
    ).json()["result"]
    other = client.get("/state", params={"episode_id": created["session_id"]}).json()
    assert (other["split"], other["index"]) == ("test", 2)
    refused = client.post(
        "/mcp", json=rpc("openenv/session/create", {"split": "test", "index": "two"})
    ).json()
    assert refused["error"]["code"] == -32602 and "index" in refused["error"]["message"]
