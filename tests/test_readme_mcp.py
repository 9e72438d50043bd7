"""The two MCP client snippets of docs/tools-mcp.md, run as written against a live server (only the host is
a free port's): the official SDK's at both of its majors, OpenEnv's `MCPToolClient`'s here.

Each snippet is a body of `async` statements, as a notebook or an `async def` holds them; the
test runs it as the body of one and reads back the dicts it made (`data`)."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import httpx
import pytest
from mcp_sdk_support import MAJORS, run_sdk
from readme_support import code_blocks, page

SNIPPETS = code_blocks(page("docs/tools-mcp.md"), "python")
SDK = next(s for s in SNIPPETS if "streamable_http_client" in s)
OPENENV = next(s for s in SNIPPETS if "MCPToolClient" in s)
WRAPPED = """
import asyncio as _asyncio, json as _json

async def _snippet():
{body}
    return locals()

_made = _asyncio.run(_snippet())
"""


def wrapped(snippet: str, live_server: str) -> str:
    body = textwrap.indent(snippet.replace("http://localhost:8000", live_server), "    ")
    return WRAPPED.format(body=body)


@pytest.mark.parametrize("major", MAJORS, ids=[f"sdk{major}" for major in MAJORS])
def test_the_sdk_snippet_plays_a_step_with_either_major(live_server: str, major: str) -> None:
    dicts = "{name: value for name, value in _made.items() if isinstance(value, dict)}"
    code = wrapped(SDK, live_server) + f"print(_json.dumps({dicts}))\n"
    done = run_sdk(major, code)
    assert done.returncode == 0, done.stderr[-4000:]
    data = json.loads(done.stdout)["data"]
    assert data["observation"]["task_id"] == "easy_inbox_cleanup"
    assert 0.0 <= data["reward"] <= 1.0 and data["done"] is False
    gone = httpx.get(f"{live_server}/state", params={"episode_id": data["session_id"]})
    assert gone.status_code == 404, "the session ended with the snippet's `async with`"


def test_the_mcp_tool_client_snippet_finds_the_variants_customer(live_server: str) -> None:
    namespace: dict[str, Any] = {}
    exec(wrapped(OPENENV, live_server), namespace)
    data = namespace["_made"]["data"]
    response = data["observation"]["api_response"]
    assert response["status_code"] == 200, response
    assert data["reward"] > 0, "the first call of the optimal path earns its step reward"
    made = namespace["_made"]
    assert response["data"]["email"] == made["email"]
    assert made["email"] in made["result"].observation.task_description
    assert made["email"] != "jane.doe@example.com", "seed 3 has its own customer"
