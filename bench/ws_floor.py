"""The floor of uvicorn's WebSocket path: a raw ASGI app that does nothing per message.

It accepts, then answers every text message with one fixed observation, with no
framework, parsing or environment. Served and driven exactly like the two peers,
its CPU per message is what uvicorn, the websockets library and the kernel cost
on their own: the part of figure 3 that no server on this stack can avoid.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

REPLY = '{"type":"observation","data":{"observation":{"echoed_message":"hello"},"reward":1.0,"done":false}}'
HEALTHY = b'{"status":"healthy"}'

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] == "http":  # /health, so that bench.servers can wait for it
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": HEALTHY})
        return
    if scope["type"] != "websocket":
        return
    await receive()  # websocket.connect
    await send({"type": "websocket.accept"})
    while (await receive())["type"] != "websocket.disconnect":
        await send({"type": "websocket.send", "text": REPLY})
