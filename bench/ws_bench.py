"""WebSocket load through OpenEnv's protocol: throughput, and many slow sessions at once.

Messages are OpenEnv's `{"type": "reset"|"step", "data": ...}`; a reply that is
not `{"type": "observation", ...}` counts as an error. Latencies are measured
per message by the client, in milliseconds.

Figure 3 (throughput) is measured with the C generator, bench/wsload.py, whose
cost per message is a fraction of this asyncio client's; `throughput` here is
its fallback when no C compiler is found. `many_sessions` (figure 7) is paced,
not saturating, so the client's own cost does not matter there.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

from bench.plans import Plan
from bench.stats import summarize
from bench.wsclient import WSConnection

OBSERVATION_PREFIX = b'{"type":"observation"'


def messages(plan: Plan) -> list[tuple[bytes, bool]]:
    """The plan's cycle as OpenEnv messages, each with whether it is a step."""
    out: list[tuple[bytes, bool]] = []
    for episode in plan.episodes:
        out.append((f'{{"type":"reset","data":{episode.reset_body}}}'.encode(), False))
        out += [(f'{{"type":"step","data":{step}}}'.encode(), True) for step in episode.steps]
    return out


def episode_starts(plan: Plan) -> list[int]:
    """Indexes of the cycle's reset messages: where a connection may start playing."""
    starts, index = [], 0
    for episode in plan.episodes:
        starts.append(index)
        index += 1 + len(episode.steps)
    return starts


def _is_observation(reply: bytes) -> bool:
    return reply.replace(b" ", b"")[: len(OBSERVATION_PREFIX)] == OBSERVATION_PREFIX


async def throughput(ws_url: str, plan: Plan, connections: int, seconds: float) -> dict[str, Any]:
    """Connections play the plan back to back for `seconds`: steps/s and latency."""
    cycle, starts = messages(plan), episode_starts(plan)
    latencies: list[float] = []
    counts = {"steps": 0, "errors": 0}
    deadline = time.perf_counter() + seconds

    async def play(offset: int) -> None:
        connection = await WSConnection.connect(ws_url)
        index = starts[offset % len(starts)]
        try:
            while time.perf_counter() < deadline:
                message, is_step = cycle[index]
                started = time.perf_counter()
                reply = await connection.request(message)
                latencies.append(time.perf_counter() - started)
                counts["steps"] += is_step
                counts["errors"] += not _is_observation(reply)
                index = (index + 1) % len(cycle)
        finally:
            await connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(play(i) for i in range(connections)))
    elapsed = time.perf_counter() - started
    return {
        "steps_per_s": counts["steps"] / elapsed,
        "messages_per_s": len(latencies) / elapsed,
        "errors": counts["errors"],
        **summarize(latencies),
    }


async def many_sessions(
    ws_url: str, plan: Plan, sessions: int, seconds: float, interval: float = 1.0, seed: int = 7
) -> dict[str, Any]:
    """`sessions` connections held open at once, each sending one message every ~`interval` s.

    This is how rollouts waiting on a model behave. Every session connects first
    (a ramp), then all play for `seconds` with seeded random phases; only that
    window is measured.
    """
    cycle, starts = messages(plan), episode_starts(plan)
    rng = random.Random(seed)
    phases = [rng.uniform(0, interval) for _ in range(sessions)]
    latencies: list[float] = []
    counts = {"errors": 0, "connect_failures": 0, "messages": 0}
    connections: list[WSConnection] = []

    async def open_one() -> None:
        try:
            connections.append(await WSConnection.connect(ws_url, timeout=30))
        except (TimeoutError, OSError):
            counts["connect_failures"] += 1

    for start in range(0, sessions, 100):  # ramp: 100 handshakes at a time
        await asyncio.gather(*(open_one() for _ in range(start, min(sessions, start + 100))))
    begin = time.perf_counter() + 0.5
    end = begin + seconds

    async def play(number: int, connection: WSConnection) -> None:
        index = starts[number % len(starts)]
        due = begin + phases[number]
        while due < end:
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            message, _ = cycle[index]
            sent = time.perf_counter()
            try:
                reply = await connection.request(message)
            except (OSError, asyncio.IncompleteReadError, ConnectionError):
                counts["errors"] += 1
                return
            latencies.append(time.perf_counter() - sent)
            counts["messages"] += 1
            counts["errors"] += not _is_observation(reply)
            index = (index + 1) % len(cycle)
            due += interval

    await asyncio.gather(*(play(n, c) for n, c in enumerate(connections)))
    await asyncio.gather(*(c.close() for c in connections))
    return {
        "sessions": len(connections),
        "connect_failures": counts["connect_failures"],
        "messages": counts["messages"],
        "messages_per_s": counts["messages"] / seconds,
        "errors": counts["errors"],
        **summarize(latencies),
    }


if __name__ == "__main__":  # a quick manual check: python -m bench.ws_bench WS_URL
    import sys

    from bench.aio import run
    from bench.plans import episode_mix

    print(json.dumps(run(throughput(sys.argv[1], episode_mix(), 16, 5)), indent=2))
