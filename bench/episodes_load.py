"""Python-driven HTTP load: filling a server with live episodes, and timing single steps.

wrk cannot stop after exactly N requests, and its latency percentiles include a
coordinated-omission correction that turns one stall into many synthetic slow
samples; for counted fills and for per-request step latency this client is used
instead (bench.rawhttp: keep-alive, a few microseconds per request of client CPU).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from bench.plans import Plan
from bench.rawhttp import HttpConnection
from bench.stats import summarize


async def fill(url: str, plan: Plan, count: int, connections: int = 8) -> int:
    """Reset `count` episodes (the plan's reset bodies in turn); none is stepped or closed.

    Returns how many resets failed (anything but 200).
    """
    bodies = [episode.reset_body.encode() for episode in plan.episodes]
    next_index = 0
    failures = 0

    async def worker() -> None:
        nonlocal next_index, failures
        connection = await HttpConnection.connect(url)
        try:
            while next_index < count:
                index, next_index = next_index, next_index + 1
                status, _ = await connection.post("/reset", bodies[index % len(bodies)])
                failures += status != 200
        finally:
            await connection.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    return failures


async def step_latency(
    url: str, plan: Plan, seconds: float, connections: int = 2
) -> dict[str, Any]:
    """Per-step latency of closed-loop clients playing the plan; resets are not timed."""
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal errors
        connection = await HttpConnection.connect(url)
        try:
            while time.perf_counter() < deadline:
                for episode in plan.episodes:
                    status, body = await connection.post("/reset", episode.reset_body.encode())
                    if status != 200:
                        errors += 1
                        continue
                    episode_id = json.loads(body)["episode_id"]
                    for step in episode.steps:
                        request = f'{{"action":{step},"episode_id":"{episode_id}"}}'.encode()
                        started = time.perf_counter()
                        status, _ = await connection.post("/step", request)
                        latencies.append(time.perf_counter() - started)
                        errors += status != 200
        finally:
            await connection.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    return {"errors": errors, **summarize(latencies)}
