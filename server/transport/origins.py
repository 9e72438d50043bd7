"""The one Origin rule of every door a browser page could drive: `/mcp` and `/ws`.

A page on any site can send requests to a server on the visitor's machine, and a DNS
rebinding attack even makes the page look same-host (`Host: evil.example` resolving to
127.0.0.1). WebSockets have no CORS at all: any page may open one. So both MCP's
Streamable HTTP (`/mcp`, as the MCP spec requires) and the WebSocket (`/ws`, which
carries OpenEnv's messages and `mcp` messages, and can attach to an MCP session) check
the `Origin` a browser always sends, with this one function:

* no `Origin`: not a browser (curl, Python, an MCP or OpenEnv client): allowed;
* a loopback origin (`localhost`, 127.0.0.0/8, `::1`, http or https): allowed;
* one of `CORS_ORIGINS` (`*`: any): allowed;
* anything else (another site, `null`, `file://`): refused, 403, before anything runs.
"""

from __future__ import annotations

import ipaddress
import json
from urllib.parse import urlsplit

from starlette.responses import Response
from starlette.websockets import WebSocket


def origin_allowed(origin: str | None, allowed: tuple[str, ...]) -> bool:
    """Whether a request from `origin` may reach an MCP or WebSocket endpoint."""
    if origin is None or "*" in allowed:
        return True
    text = origin.strip().lower().rstrip("/")
    if text in {entry.strip().lower().rstrip("/") for entry in allowed}:
        return True
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def origin_refusal(origin: str, door: str) -> str:
    """The message of a refused Origin."""
    return (
        f"Forbidden: Origin {origin[:200]!r} may not use this {door} endpoint (a loopback "
        "origin may; list others in CORS_ORIGINS)"
    )


async def admit_websocket(socket: WebSocket, allowed: tuple[str, ...]) -> bool:
    """Whether the WebSocket handshake's Origin passes; if not, the handshake is refused
    with 403 and a JSON `detail` (the connection is never accepted)."""
    origin = socket.headers.get("origin")
    if origin_allowed(origin, allowed):
        return True
    assert origin is not None
    body = json.dumps({"detail": origin_refusal(origin, "WebSocket")}).encode()
    denial = Response(body, status_code=403, media_type="application/json")
    if "websocket.http.response" in socket.scope.get("extensions", {}):
        await socket.send_denial_response(denial)
    else:  # a server without the denial-response extension: a bare 403
        await socket.close(code=1008)
    return False
