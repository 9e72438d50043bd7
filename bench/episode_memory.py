"""What one episode holds under an abusive client, on every store (issue 21).

An abusive client fills each episode as far as the limits let it: every step of its
environment's longest task, each action at the environment's byte limit
(`max_action_bytes`), in turn a write that stays in the episode's world (ServiceBench: a
refund whose reason is all the room the action leaves, under a new idempotency key: the
refunds of an order accumulate, and so do the entries of its key table) and an action
that takes the most room once parsed (thousands of tiny keys in the parameters or the
metadata); and, for ServiceBench, episodes of such keyed refunds only. Episodes are then
left idle. What one of them holds:

* `memory` store: the Python heap the live episodes retain (tracemalloc, after a full
  collection), per episode;
* SQLite and Redis: what the backend holds per episode (the database file's growth; Redis's
  `used_memory`), and what a worker's cache of rebuilt episodes retains (tracemalloc, as
  for the memory store).

    python -m bench.episode_memory [--episodes 300] [--stores memory sqlite redis]

Redis needs `redis-server` on PATH (a private one is started on a free port). The
results go to stdout as JSON; BENCHMARKS.md and docs/sessions-and-limits.md quote them.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import shutil
import sqlite3
import subprocess
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from servicebench_support_queue.server.app import ENVIRONMENTS
from servicebench_support_queue.server.lifecycle.episode import EpisodeEnvironment, action_entry
from servicebench_support_queue.server.lifecycle.episodes import Episodes
from servicebench_support_queue.server.lifecycle.owners import HTTP_OWNER, Actor
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.store import open_store
from servicebench_support_queue.server.strict_json import loads

SB, SQ = ENVIRONMENTS
REFUND_ORDER = "ORD-1001"
ORDERS_PROCESS_REFUND = "/orders/process-refund"


def _longest_task(env_cls: type[EpisodeEnvironment]) -> str:
    return max(env_cls.tasks, key=lambda card: card.max_steps).id


def _size(env_cls: type[EpisodeEnvironment], action: dict[str, Any]) -> int:
    """The bytes of `action` as its episode would keep it."""
    return len(action_entry(env_cls.action_cls.model_validate(action)))


def _filled(
    env_cls: type[EpisodeEnvironment], action: dict[str, Any], field: tuple[str, ...], salt: int
) -> dict:
    """`action` with the text at `field` grown until its entry is exactly at the env's limit;
    distinct per `salt`, so no two episodes share a string."""
    target = action
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = f"{salt:012d}"
    target[field[-1]] += "x" * (env_cls.max_action_bytes - _size(env_cls, action))
    return action


def _sprawling(
    env_cls: type[EpisodeEnvironment], action: dict[str, Any], field: str, salt: int
) -> dict:
    """`action` with an object at `field` of as many empty-list-valued keys as fit the env's
    limit: the JSON that takes the most room once parsed (some 20 times its size)."""
    sprawl: dict[str, list] = {}
    action[field] = sprawl
    room = env_cls.max_action_bytes - _size(env_cls, action)
    while room > 0:
        key = f"{salt:x}.{len(sprawl):x}"
        sprawl[key] = []
        room -= len(key) + 6  # "key":[], (one comma fewer for the first)
    while _size(env_cls, action) > env_cls.max_action_bytes:
        sprawl.popitem()
    return action


def _keyed_refund(env_cls: type[EpisodeEnvironment], unique: int) -> dict[str, Any]:
    """A refund under a new idempotency key, its reason all the room the action leaves: the
    order keeps the reason and the key table an entry (a short key leaves the reason most)."""
    refund = {"order_id": REFUND_ORDER, "amount": 0.01, "reason": "", "idempotency_key": ""}
    refund["idempotency_key"] = f"k{unique}"
    action = {"service": "order", "endpoint": ORDERS_PROCESS_REFUND, "method": "POST"}
    action["params"] = refund
    return _filled(env_cls, action, ("params", "reason"), unique)


def abusive_steps(
    env_cls: type[EpisodeEnvironment], salt: int, writes_only: bool = False
) -> list[dict[str, Any]]:
    """The actions of one abusive episode of the env's longest task, each at the byte limit:
    in turn a write its world keeps (ServiceBench: a keyed refund's reason) and an action of
    the most room once parsed (parameters, or metadata, of thousands of tiny keys); with
    `writes_only`, ServiceBench's are all keyed refunds."""
    steps = max(card.max_steps for card in env_cls.tasks)
    actions = []
    for step in range(steps):
        unique = salt * 100 + step
        if env_cls is SB and (writes_only or step % 2 == 0):
            actions.append(_keyed_refund(env_cls, unique))
        elif env_cls is SB:
            lookup = {"service": "user", "endpoint": "/users/lookup"}
            actions.append(_sprawling(env_cls, lookup, "params", unique))
        else:
            triage = {"priority": "P1", "queue": "billing", "disposition": "respond"}
            actions.append(_sprawling(env_cls, triage, "metadata", unique))
    return actions


CLIENT = Actor(HTTP_OWNER, "127.0.0.1")
"""One abusive client over HTTP holds every episode."""


async def play(
    episodes: Episodes, env_cls: type[EpisodeEnvironment], count: int, writes_only: bool = False
) -> None:
    """`count` abusive episodes, left idle."""
    for number in range(count):
        env, _ = await episodes.reset({"task_id": _longest_task(env_cls)}, CLIENT)
        for action in abusive_steps(env_cls, number, writes_only):
            # as a transport parses it (server/strict_json.py)
            await episodes.step(env.episode_id, loads(json.dumps(action).encode()))


def _heap() -> int:
    gc.collect()
    return sum(stat.size for stat in tracemalloc.take_snapshot().statistics("filename"))


@contextmanager
def _redis() -> Iterator[str]:
    """A private redis-server on a free port, without persistence."""
    from bench.servers import free_port

    server = shutil.which("redis-server")
    if server is None:
        raise RuntimeError("redis-server is not installed")
    port = free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    try:
        import redis

        client = redis.Redis(port=port)
        for _ in range(200):
            try:
                client.ping()
                break
            except redis.RedisError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=20)


