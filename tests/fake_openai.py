"""A small scripted OpenAI-compatible chat-completions server for tests.

Tests start it on a loopback port and say what the "model" answers: a queue of
scripted replies consumed one per request, then a default reply or a
`responder(request) -> Reply` that computes the answer from the request
(messages, tools). Replies can be tool calls, text, an HTTP error status, a
malformed body, or any of these after a delay (to provoke client timeouts).
Every request is recorded with its headers for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ToolCalls:
    """An assistant message with tool calls: (function name, arguments dict or raw JSON text)."""

    calls: tuple[tuple[str, dict[str, Any] | str], ...]
    content: str | None = None


@dataclass(frozen=True)
class Text:
    content: str


@dataclass(frozen=True)
class Status:
    """An HTTP error answer; `echo_auth` puts the request's Authorization header in the body."""

    code: int
    message: str = "scripted failure"
    echo_auth: bool = False
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class RawBody:
    """A 200 whose body is not a chat completion (or not JSON at all)."""

    body: bytes


@dataclass(frozen=True)
class Delay:
    seconds: float
    then: Reply


Reply = ToolCalls | Text | Status | RawBody | Delay
Responder = Callable[[dict[str, Any]], Reply]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class _Behaviour:
    script: deque = field(default_factory=deque)
    default: Reply | Responder = field(default_factory=lambda: Text("no script"))


def completion(body: dict[str, Any], reply: ToolCalls | Text, number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(reply, Text):
        message["content"] = reply.content
        finish = "stop"
    else:
        message["content"] = reply.content
        message["tool_calls"] = [
            {
                "id": f"call_{number}_{i}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for i, (name, args) in enumerate(reply.calls)
        ]
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class FakeOpenAI:
    """`with FakeOpenAI() as fake:` serves on 127.0.0.1; `fake.url` is the API base URL (…/v1)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._behaviour = _Behaviour()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def program(self, *script: Reply, default: Reply | Responder | None = None) -> None:
        """Forget earlier requests and script; answer `script` in order, then `default`."""
        with self._lock:
            self.requests.clear()
            self._behaviour = _Behaviour(deque(script), default or Text("no script"))

    def completions(self) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _next_reply(self, recorded: Recorded) -> tuple[Reply, int]:
        with self._lock:
            self.requests.append(recorded)
            number = len(self.requests)
            if self._behaviour.script:
                return self._behaviour.script.popleft(), number
            default = self._behaviour.default
        return (default(recorded.body) if callable(default) else default), number

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(
                self, status: int, payload: bytes, headers: tuple[tuple[str, str], ...] = ()
            ) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in headers:
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a scripted timeout)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = None
                recorded = Recorded(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                if not self.path.endswith("/chat/completions") or not isinstance(body, dict):
                    fake._next_reply(recorded)
                    self._send(404, b'{"error": {"message": "not found"}}')
                    return
                reply, number = fake._next_reply(recorded)
                while isinstance(reply, Delay):
                    time.sleep(reply.seconds)
                    reply = reply.then
                if isinstance(reply, Status):
                    message = reply.message
                    if reply.echo_auth:
                        message += (
                            f" (received Authorization: {recorded.headers.get('authorization')})"
                        )
                    error = {
                        "error": {"message": message, "type": "server_error", "code": reply.code}
                    }
                    self._send(reply.code, json.dumps(error).encode(), reply.headers)
                elif isinstance(reply, RawBody):
                    self._send(200, reply.body)
                else:
                    self._send(200, json.dumps(completion(body, reply, number)).encode())

        return Handler
