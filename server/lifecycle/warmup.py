"""The environments' one-time preparation (compiling rules, loading a model) off the start path.

Serving must answer /health within seconds of process start, so what an environment needs
only to *play* (Support Queue's safety rules take half a second of CPU to load) is not done at
import. The app's startup begins each environment's `warm()` in a thread of its own, once per
process; until it has finished, a request that plays that environment awaits it (the event
loop keeps serving everything else meanwhile, /health included). In-process use without the
app (tests, TRL, the baselines) needs none of this: `warm()` work is also done on first use.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from typing import Protocol

LOG = logging.getLogger(__name__)


class Warmable(Protocol):
    env_name: str

    @classmethod
    def warm(cls) -> None: ...


_lock = threading.Lock()
_warming: dict[type, Future[None]] = {}


def start(envs: Iterable[type[Warmable]]) -> list[Future[None]]:
    """Begin each environment's warm-up in a background thread, unless begun already; the
    futures of their warm-ups, in order."""
    futures = []
    for env in envs:
        with _lock:
            future = _warming.get(env)
            begin = future is None
            if future is None:
                future = _warming[env] = Future()
        if begin:
            name = f"warm-{env.env_name}"
            threading.Thread(target=_warm, args=(env, future), name=name, daemon=True).start()
        futures.append(future)
    return futures


def _warm(env: type[Warmable], future: Future[None]) -> None:
    try:
        env.warm()
    except BaseException as exc:  # reported to every waiter; the next request tries again
        LOG.exception("warming %s failed", env.env_name)
        with _lock:
            _warming.pop(env, None)
        future.set_exception(exc)
        return
    gc.freeze()  # what it made lives as long as the process: out of the cyclic GC's scans
    future.set_result(None)


async def ready(envs: Iterable[type[Warmable]]) -> None:
    """Wait, without blocking the event loop, until these environments are warm."""
    for future in start(envs):
        if future.done():
            future.result()  # raises what warming raised
        else:
            await asyncio.wrap_future(future)
