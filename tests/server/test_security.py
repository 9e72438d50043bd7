"""Security of a shared deployment: unguessable episode ids, no listing of other
clients' episodes, no credentials in logs, and a deliberate CORS policy (issue 7).
"""

from __future__ import annotations

import json
import secrets
import string
from collections import Counter
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from uvicorn_process import started_server

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.lifecycle import episode
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.transport.log_redaction import redact_query

URLSAFE = set(string.ascii_letters + string.digits + "-_")
KNOWN_PATHS = {
    "/",
    "/reset",
    "/step",
    "/state",
    "/health",
    "/metadata",
    "/schema",
    "/tasks",
    "/tools",
    "/mcp",
    "/ws",
    # OpenEnv's Task API: the tasks a reset can play (specs of families and seeds), no episode
    "/list_environments",
    "/{env_name}/splits",
    "/{env_name}/tasks",
    "/{env_name}/num_tasks",
    "/{env_name}/task",
    "/{env_name}/task_range",
    # the grader's word count of the texts sent (the playground's live count), no episode
    "/support_queue/word_count",
}


def test_episode_ids_come_from_the_os_csprng_with_128_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []
    monkeypatch.setattr(secrets, "token_urlsafe", lambda nbytes: asked.append(nbytes) or "drawn")
    assert episode.new_episode_id() == "drawn" and asked == [16]


def test_episode_ids_are_unique_and_uniformly_distributed() -> None:
    client = TestClient(create_app(Settings()))
    ids = [client.post("/reset", json={}).json()["episode_id"] for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    assert all(len(episode_id) == 22 and set(episode_id) <= URLSAFE for episode_id in ids)
    prefixes = Counter(episode_id[:4] for episode_id in ids)  # 24 bits: ~0.1 collisions expected
    assert sum(count - 1 for count in prefixes.values()) <= 3
    symbols = Counter(char for episode_id in ids for char in episode_id[:21])  # 6 random bits each
    expected = len(ids) * 21 / 64
    assert len(symbols) == 64 and all(abs(n - expected) < 0.25 * expected for n in symbols.values())


def test_nothing_lists_or_reveals_another_clients_episode() -> None:
    app = create_app(Settings(require_episode_id=True))
    alice, mallory = TestClient(app), TestClient(app)
    secret_id = alice.post("/reset", json={"task_id": "return_and_refund"}).json()["episode_id"]
    assert alice.get("/state", params={"episode_id": secret_id}).status_code == 200

    seen = []
    for prefix in ("", "/servicebench"):
        without_id = (
            mallory.get(f"{prefix}/state"),
            mallory.post(f"{prefix}/step", json={"service": "user"}),
        )
        for response in without_id:
            assert response.status_code == 400 and "episode_id" in response.json()["detail"]
            seen.append(response.text)
        guess = mallory.get(f"{prefix}/state", params={"episode_id": secrets.token_urlsafe(16)})
        assert guess.status_code == 404
        seen.append(guess.text)
        for path in ("/", "/health", "/metadata", "/schema", "/tasks", "/openapi.json"):
            seen.append(mallory.get(prefix + path).text)
        seen.append(mallory.get(f"{prefix}/servicebench/splits").text)
        body = {"split": "train", "start": 0, "stop": 50}
        seen.append(mallory.post(f"{prefix}/servicebench/task_range", json=body).text)
        for method, params in (  # MCP never falls back to the latest episode: no session, no play
            ("tools/call", {"name": "lookup_user", "arguments": {"user_id": "USR-001"}}),
            ("prompts/get", {"name": "return_and_refund"}),
            ("prompts/list", {}),
        ):
            rpc = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            answer = mallory.post(f"{prefix}/mcp", json=rpc)
            assert answer.status_code == (200 if method == "prompts/list" else 400), answer.text
            seen.append(answer.text)
        tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        seen.append(mallory.post(f"{prefix}/mcp", json=tools).text)
        paths = set(mallory.get(f"{prefix}/openapi.json").json()["paths"])
        assert paths <= KNOWN_PATHS, paths - KNOWN_PATHS  # no route lists episodes
    assert not [text for text in seen if secret_id in text]


SECRETS = {
    "HF_TOKEN": "hf_secretTokenValue0001",
    "OPENAI_API_KEY": "sk-secretKeyValue0002",
    "API_KEY": "secretKeyValue0003",
}
SENT = (
    "bearerSecretValue0004",
    "querySecretValue0005",
    "cookieSecretValue0006",
    "bodySecretValue0007",
)


def test_credentials_never_reach_the_log(tmp_path: Path) -> None:
    log_path = tmp_path / "server.log"
    bearer, query, cookie, body = SENT
    with (
        started_server(SECRETS, log_path) as (_, url),
        httpx.Client(base_url=url, timeout=10) as client,
    ):
        headers = {
            "Authorization": f"Bearer {bearer}",
            "X-Api-Key": bearer,
            "Cookie": f"session={cookie}",
        }
        client.post(
            "/reset", headers=headers, params={"api_key": query, "token": query, "episode_id": "x"}
        )
        client.get("/state", headers=headers, params={"access_token": query, "secret": query})
        client.post("/step", headers=headers, json={"action": {"service": body, "api_key": body}})
        client.post("/step", headers=headers, content=b'{"api_key": "' + body.encode())
        client.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": body})
        client.get("/nowhere", headers=headers, params={"password": query})
    log = log_path.read_text()
    assert log.count('"POST /reset') == 1 and "[redacted]" in log  # the access log was on
    leaked = [value for value in (*SECRETS.values(), *SENT) if value in log]
    assert not leaked, log


def test_redaction_keeps_ordinary_parameters() -> None:
    assert (
        redact_query("/state?episode_id=abc&api_key=s3cr%65t&x=1")
        == "/state?episode_id=abc&api_key=[redacted]&x=1"
    )
    assert redact_query("/state") == "/state" and redact_query("/s?token") == "/s?token"


# --------------------------------------------------------------------------- CORS

PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "content-type,x-episode-id",
}


