"""The connections that wait for their client, the deadlines they have, and who makes room.

A connection waits for its client while a request's head is due (it just opened, or its
last response ended) and while a request's body is coming in; otherwise the app has the
turn (a request being answered) or it is a WebSocket session (which has policies of its
own). Waiting is what a slow client makes a server do for free, so here it is bounded:

* a head must be complete within `HEADER_TIMEOUT_SECONDS`; a connection still waiting
  then is closed (with a 408 if part of a head came);
* at the connection cap (a little below the process's file-descriptor limit, which
  would otherwise make `accept` fail for everyone, `/health` included), a new connection
  closes the one that has waited longest, heads before bodies; only if none waits is the
  newcomer refused.

The room is swept about once a second, from the oldest waiter on, so a deadline costs a
dictionary insert per request and never a timer per connection.
"""

from __future__ import annotations

import asyncio
import resource
import time
import weakref
from collections import OrderedDict
from typing import Protocol

SWEEP_SECONDS = 1.0
FD_RESERVE_SHARE = 8
"""One descriptor in this many stays free for what is not a connection (files, stores)."""
FD_RESERVE_MIN, FD_RESERVE_MAX = 32, 256


class Waiter(Protocol):
    """What the room asks of a connection."""

    def head_timed_out(self) -> None: ...

    def evict(self) -> None: ...


def connection_cap(soft_limit: int | None = None) -> int:
    """How many connections one process may hold: its descriptor limit less a reserve."""
    if soft_limit is None:
        soft_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft_limit == resource.RLIM_INFINITY or soft_limit <= 0:
        soft_limit = 1 << 20
    reserve = min(FD_RESERVE_MAX, max(FD_RESERVE_MIN, soft_limit // FD_RESERVE_SHARE))
    return max(1, soft_limit - reserve)


class WaitingRoom:
    """The waiting connections of one server, oldest first, and the sweep of their deadlines."""

    def __init__(self, header_timeout: float, cap: int) -> None:
        self.header_timeout = header_timeout
        self.cap = cap
        self.heads: OrderedDict[Waiter, float] = OrderedDict()
        self.bodies: OrderedDict[Waiter, float] = OrderedDict()
        self._sweep: asyncio.TimerHandle | None = None
        self.evicted = 0
        self.timed_out = 0

    def wait_for_head(self, waiter: Waiter) -> None:
        self.bodies.pop(waiter, None)
        self.heads.pop(waiter, None)
        self.heads[waiter] = time.monotonic()
        if self._sweep is None:
            self._sweep = asyncio.get_running_loop().call_later(SWEEP_SECONDS, self.sweep)

    def wait_for_body(self, waiter: Waiter) -> None:
        self.heads.pop(waiter, None)
        self.bodies.pop(waiter, None)
        self.bodies[waiter] = time.monotonic()

    def leave(self, waiter: Waiter) -> None:
        self.heads.pop(waiter, None)
        self.bodies.pop(waiter, None)

    def make_room(self, connections: int) -> bool:
        """With `connections` open (a newcomer included): whether it may stay, after closing
        the longest waiter if the cap is passed."""
        if connections <= self.cap:
            return True
        for queue in (self.heads, self.bodies):
            if queue:
                victim = next(iter(queue))
                self.leave(victim)
                self.evicted += 1
                victim.evict()
                return True
        return False

    def sweep(self) -> None:
        """Close every connection whose head is overdue; come back while any waits."""
        self._sweep = None
        overdue = time.monotonic() - self.header_timeout
        while self.heads:
            waiter, since = next(iter(self.heads.items()))
            if since > overdue:
                break
            self.leave(waiter)
            self.timed_out += 1
            waiter.head_timed_out()
        if self.heads:
            self._sweep = asyncio.get_running_loop().call_later(SWEEP_SECONDS, self.sweep)


_ROOMS: weakref.WeakKeyDictionary[object, WaitingRoom] = weakref.WeakKeyDictionary()


def room_of(server_state: object, header_timeout: float) -> WaitingRoom:
    """The one room of a server (uvicorn's ServerState), made on first use."""
    room = _ROOMS.get(server_state)
    if room is None:
        room = _ROOMS[server_state] = WaitingRoom(header_timeout, connection_cap())
    return room
