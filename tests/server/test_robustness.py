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
    SURFACES,
    VALID_ACTION,
    Case,
    refused_as_bare_action,
    reset_cases,
    step_cases,
    strict_json,
)

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.fast_path import EpisodeRoutes
from servicebench_support_queue.server.settings import Settings

TASK = {"servicebench": "return_and_refund", "support_queue": "medium_sla_defense"}
MCP_ERROR_CODES = {-32700, -32600, -32601, -32602}  # never -32603, an internal error


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
) -> list[str]:
    """Send each case at a live episode and judge the episode's state before and after it
    (readable and strict whatever happened); a case that was accepted moved the episode on,
    so the next one gets a fresh episode."""
    problems: list[str] = []
    async with client() as http:
        episode = await start(http, prefix, env)
        before = await read_state(http, prefix, episode)
        for case in cases:
            status, accepted, found = await send(http, case, episode)
            after = await read_state(http, prefix, episode)
            problems += found + judge(case, status, accepted, before, after)
            if accepted:
                episode = await start(http, prefix, env)
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


def mcp_cases(env: str) -> list[Case]:
    """Each hostile step as the action of a tools/call, and hostile JSON-RPC envelopes."""
    episode = EPISODE
    wrap = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "step", '
        b'"arguments": {"episode_id": "%s", "action": ' % episode.encode()
    )
    cases = [
        Case(
            f"tools/call step: {case.name}",
            wrap + (case.body or b"null") + b"}}}",
            case.content_type,
            refused=refused_as_bare_action(case),
        )
        for case in step_cases(env)
    ]
    cases.append(Case("tools/list without Content-Type", rpc("tools/list"), None, refused=False))
    hostile_ids: list[Any] = [[1], {"a": 1}, True]
    cases += [
        Case(f"id {request_id!r}", rpc("tools/list", request_id=request_id))
        for request_id in hostile_ids
    ]
    cases += [
        Case(f"id {name}", b'{"jsonrpc": "2.0", "method": "tools/list", "id": ' + raw + b"}")
        for name, raw in (
            ("2^64", b"18446744073709551616"),
            ("NaN", b"NaN"),
            ("surrogate", b'"\\ud800"'),
        )
    ]
    cases += [
        Case("method not a string", b'{"jsonrpc": "2.0", "id": 1, "method": ["tools/list"]}'),
        Case(
            "method with a surrogate", b'{"jsonrpc": "2.0", "id": 1, "method": "tools/\\udc00list"}'
        ),
        Case("batch (an array)", b"[" + rpc("tools/list") + b"]"),
        Case(
            "params an array", b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1]}'
        ),
        Case("arguments an array", rpc("tools/call", {"name": "step", "arguments": [episode]})),
        Case(
            "arguments an empty array", rpc("tools/call", {"name": "list_tasks", "arguments": []})
        ),
        Case(
            "params an empty array",
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": []}',
        ),
        Case("arguments a number", rpc("tools/call", {"name": "list_tasks", "arguments": 0})),
        Case("tool name an array", rpc("tools/call", {"name": ["step"], "arguments": {}})),
        Case(
            "episode_id a list",
            rpc("tools/call", {"name": "state", "arguments": {"episode_id": [episode]}}),
        ),
        Case(
            "episode_id an object",
            rpc(
                "tools/call",
                {
                    "name": "step",
                    "arguments": {"episode_id": {"id": episode}, "action": VALID_ACTION[env]},
                },
            ),
        ),
        Case(
            "reset onto the live episode",
            rpc(
                "tools/call",
                {"name": "reset", "arguments": {"task_id": TASK[env], "episode_id": episode}},
            ),
        ),
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
        response.status_code not in (200, 413)
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

    problems = asyncio.run(play_battery(client, prefix, env, mcp_cases(env), send))
    assert not problems, "\n".join(problems[:40])
