"""The least a ServiceBench WebSocket server can do per message, as a bound for figure 3.

A raw ASGI app, no framework: one environment per connection; per message it
parses the JSON, validates the action, steps (or resets) the environment, encodes
the result with the server's own encoder and sends it. No episode store, error handling,
session limits, episode store or routing. Served and driven like the peers, its CPU
per message is the floor for any server that plays ServiceBench on this stack:
what ours could at best approach. Never serve it: bad input would crash it.
"""

from __future__ import annotations

import json
from typing import Any

from bench.ws_floor import Receive, Send, accepted
from servicebench_support_queue.models import ServiceBenchAction
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.transport.encoding import result_json, typed_message


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if not await accepted(scope, receive, send):
        return
    env = ServiceBenchEnvironment()
    while (message := await receive())["type"] != "websocket.disconnect":
        request = json.loads(message["text"])
        if request["type"] == "reset":
            observation = env.reset(**request["data"])
        else:
            observation = env.step(ServiceBenchAction.model_validate(request["data"]))
        await send(
            {
                "type": "websocket.send",
                "text": typed_message("observation", result_json(observation)).decode(),
            }
        )