def test_cors_is_off_unless_origins_are_configured() -> None:
    client = TestClient(create_app(Settings()))
    origin = {"Origin": "https://trainer.example"}
    assert "access-control-allow-origin" not in client.post("/reset", headers=origin).headers
    preflight = client.options("/step", headers={**origin, **PREFLIGHT})
    assert preflight.status_code >= 400 and "access-control-allow-origin" not in preflight.headers


def test_cors_allows_exactly_the_configured_origins() -> None:
    settings = Settings.from_env({"CORS_ORIGINS": "https://trainer.example, https://lab.example"})
    assert settings.cors_origins == ("https://trainer.example", "https://lab.example")
    client = TestClient(create_app(settings))
    allowed = client.options("/step", headers={"Origin": "https://lab.example", **PREFLIGHT})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://lab.example"
    assert "x-episode-id" in allowed.headers["access-control-allow-headers"].lower()
    assert (
        "access-control-allow-credentials" not in allowed.headers
    )  # no cookies: ids are the capability
    reset = client.post("/reset", json={}, headers={"Origin": "https://trainer.example"})
    assert reset.headers["access-control-allow-origin"] == "https://trainer.example"
    refused = client.options("/step", headers={"Origin": "https://evil.example", **PREFLIGHT})
    assert refused.status_code == 400 and "access-control-allow-origin" not in refused.headers
    other = client.post("/reset", json={}, headers={"Origin": "https://evil.example"})
    assert other.status_code == 200 and "access-control-allow-origin" not in other.headers
    blind = client.post("/reset", headers={"Origin": "https://evil.example"})  # no preflight
    assert blind.status_code == 415 and "access-control-allow-origin" not in blind.headers


def test_cors_wildcard_allows_any_origin() -> None:
    client = TestClient(create_app(Settings.from_env({"CORS_ORIGINS": "*"})))
    response = client.post("/reset", json={}, headers={"Origin": "https://anyone.example"})
    assert response.headers["access-control-allow-origin"] == "*"
    assert json.loads(response.text)["episode_id"]
