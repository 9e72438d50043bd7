"""No credential reaches any log line (issue 21): a live server's whole output, at uvicorn's
default level and at `trace` (which prints every request's headers and websockets' frames),
after HTTP, WebSocket and MCP requests that carry credentials in their query and headers."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest
from uvicorn_process import started_server
from websockets.sync.client import connect

from servicebench_support_queue.server.transport import log_redaction
from servicebench_support_queue.server.transport.log_redaction import (
    REDACTED,
    redact,
    redact_record,
)

QUERY_KEYS = (
    "api_key",
    "token",
    "hf_token",
    "key",
    "secret",
    "password",
    "authorization",
    "access_token",
    "Api-Key",
    "client_secret",
    "session_id",
)
ENV_SECRETS = {"HF_TOKEN": "hf_envTokenValue000001", "API_KEY": "envKeyValue000002"}


def _secret(kind: str, name: str) -> str:
    return f"{kind}Secret{abs(hash(name)) % 10**8:08d}x"


def _query(kind: str) -> dict[str, str]:
    return {name: _secret(kind, name) for name in QUERY_KEYS}


def _headers(kind: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {_secret(kind, 'bearer')}",
        "Proxy-Authorization": f"Basic {_secret(kind, 'basic')}",
        "X-Api-Key": _secret(kind, "x-api-key"),
        "Cookie": f"sid={_secret(kind, 'cookie')}",
    }


def _play(url: str) -> list[str]:
    """Requests over each transport, each carrying credentials; the values sent."""
    sent: list[str] = []
    with httpx.Client(base_url=url, timeout=10) as client:
        for path, method in (("/reset", "POST"), ("/state", "GET"), ("/nowhere", "GET")):
            query, headers = _query(f"http{path[1:4]}"), _headers(f"http{path[1:4]}")
            client.request(method, path, params=query, headers=headers)
            sent += [*query.values(), *headers.values()]
        query, headers = _query("mcp"), _headers("mcp")
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        client.post("/mcp", params=query, headers=headers, json=rpc)
        sent += [*query.values(), *headers.values()]
    query, headers = _query("ws"), _headers("ws")
    attach = query.pop("session_id")  # names an MCP session: tried on a connection of its own
    ws_url = url.replace("http://", "ws://") + "/servicebench/ws?"
    with connect(ws_url + str(httpx.QueryParams(query)), additional_headers=headers) as socket:
        socket.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(socket.recv(timeout=10))["type"] == "observation"
    with connect(ws_url + str(httpx.QueryParams(session_id=attach, api_key=attach))) as socket:
        assert json.loads(socket.recv(timeout=10))["type"] == "error"  # no such session
    sent += [*query.values(), *headers.values(), attach]
    return sent


@pytest.mark.parametrize("level", ["info", "trace"])
def test_no_credential_reaches_the_log_over_http_websocket_and_mcp(
    tmp_path: Path, level: str
) -> None:
    log_path = tmp_path / "server.log"
    with started_server(ENV_SECRETS, log_path, log_level=level) as (_, url):
        sent = _play(url)
    log = log_path.read_text(encoding="utf-8", errors="replace")
    assert '"WebSocket /servicebench/ws?' in log and "[accepted]" in log  # the handshake line
    assert '"POST /mcp?' in log and '"GET /state?' in log  # and the access log were on
    assert REDACTED in log
    if level == "trace":
        assert "authorization" in log.lower()  # the headers were printed, values redacted
    leaked = [value for value in (*ENV_SECRETS.values(), *sent) if value in log]
    assert not leaked, leaked


def test_the_factory_redacts_records_of_every_logger_and_their_tracebacks() -> None:
    log_redaction.install()
    log_redaction.install()  # idempotent: one wrapper
    factory = logging.getLogRecordFactory()
    assert not isinstance(getattr(factory, "inner", None), type(factory))
    record = logging.getLogger("anything.at.all").makeRecord(
        "anything.at.all",
        logging.WARNING,
        __file__,
        1,
        "%s %s %d",
        ("/ws?token=abc123456", {"authorization": "Bearer xyz987654"}, 7),
        None,
    )
    assert record.getMessage() == (f"/ws?token={REDACTED} {{'authorization': '{REDACTED}'}} 7")
    try:
        raise ValueError("failed on /state?api_key=tracebackSecret1")
    except ValueError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "boom", (), sys.exc_info())
    redact_record(record)
    assert "tracebackSecret1" not in (record.exc_text or "") and REDACTED in record.exc_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/state?episode_id=abc&x=1", "/state?episode_id=abc&x=1"),
        ("/s?%61%70%69%5f%6b%65%79=v1", f"/s?%61%70%69%5f%6b%65%79={REDACTED}"),
        ("b'hf_token=v2&task_id=t'", f"b'hf_token={REDACTED}&task_id=t'"),
        ("(b'x-api-key', b'v3')", f"(b'x-api-key', b'{REDACTED}')"),
        ("> Authorization: Basic v4", f"> Authorization: {REDACTED}"),
        ("KeyError: 'missing'", "KeyError: 'missing'"),
        ('{"password": "v5", "n": 1}', f'{{"password": "{REDACTED}", "n": 1}}'),
        ("token hf_abcdefghijklmnopqrstuv here", f"token {REDACTED} here"),
    ],
)
def test_redaction_keeps_ordinary_text(text: str, expected: str) -> None:
    assert redact(text, known=()) == expected


def test_the_processs_own_secrets_are_redacted_wherever_they_appear() -> None:
    known = log_redaction.secrets_of({"HF_TOKEN": "plainValue1234", "PORT": "80000000"})
    assert known == ("plainValue1234",)
    assert redact("path/plainValue1234/x", known) == f"path/{REDACTED}/x"
