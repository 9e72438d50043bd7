"""The floor of uvicorn's WebSocket path: a raw ASGI app that does nothing per message.

(bench/ws_ideal.py is its counterpart that does the least a ServiceBench server must.)

It accepts, then answers every text message with one fixed observation, with no
framework, parsing or environment. Served and driven exactly like the two peers,
its CPU per message is what uvicorn, the websockets library and the kernel cost
on their own: the part of figure 3 that no server on this stack can avoid.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

REPLY = '{"type":"observation","data":{"observation":{"echoed_message":"hello"},"reward":1.0,"done":false}}'
HEALTHY = b'{"status":"healthy"}'

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def accepted(scope: dict[str, Any], receive: Receive, send: Send) -> bool:
    """Accept a WebSocket and say True; answer anything else as `/health` (which
    bench.servers waits for) and say False."""
    if scope["type"] == "http":
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": HEALTHY})
        return False
    if scope["type"] != "websocket":
        return False
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    return True


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if not await accepted(scope, receive, send):
        return
    while (await receive())["type"] != "websocket.disconnect":
        await send({"type": "websocket.send", "text": REPLY})
