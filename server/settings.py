"""Server settings, read once from environment variables (documented in docs/sessions-and-limits.md)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass


def _flag(value: str) -> bool:
    return value.strip().lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Settings:
    episode_store: str = "memory"
    """EPISODE_STORE: where episodes live: `memory` (this process), `sqlite:///ABSOLUTE/PATH.db`
    (durable, shared by the processes of one host) or a Redis URL (`redis://HOST:PORT/DB`,
    `rediss://...`, `unix:///PATH?db=N`: durable, shared by a fleet). See server/store/."""
    max_live_episodes: int = 10_000
    """MAX_LIVE_EPISODES: live HTTP episodes kept at once; past it the store makes room."""
    episode_ttl_seconds: float = 3600.0
    """EPISODE_TTL_SECONDS: an HTTP episode idle this long expires (then 404)."""
    require_episode_id: bool = False
    """REQUIRE_EPISODE_ID: refuse /step and /state without an episode id (shared deployments)."""
    max_body_bytes: int = 64 * 1024
    """MAX_BODY_BYTES: a larger request body answers 413."""
    header_timeout_seconds: float = 10.0
    """HEADER_TIMEOUT_SECONDS: a request's head (request line and headers) must arrive within
    this after the connection opens or the previous response ends (server/protocols/)."""
    body_timeout_seconds: float = 30.0
    """BODY_TIMEOUT_SECONDS: a request's body must arrive within this once the app reads it
    (else 408); a truncated body never holds a connection longer."""
    send_timeout_seconds: float = 30.0
    """SEND_TIMEOUT_SECONDS: a client that reads nothing of what the server sends it (its
    answers, replies) for this long is disconnected (server/protocols/)."""
    ws_idle_timeout_seconds: float = 600.0
    """WS_IDLE_TIMEOUT_SECONDS: a WebSocket that sends no message for this long is closed
    (1001); its episode stays, to `resume` on a new connection."""
    max_ws_sessions: int = 4096
    """MAX_WS_SESSIONS: concurrent WebSocket sessions per process; past it a new one is refused."""
    cors_origins: tuple[str, ...] = ()
    """CORS_ORIGINS: comma-separated origins allowed to call from a browser ('*' for any)."""
    telemetry: bool = False
    """TELEMETRY: FastAPI's native OpenTelemetry spans, metrics and logs per request (off:
    it costs every request a look at the global providers, and nothing here exports them)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        defaults = cls()

        def number(name: str, default: float, kind: type) -> float:
            raw = environ.get(name)
            if raw is None or not raw.strip():
                return default
            try:
                value = kind(raw)
            except ValueError:
                raise ValueError(f"{name} must be a number, got {raw!r}") from None
            if not value > 0 or not math.isfinite(value):
                raise ValueError(f"{name} must be a positive finite number, got {raw!r}")
            return value

        origins = environ.get("CORS_ORIGINS", "")
        return cls(
            episode_store=environ.get("EPISODE_STORE", "").strip() or defaults.episode_store,
            max_live_episodes=int(number("MAX_LIVE_EPISODES", defaults.max_live_episodes, int)),
            episode_ttl_seconds=number("EPISODE_TTL_SECONDS", defaults.episode_ttl_seconds, float),
            require_episode_id=_flag(environ.get("REQUIRE_EPISODE_ID", "")),
            max_body_bytes=int(number("MAX_BODY_BYTES", defaults.max_body_bytes, int)),
            header_timeout_seconds=number(
                "HEADER_TIMEOUT_SECONDS", defaults.header_timeout_seconds, float
            ),
            body_timeout_seconds=number(
                "BODY_TIMEOUT_SECONDS", defaults.body_timeout_seconds, float
            ),
            send_timeout_seconds=number(
                "SEND_TIMEOUT_SECONDS", defaults.send_timeout_seconds, float
            ),
            ws_idle_timeout_seconds=number(
                "WS_IDLE_TIMEOUT_SECONDS", defaults.ws_idle_timeout_seconds, float
            ),
            max_ws_sessions=int(number("MAX_WS_SESSIONS", defaults.max_ws_sessions, int)),
            cors_origins=tuple(o.strip() for o in origins.split(",") if o.strip()),
            telemetry=_flag(environ.get("TELEMETRY", "")),
        )
