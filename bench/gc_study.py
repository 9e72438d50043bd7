"""Where a WebSocket message's worst cases come from, in CPU time (issue 21, figure 7).

1,000 WebSocket sessions are opened on the app's ASGI callable, in-process (no sockets,
no load generator), each playing the ServiceBench episode mix; messages go to the
sessions in turn, one at a time, 30,000 in all. Each message is timed in the CPU time of
the thread (`time.thread_time`), so a busy shared machine does not inflate it, and every
pause of the cyclic garbage collector is recorded with its generation. The app runs its
lifespan (what a server does at startup: the GC tuning included).

    python -m bench.gc_study [--ref d02cc68] [--threshold N ...]

Each (revision, threshold) runs in a process of its own; `--threshold` overrides the
young-generation threshold after startup (default: as the revision sets it). Prints JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import time
from typing import Any

from bench.plans import episode_mix
from bench.servers import REPO, checkout
from bench.stats import summarize
from bench.ws_bench import episode_starts, messages

SESSIONS = 1000
MESSAGES = 30_000
PATH = "/servicebench/ws"


async def _study(threshold: int | None) -> dict[str, Any]:
    from servicebench_support_queue.server.app import app

    pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
    started: list[float] = []

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.thread_time())
        elif started:
            pauses[info["generation"]].append(time.thread_time() - started.pop())

    scope = {
        "type": "websocket",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "scheme": "ws",
        "path": PATH,
        "raw_path": PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"bench")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
        "subprotocols": [],
    }
    plan = episode_mix()
    cycle = [message.decode() for message, _ in messages(plan)]
    starts = episode_starts(plan)
    async with app.router.lifespan_context(app):
        if threshold is not None:
            gc.set_threshold(threshold, *gc.get_threshold()[1:])
        sessions = []
        for _ in range(SESSIONS):
            inbox: asyncio.Queue = asyncio.Queue()
            outbox: asyncio.Queue = asyncio.Queue()
            await inbox.put({"type": "websocket.connect"})
            task = asyncio.create_task(app(dict(scope), inbox.get, outbox.put))
            assert (await outbox.get())["type"] == "websocket.accept"
            sessions.append((inbox, outbox, task))
        gc.callbacks.append(on_gc)
        cpu: list[float] = []
        positions = [starts[number % len(starts)] for number in range(SESSIONS)]
        for number in range(MESSAGES):
            inbox, outbox, _ = sessions[number % SESSIONS]
            position = positions[number % SESSIONS]
            began = time.thread_time()
            await inbox.put({"type": "websocket.receive", "text": cycle[position]})
            reply = await outbox.get()
            cpu.append(time.thread_time() - began)
            assert '"type":"observation"' in reply["text"].replace(" ", ""), reply
            positions[number % SESSIONS] = (position + 1) % len(cycle)
        gc.callbacks.remove(on_gc)
        for inbox, _, task in sessions:
            await inbox.put({"type": "websocket.disconnect", "code": 1000})
            await task
    gc_stats = {}
    for generation, values in pauses.items():
        gc_stats[f"gen{generation}"] = {
            "count": len(values),
            "total_ms": round(sum(values) * 1000, 1),
            "max_ms": round(max(values, default=0.0) * 1000, 2),
        }
    return {"threshold": gc.get_threshold(), "message_cpu": summarize(cpu), "gc": gc_stats}


def _child(app_dir: str, threshold: int | None) -> dict[str, Any]:
    """One study in a fresh process importing the app from `app_dir` (or this checkout)."""
    code = (
        "import asyncio, json, sys; sys.path.insert(0, sys.argv[1]) if sys.argv[1] else None; "
        "from bench.gc_study import _study; "
        "t = None if sys.argv[2] == '-' else int(sys.argv[2]); "
        "print(json.dumps(asyncio.run(_study(t))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, app_dir, "-" if threshold is None else str(threshold)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default="d02cc68")
    parser.add_argument("--threshold", type=int, nargs="*", default=[])
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with checkout(args.ref) as old_dir:
        for name, app_dir in ((f"ref {args.ref}", str(old_dir)), ("this checkout", "")):
            results[name] = _child(app_dir, None)
        for threshold in args.threshold:
            results[f"this checkout, threshold {threshold}"] = _child("", threshold)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
