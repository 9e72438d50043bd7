"""Play an MCP session with whichever major of the official MCP Python SDK runs this script.

    python mcp_sdk_player.py URL

tests/server/mcp/test_clients.py drives it, in this project's environment (SDK 1.x) and in the
2.x venv .ci/run builds ($MCP2_VENV), so both majors play the same episodes. It connects as the
snippet of docs/tools-mcp.md does (the same code for both: 1.x's transport yields a third item, 2.x's two),
prints `initialize`'s result as one JSON line, then answers each request line on stdin
(`{"method": "call_tool" | "get_prompt" | "list_tools" | "list_prompts", "name"?, "arguments"?}`)
with the SDK's result as one JSON line, in the wire's camelCase, whatever the SDK's attribute
names. At the end of stdin it leaves the session (the SDK sends DELETE) and prints
`{"closed": true}`. Imports nothing but the SDK: this project is not installed in that venv.
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def wire(result: Any) -> dict[str, Any]:
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def answer(session: ClientSession, request: dict[str, Any]) -> Any:
    method, name, arguments = request["method"], request.get("name"), request.get("arguments")
    if method == "call_tool":
        return await session.call_tool(name, arguments)
    if method == "get_prompt":
        return await session.get_prompt(name, arguments)
    if method == "list_tools":
        return await session.list_tools()
    if method == "list_prompts":
        return await session.list_prompts()
    raise ValueError(f"unknown method {method!r}")


def say(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


async def play(url: str) -> None:
    async with (
        streamable_http_client(url) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        hello = await session.initialize()
        say({"sdk": version("mcp"), "initialize": wire(hello)})
        while line := await asyncio.to_thread(sys.stdin.readline):
            say(wire(await answer(session, json.loads(line))))
    say({"closed": True})


if __name__ == "__main__":
    asyncio.run(play(sys.argv[1]))
