"""The robustness battery (issue 12): hostile input over HTTP, MCP and WebSocket.

Every case of tests/robustness_support.py goes to every surface: the root (both
environments) and both prefixes, over the plain-ASGI fast path and over the FastAPI
routes it stands in for, in process and through a real uvicorn. For each answer:

* never a 5xx, and every error is JSON that names the problem;
* a hostile case is refused (4xx) and leaves its episode byte-identical (`/state`
  before and after); a valid one, however odd its Unicode, is accepted and leaves
  `/state` readable and strictly encodable;
* MCP answers everything with a JSON-RPC object, never an internal error;
* a WebSocket session answers every bad message with OpenEnv's error reply and stays
  open with its episode intact (no close, 1006 or any other);
* nothing is logged as an unhandled error.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from robustness_support import (
    ODD_UNICODE,
    REFUSED_VALUES,
    SURFACES,
    VALID_ACTION,
    Case,
    reset_cases,
    splice,
    step_cases,
    strict_json,
    whole_body_cases,
)

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.transport.fast_path import EpisodeRoutes

TASK = {"servicebench": "return_and_refund", "support_queue": "medium_sla_defense"}
MCP_ERROR_CODES = {-32700, -32600, -32601, -32602}  # never -32603, an internal error
MCP_STATUSES = {200, 400, 413, 415}
"""200 for a JSON-RPC error, 400 for a request MCP's transport refuses (no id, no session),
413 for a body over the limit."""


OpenClient = Callable[[], httpx.AsyncClient]


def routed_app() -> FastAPI:
    """The app without its fast path: /reset and /step served by the FastAPI routes."""
    app = create_app(Settings())
    app.user_middleware = [m for m in app.user_middleware if m.cls is not EpisodeRoutes]
    return app


@pytest.fixture(params=["fast path", "FastAPI routes", "uvicorn"])
def client(
    request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> Iterator[OpenClient]:
    """Opens an async client of one way in: the app in process (fast path or FastAPI routes), or uvicorn."""
    if request.param == "uvicorn":
        url = request.getfixturevalue("battery_server")
        yield lambda: httpx.AsyncClient(base_url=url, timeout=30)
        return
    app = create_app(Settings()) if request.param == "fast path" else routed_app()
    with caplog.at_level(logging.ERROR):
        yield lambda: httpx.AsyncClient(
            transport=httpx.ASGITransport(app), base_url="http://battery"
        )
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text[-3000:]


async def start(client: httpx.AsyncClient, prefix: str, env: str) -> str:
    response = await client.post(f"{prefix}/reset", json={"task_id": TASK[env]})
    assert response.status_code == 200, response.text
    return response.json()["episode_id"]


async def start_session(client: httpx.AsyncClient, prefix: str, env: str) -> str:
    """A new MCP session (an HTTP episode's id names none: server/lifecycle/owners.py)."""
    create = rpc("openenv/session/create", {"task_id": TASK[env]})
    response = await client.post(
        f"{prefix}/mcp", content=create, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 200, response.text
    return response.json()["result"]["session_id"]


async def read_state(client: httpx.AsyncClient, prefix: str, episode: str) -> bytes:
    response = await client.get(f"{prefix}/state", params={"episode_id": episode})
    assert response.status_code == 200, response.text[:300]
    strict_json(response.content)
    return response.content


def headers(case: Case, episode: str | None = None) -> dict[str, str]:
    found = {"X-Episode-Id": episode} if episode else {}
    return found | ({"Content-Type": case.content_type} if case.content_type is not None else {})


def judge(case: Case, status: int, accepted: bool, before: bytes, after: bytes) -> list[str]:
    """What is wrong with one answer, if anything."""
    problems = [f"{status}"] if status >= 500 else []
    if case.refused and accepted:
        problems.append(f"accepted ({status})")
    if not case.refused and not accepted:
        problems.append(f"valid input refused ({status})")
    if not accepted and after != before:
        problems.append("refused, yet the episode changed")
    return [f"{case.name}: {problem}" for problem in problems]


def http_error_problems(case: Case, response: httpx.Response) -> list[str]:
    try:
        answer = strict_json(response.content)
    except ValueError as exc:
        return [f"{case.name}: the answer is not strict JSON: {exc}"]
    if response.status_code >= 400 and not (
        isinstance(answer, dict) and str(answer.get("detail", "")).strip()
    ):
        return [f"{case.name}: error without a detail: {response.text[:200]}"]
    return []


Sent = tuple[int, bool, list[str]]
"""One case's answer: (status, whether the episode accepted it, problems with the answer itself)."""


async def play_battery(
    client: OpenClient,
    prefix: str,
    env: str,
    cases: list[Case],
    send: Callable[[httpx.AsyncClient, Case, str], Awaitable[Sent]],
    begin: Callable[[httpx.AsyncClient, str, str], Awaitable[str]] = start,
) -> list[str]:
    """Send each case at a live episode and judge the episode's state before and after it
    (readable and strict whatever happened); a case that was accepted moved the episode on,
    so the next one gets a fresh episode."""
    problems: list[str] = []
    async with client() as http:
        episode = await begin(http, prefix, env)
        before = await read_state(http, prefix, episode)
        for case in cases:
            status, accepted, found = await send(http, case, episode)
            after = await read_state(http, prefix, episode)
            problems += found + judge(case, status, accepted, before, after)
            if accepted:
                episode = await begin(http, prefix, env)
                after = await read_state(http, prefix, episode)
            before = after
    return problems


@pytest.mark.parametrize(("prefix", "env"), SURFACES)
def test_hostile_steps_are_refused_and_change_nothing(
    client: OpenClient, prefix: str, env: str
) -> None:
    async def send(http: httpx.AsyncClient, case: Case, episode: str) -> Sent:
        response = await http.post(
            f"{prefix}/step", content=case.body, headers=headers(case, episode)
        )
        return (
            response.status_code,
            response.status_code == 200,
            http_error_problems(case, response),
        )

    problems = asyncio.run(play_battery(client, prefix, env, step_cases(env), send))
    assert not problems, "\n".join(problems[:40])


@pytest.mark.parametrize(("prefix", "env"), SURFACES)
def test_hostile_resets_are_refused_and_touch_no_episode(
    client: OpenClient, prefix: str, env: str
) -> None:
    async def battery() -> list[str]:
        problems: list[str] = []
        async with client() as http:
            episode = await start(http, prefix, env)
            before = await read_state(http, prefix, episode)
            live_id = Case("the live episode's id", json.dumps({"episode_id": episode}).encode())
            for case in [*reset_cases(), live_id]:
                response = await http.post(
                    f"{prefix}/reset", content=case.body, headers=headers(case)
                )
                after = await read_state(http, prefix, episode)
                problems += judge(
                    case, response.status_code, response.status_code == 200, before, after
                )
                problems += http_error_problems(case, response)
            retaken = await http.post(
                f"{prefix}/reset", json={"task_id": TASK[env], "episode_id": episode}
            )
            assert retaken.status_code == 409 and episode in retaken.json()["detail"]
        return problems

    problems = asyncio.run(battery())
    assert not problems, "\n".join(problems[:40])


# --------------------------------------------------------------------------- MCP


def rpc(method: str, params: dict[str, Any] | None = None, request_id: Any = 1) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
    ).encode()


EPISODE = "@EPISODE@"
"""Stands for the target episode's id in an MCP case; replaced when the case is sent."""

TOOL_CALLS = {
    "servicebench": {
        "lookup_user": {"email": "jane.doe@example.com", "user_id": None},
        "update_user": {"user_id": "USR-003", "updates": {"notes": "x", "email": None}},
        "update_stock": {"sku": "SKU-445", "adjustment": 1},
    },
    "support_queue": {"triage": {**VALID_ACTION["support_queue"], "summary": None}},
}
"""Valid tool calls of each environment (a strict model's nulls included), to spoil."""
HOSTILE_SLOTS = {
    "servicebench": (
        ("lookup_user", ("email",)),
        ("update_user", ("updates", "notes")),
        ("update_user", ("updates",)),
        ("update_stock", ("adjustment",)),
    ),
    "support_queue": (
        ("triage", ("summary",)),
        ("triage", ("response",)),
        ("triage", ("confidence",)),
        ("triage", ("priority",)),
    ),
}


def tool_call_body(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, "session_id": EPISODE}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def mcp_cases(env: str) -> list[Case]:
    """Hostile values in every argument slot of the tool calls, hostile whole bodies, and
    hostile JSON-RPC envelopes; each at a live episode, named as OpenEnv names its session."""
    episode = EPISODE
    name, arguments = next(iter(TOOL_CALLS[env].items()))
    valid = json.dumps(tool_call_body(name, arguments)).encode()
    cases = [
        Case(
            f"tools/call {tool}: {value} in {'.'.join(path)}",
            splice(
                tool_call_body(tool, TOOL_CALLS[env][tool]), ("params", "arguments", *path), raw
            ),
        )
        for tool, path in HOSTILE_SLOTS[env]
        for value, raw in REFUSED_VALUES.items()
    ]
    text_slot = HOSTILE_SLOTS[env][0]
    cases += [
        Case(
            f"tools/call: odd Unicode {label}",
            splice(
                tool_call_body(text_slot[0], TOOL_CALLS[env][text_slot[0]]),
                ("params", "arguments", *text_slot[1]),
                json.dumps(text, ensure_ascii=False).encode(),
            ),
            refused=False,
        )
        for label, text in ODD_UNICODE.items()
    ]
    cases += [
        Case(f"tools/call: {c.name}", c.body, c.content_type) for c in whole_body_cases(valid)
    ]
    cases.append(Case("tools/call without Content-Type", valid, None))
    cases.append(Case("tools/list without Content-Type", rpc("tools/list"), None))
    hostile_ids: list[Any] = [[1], {"a": 1}, True, None]
    cases += [
        Case(f"id {request_id!r}", rpc("tools/list", request_id=request_id))
        for request_id in hostile_ids
    ]
    cases += [
        Case(f"id {label}", b'{"jsonrpc": "2.0", "method": "tools/list", "id": ' + raw + b"}")
        for label, raw in (
            ("2^64", b"18446744073709551616"),
            ("NaN", b"NaN"),
            ("surrogate", b'"\\ud800"'),
        )
    ]
    call = {"name": name, "arguments": arguments, "session_id": episode}
    cases += [
        Case("method not a string", b'{"jsonrpc": "2.0", "id": 1, "method": ["tools/list"]}'),
        Case(
            "method with a surrogate", b'{"jsonrpc": "2.0", "id": 1, "method": "tools/\\udc00list"}'
        ),
        Case("batch (an array)", b"[" + valid + b"]"),
        Case("a request without an id", valid.replace(b'"id": 1, ', b"")),
        Case(
            "params an array", b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1]}'
        ),
        Case("arguments an array", rpc("tools/call", {**call, "arguments": [episode]})),
        Case("arguments a number", rpc("tools/call", {**call, "arguments": 0})),
        Case("tool name an array", rpc("tools/call", {**call, "name": [name]})),
        Case("an unknown tool", rpc("tools/call", {**call, "name": "step"})),
        Case("an unknown argument", rpc("tools/call", {**call, "arguments": {**arguments, "x": 1}}))
        if env == "support_queue"
        else Case("no session", rpc("tools/call", {"name": name, "arguments": arguments})),
        Case("session_id a list", rpc("tools/call", {**call, "session_id": [episode]})),
        Case("session_id an object", rpc("tools/call", {**call, "session_id": {"id": episode}})),
        Case("an unknown session_id", rpc("tools/call", {**call, "session_id": "nope"})),
        Case("close a list", rpc("openenv/session/close", {"session_id": [episode]})),
        Case(
            "prompts/get with a bad seed",
            rpc(
                "prompts/get",
                {"name": TASK[env], "arguments": {"seed": "-1"}, "session_id": episode},
            ),
        ),
        Case(
            "prompts/get with a huge seed",
            rpc(
                "prompts/get",
                {"name": TASK[env], "arguments": {"seed": "9" * 30}, "session_id": episode},
            ),
        ),
        Case(
            "create onto the live episode", rpc("openenv/session/create", {"episode_id": episode})
        ),
        Case("create with an unknown task", rpc("openenv/session/create", {"task_id": "nope"})),
        Case("no jsonrpc version", b'{"id": 1, "method": "tools/list"}'),
    ]
    return cases


