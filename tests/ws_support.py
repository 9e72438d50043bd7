"""WebSocket sessions in tests, in process (TestClient): messages, and closes that wait.

The test client cancels a connection's handler as soon as the test leaves the `with`
block; a handler that still had to end or release its episode in a durable store (a
round trip) would then never do it. These helpers wait for the server instead.
"""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi.testclient import TestClient

from servicebench_support_queue.server.lifecycle.owners import RELEASED
from servicebench_support_queue.server.transport import ws


def ws_send(socket: Any, kind: str, data: Any = None, **extra: Any) -> dict[str, Any]:
    socket.send_text(json.dumps({"type": kind, "data": data or {}, **extra}))
    return json.loads(socket.receive_text())


def close(socket: Any) -> None:
    """Send the `close` message and wait for the server's close (after it ended what it
    ends), rather than leaving at once (the test client then cancels the handler)."""
    socket.send_text(json.dumps({"type": "close"}))
    assert socket.receive()["type"] == "websocket.close"


def normal_close(app: TestClient, socket: Any) -> None:
    """Close the socket normally (1000) and wait until its handler has ended (it ends the
    connection's episode first), before the test client lets go of it."""
    limit = ws.SessionLimit.shared_by(app.app.state.store, 0)  # type: ignore[attr-defined]
    open_before = limit.active
    socket.close(code=1000)
    deadline = time.monotonic() + 30
    while limit.active >= open_before:
        assert time.monotonic() < deadline, "the connection's handler never ended"
        time.sleep(0.02)


def wait_released(app: TestClient, episode_id: str) -> None:
    """Wait until the connection that left has released the episode (its handler ends on
    its own, after the test client let go of it)."""
    store = app.app.state.store  # type: ignore[attr-defined]
    deadline = time.monotonic() + 30
    while not app.portal.call(store.hand_over, episode_id, RELEASED, RELEASED):  # a no-op CAS
        assert time.monotonic() < deadline, "the connection never released its episode"
        time.sleep(0.02)
