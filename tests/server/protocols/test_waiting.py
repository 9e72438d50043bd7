"""The waiting room (server/protocols/waiting.py): who is closed to make room, and when a head
is overdue; and the connection cap a descriptor limit allows."""

from __future__ import annotations

import asyncio
import resource

import pytest

from servicebench_support_queue.server.protocols import waiting
from servicebench_support_queue.server.protocols.waiting import WaitingRoom, connection_cap


class Connection:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def head_timed_out(self) -> None:
        self.log.append(f"timed out {self.name}")

    def evict(self) -> None:
        self.log.append(f"evicted {self.name}")


def test_the_cap_keeps_a_reserve_below_the_descriptor_limit() -> None:
    assert connection_cap(128) == 96 and connection_cap(1024) == 896
    assert connection_cap(1 << 20) == (1 << 20) - 256
    assert connection_cap(resource.RLIM_INFINITY) > 10**5


def test_room_is_made_by_closing_the_longest_waiting_head_then_body() -> None:
    async def scenario() -> list[str]:
        log: list[str] = []
        room = WaitingRoom(header_timeout=60, cap=3)
        a, b, c, d = (Connection(name, log) for name in "abcd")
        room.wait_for_body(a)
        room.wait_for_head(b)
        room.wait_for_head(c)
        room.wait_for_head(b)  # b waits afresh (its next request): c has waited longer now
        assert room.make_room(3) and not log
        assert room.make_room(4)
        room.leave(b)  # b's request is in: the app's turn, not a waiter
        assert room.make_room(4)
        room.wait_for_body(d)
        room.leave(d)
        assert not room.make_room(4), "nobody waits: the newcomer is refused"
        assert room.evicted == 2
        return log

    assert asyncio.run(scenario()) == ["evicted c", "evicted a"]


def test_overdue_heads_time_out_at_the_next_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waiting, "SWEEP_SECONDS", 0.01)

    async def scenario() -> list[str]:
        log: list[str] = []
        room = WaitingRoom(header_timeout=0.05, cap=100)
        slow, fresh, body = (Connection(name, log) for name in ("slow", "fresh", "body"))
        room.wait_for_head(slow)
        room.wait_for_body(body)
        await asyncio.sleep(0.04)
        room.wait_for_head(fresh)
        await asyncio.sleep(0.03)
        assert log == ["timed out slow"]
        await asyncio.sleep(0.05)
        assert room.timed_out == 2 and not room.heads and room.bodies
        return log

    assert asyncio.run(scenario()) == ["timed out slow", "timed out fresh"]