def _backend_bytes(url: str) -> int:
    """What the backend holds: the SQLite database (its pages, after a checkpoint folds the
    WAL into them), or Redis's used memory."""
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite://")
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            free = db.execute("PRAGMA freelist_count").fetchone()[0]
            return (pages - free) * db.execute("PRAGMA page_size").fetchone()[0]
    import redis

    return int(redis.Redis.from_url(url).info("memory")["used_memory"])


async def measure(
    url: str, env_cls: type[EpisodeEnvironment], count: int, writes_only: bool = False
) -> dict[str, Any]:
    """Bytes per abusive idle episode: retained by this process, and held by the backend
    (`url` names an empty store)."""
    settings = Settings(episode_store=url, max_live_episodes=count + 10)
    store = open_store(settings, ENVIRONMENTS)
    episodes = Episodes(ENVIRONMENTS, store)
    await play(episodes, env_cls, 2)  # warm-up: imports, caches, connections
    backend = _backend_bytes(url) if url != "memory" else 0
    heap = _heap()
    await play(episodes, env_cls, count, writes_only)
    retained = (_heap() - heap) / count
    held = (_backend_bytes(url) - backend) / count if url != "memory" else None
    await store.close()
    return {"process_bytes": round(retained), "backend_bytes": held and round(held)}


def run(stores: list[str], count: int) -> dict[str, Any]:
    tracemalloc.start()
    results: dict[str, Any] = {"episodes": count, "limits": {}}
    for env_cls in ENVIRONMENTS:
        results["limits"][env_cls.env_name] = {
            "max_action_bytes": env_cls.max_action_bytes,
            "steps": max(card.max_steps for card in env_cls.tasks),
            "byte_budget": env_cls.byte_budget(),
            "memory_bound": env_cls.memory_bound(),
        }
    for kind in stores:
        for env_cls in ENVIRONMENTS:
            with _empty_store(kind) as url:
                result = asyncio.run(measure(url, env_cls, count))
            results.setdefault(kind, {})[env_cls.env_name] = result
        with _empty_store(kind) as url:  # ServiceBench's episodes of keyed writes only
            result = asyncio.run(measure(url, SB, count, writes_only=True))
        results[kind]["servicebench_keyed_writes_only"] = result
    return results


@contextmanager
def _empty_store(kind: str) -> Iterator[str]:
    if kind == "memory":
        yield "memory"
    elif kind == "sqlite":
        with tempfile.TemporaryDirectory() as directory:
            yield f"sqlite://{directory}/episodes.db"
    else:
        with _redis() as url:
            yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--stores", nargs="+", default=["memory", "sqlite", "redis"])
    args = parser.parse_args()
    print(json.dumps(run(args.stores, args.episodes), indent=2))


if __name__ == "__main__":
    main()
