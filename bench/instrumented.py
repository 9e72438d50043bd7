"""The app, with what the server does between messages on record: for benchmarks only.

    uvicorn bench.instrumented:app ...   (serves servicebench_support_queue.server.app:app)

It wraps whichever `servicebench_support_queue` is importable (so the same wrapper serves an
older revision's checkout) and records, in the server process:

* every pause of the cyclic garbage collector, by generation (gc.callbacks), in wall time
  and in the CPU time of the loop's thread (what the pause would last on an idle machine);
* the event loop's lag: a task that sleeps `TICK` seconds and measures how late it wakes;

`GET /__diagnostics` answers them (and resets them), without touching the app.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from typing import Any

from servicebench_support_queue.server.app import app as inner

TICK = 0.005
_pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
_cpu: dict[int, list[float]] = {0: [], 1: [], 2: []}
_lags: list[float] = []
_started: list[tuple[float, float]] = []


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _started.append((time.perf_counter(), time.thread_time()))
    elif _started:
        wall, cpu = _started.pop()
        _pauses[info["generation"]].append(time.perf_counter() - wall)
        _cpu[info["generation"]].append(time.thread_time() - cpu)


async def _watch_lag() -> None:
    while True:
        before = time.perf_counter()
        await asyncio.sleep(TICK)
        _lags.append(time.perf_counter() - before - TICK)


def _summary() -> dict[str, Any]:
    def stats(values: list[float]) -> dict[str, float]:
        ordered = sorted(values)
        if not ordered:
            return {"count": 0}
        return {
            "count": len(ordered),
            "total_ms": sum(ordered) * 1000,
            "p50_ms": ordered[len(ordered) // 2] * 1000,
            "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
            "max_ms": ordered[-1] * 1000,
        }

    result = {
        "gc": {f"gen{gen}": stats(values) for gen, values in _pauses.items()},
        "gc_cpu": {f"gen{gen}": stats(values) for gen, values in _cpu.items()},
        "loop_lag": stats(_lags),
        "gc_counts": gc.get_count(),
        "gc_threshold": gc.get_threshold(),
        "objects_tracked": len(gc.get_objects()),
    }
    for values in (*_pauses.values(), *_cpu.values(), _lags):
        values.clear()
    return result


_watcher: list[asyncio.Task] = []


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http" and scope["path"] == "/__diagnostics":
        body = json.dumps(_summary()).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    if not _watcher:
        gc.callbacks.append(_on_gc)
        _watcher.append(asyncio.get_running_loop().create_task(_watch_lag()))
    await inner(scope, receive, send)