def mcp_problems(case: Case, response: httpx.Response) -> tuple[bool, list[str]]:
    """(accepted, problems) of one MCP answer."""
    try:
        answer = strict_json(response.content)
    except ValueError as exc:
        return False, [f"{case.name}: not strict JSON: {exc}"]
    if (
        response.status_code not in MCP_STATUSES
        or not isinstance(answer, dict)
        or answer.get("jsonrpc") != "2.0"
    ):
        return False, [
            f"{case.name}: not a JSON-RPC answer: {response.status_code} {response.text[:200]}"
        ]
    if "error" in answer:
        error = answer["error"]
        ok = error.get("code") in MCP_ERROR_CODES and str(error.get("message", "")).strip()
        return False, [] if ok else [f"{case.name}: bad error object {error}"]
    return answer["result"].get("isError") is not True, []


@pytest.mark.parametrize(("prefix", "env"), SURFACES)
def test_mcp_answers_every_hostile_request_with_json_rpc(
    client: OpenClient, prefix: str, env: str
) -> None:
    async def send(http: httpx.AsyncClient, case: Case, episode: str) -> Sent:
        body = case.body.replace(EPISODE.encode(), episode.encode())
        response = await http.post(f"{prefix}/mcp", content=body, headers=headers(case))
        accepted, found = mcp_problems(case, response)
        return response.status_code, accepted, found

    problems = asyncio.run(play_battery(client, prefix, env, mcp_cases(env), send, start_session))
    assert not problems, "\n".join(problems[:40])
