"""Who may act on an episode: its owner, and the client whose share of the store it counts in.

Anyone who holds an episode's id may play it (step it, read its state): the id is a
bearer capability, 128 random bits unless the client chose it. Only the episode's
*owner* may restart it, switch its environment, or end it, and the store checks it in
the same atomic operation that does it (server/store/), so no transport can skip it:

* `HTTP_OWNER`: an episode reset over HTTP. HTTP has no restart and no delete, so no
  one restarts or ends it; it ends by expiry or to make room at the cap.
* `MCP_OWNER`: an MCP session. Its id is the session id, which MCP makes the session
  itself (`Mcp-Session-Id`), so whoever presents it speaks for the session: restarts it
  with `prompts/get`, ends it with DELETE or `openenv/session/close`, attaches a
  WebSocket to it. An id of any other kind of episode is not a session there (404).
* a connection owner (`connection_owner()`, `ws:<token>`): the WebSocket connection that
  reset the episode. Its `reset`, `close` and normal close end that episode and no other.
  A connection that goes away otherwise (a dropped network, a killed client) hands its
  episode over: it leaves it `RELEASED`, and the next connection to `resume` it takes it
  over (a reconnect), and from then on only that one ends it. While its connection lives,
  an episode is that connection's: another connection that resumes it plays it without
  owning it, as it plays an HTTP episode or an MCP session it resumes.

The client (`client_identity`) is the network address a request came from (an IPv6
client by its /64, which one host usually holds whole), for the per-client share of the
live-episode cap: at the cap, the store drops an episode of the client holding the most.
"""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass
from typing import Any

HTTP_OWNER = "http"
MCP_OWNER = "mcp"
CONNECTION_KIND = "ws"
UNKNOWN_CLIENT = "unknown"
MAX_CLIENT_CHARS = 64


RELEASED = CONNECTION_KIND
"""The owner of a WebSocket episode whose connection went away without ending it: the next
connection that resumes it takes it over."""


def connection_owner() -> str:
    """A new WebSocket connection's own owner token (unguessable, so never another's)."""
    return f"{CONNECTION_KIND}:{secrets.token_urlsafe(16)}"


def client_identity(host: str | None) -> str:
    """The client a request counts for: its IPv4 address, its IPv6 /64 network, or the
    transport's name for it (a Unix socket has none: all of its clients are one)."""
    if not host:
        return UNKNOWN_CLIENT
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "".join(c for c in host[:MAX_CLIENT_CHARS] if c.isprintable()) or UNKNOWN_CLIENT
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{address}/64", strict=False))
    return str(address)


def scope_client(scope: Any) -> str:
    """The client of an ASGI scope (HTTP or WebSocket), as uvicorn reports it (behind a
    proxy that it trusts, `--forwarded-allow-ips`, the address the proxy forwarded)."""
    client = scope.get("client")
    return client_identity(client[0] if client else None)


@dataclass(frozen=True)
class Actor:
    """Who acts: the owner it creates episodes as (and may restart or end them as), and the
    client whose share they count in."""

    owner: str
    client: str = UNKNOWN_CLIENT
