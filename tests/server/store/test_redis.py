"""The Redis backend's own wire format: the commands it packs itself."""

from __future__ import annotations

import pytest
from redis.asyncio import Connection

from servicebench_support_queue.server.store.redis import packed

COMMANDS = [
    ("EVALSHA", "a" * 40, 3, "sbsq:ep:e-1", "sbsq:used", "sbsq:done", "e-1", 0, "{}", 1, "", 9),
    ("HGET", "sbsq:latest", "*"),
    ("EVALSHA", "b" * 40, 1, "k", '{"note":"café ☕ 🚀","n":-12}', -(2**63), 2**64, 10**40),
    ("SET", b"raw\r\nbytes\x00\xff", b"", "x" * 70_000),
]


@pytest.mark.parametrize("count", [1, 2, len(COMMANDS)])
def test_commands_are_packed_byte_for_byte_as_redis_py_packs_them(count: int) -> None:
    batch = COMMANDS[:count]
    assert packed(batch) == b"".join(Connection().pack_commands(batch))


@pytest.mark.parametrize("argument", [True, 1.5, None, ["list"]])
def test_an_argument_of_another_type_is_refused_not_guessed(argument: object) -> None:
    with pytest.raises(TypeError, match="str, bytes or int"):
        packed([("SET", "key", argument)])  # type: ignore[list-item]
