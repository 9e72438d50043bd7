"""Server CPU per request with no sockets: the ASGI apps driven in-process.

On this 2-vCPU VM a loopback send/recv costs tens of microseconds and the load
generator shares the CPUs, so socket-level ratios mix server work with system
costs. Driving each app's ASGI callable directly isolates the work the server
itself does per request or message (same request mix, same process, A B A B).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.plans import Plan, episode_mix
from bench.servers import BASELINES_DIR
from bench.ws_bench import messages

ASGIApp = Callable[..., Any]


def _http_scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"bench"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }


async def _post(app: ASGIApp, path: str, body: bytes) -> tuple[int, bytes]:
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)  # never: the request is complete
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(_http_scope(path), receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


async def http_us_per_request(app: ASGIApp, plan: Plan, cycles: int) -> float:
    started, requests = time.perf_counter(), 0
    for _ in range(cycles):
        for episode in plan.episodes:
            status, body = await _post(app, "/reset", episode.reset_body.encode())
            episode_id = json.loads(body).get("episode_id", "none")
            requests += 1
            for step in episode.steps:
                status, _ = await _post(
                    app, "/step", f'{{"action":{step},"episode_id":"{episode_id}"}}'.encode()
                )
                assert status == 200
                requests += 1
    return (time.perf_counter() - started) / requests * 1e6


async def ws_us_per_message(app: ASGIApp, path: str, plan: Plan, cycles: int) -> float:
    inbox: asyncio.Queue = asyncio.Queue()
    outbox: asyncio.Queue = asyncio.Queue()
    scope = {**_http_scope(path), "type": "websocket", "scheme": "ws", "subprotocols": []}
    await inbox.put({"type": "websocket.connect"})
    task = asyncio.create_task(app(scope, inbox.get, outbox.put))
    assert (await outbox.get())["type"] == "websocket.accept"
    cycle = [message.decode() for message, _ in messages(plan)]
    started = time.perf_counter()
    for _ in range(cycles):
        for message in cycle:
            await inbox.put({"type": "websocket.receive", "text": message})
            reply = await outbox.get()
            assert '"type":"observation"' in reply["text"].replace(" ", "")
    elapsed = time.perf_counter() - started
    await inbox.put({"type": "websocket.disconnect", "code": 1000})
    await task
    return elapsed / (cycles * len(cycle)) * 1e6


def asgi_section(rounds: int = 5, cycles: int = 150) -> dict[str, Any]:
    """Median µs per request (HTTP episode mix) and per message (WebSocket), each app in turn."""
    import gc

    sys.path.insert(0, str(BASELINES_DIR))
    import baselines  # the peers: OpenEnv's create_app echo env and a bare FastAPI route

    from servicebench_support_queue.server.app import create_app
    from servicebench_support_queue.server.settings import Settings

    ours = create_app(Settings())
    gc.collect()
    gc.freeze()  # as every served app does at startup
    mix = episode_mix()
    http_apps = {
        "servicebench": (ours, mix),
        "openenv-reference": (baselines.openenv_echo, mix.as_echo()),
        "bare-fastapi": (baselines.bare, mix.as_echo()),
    }
    ws_apps = {
        "servicebench": (ours, "/servicebench/ws", mix),
        "openenv-reference": (baselines.openenv_echo, "/ws", mix.as_echo()),
    }
    http: dict[str, list[float]] = {name: [] for name in http_apps}
    ws: dict[str, list[float]] = {name: [] for name in ws_apps}
    for _ in range(rounds):
        for name, (app, plan) in http_apps.items():
            http[name].append(asyncio.run(http_us_per_request(app, plan, cycles)))
        for name, (app, path, plan) in ws_apps.items():
            ws[name].append(asyncio.run(ws_us_per_message(app, path, plan, cycles)))
    return {
        "http_us_per_request": {k: statistics.median(v) for k, v in http.items()},
        "ws_us_per_message": {k: statistics.median(v) for k, v in ws.items()},
    }
