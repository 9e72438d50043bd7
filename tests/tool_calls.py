"""Tool calls as a strict model makes them: every parameter sent, null where a call leaves one out."""

from __future__ import annotations

from typing import Any

from servicebench_support_queue.action_tools import TOOLS
from servicebench_support_queue.models import ServiceBenchAction, SupportQueueAction


def strict_arguments(values: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """`values` as a strict model sends them for `schema`: every property, null if not given."""
    sent = {}
    for key, prop in schema["properties"].items():
        value = values.get(key)
        if isinstance(value, dict) and "properties" in prop:
            value = strict_arguments(value, prop)
        sent[key] = value
    return sent


def tool_call(action: ServiceBenchAction | SupportQueueAction) -> tuple[str, dict[str, Any]]:
    """The (tool name, strict arguments) that play `action`."""
    if isinstance(action, SupportQueueAction):
        [tool] = TOOLS["support_queue"]
        values = action.model_dump(exclude={"metadata"})
    else:
        route = (action.service, action.endpoint, action.method)
        tool = next(tool for tool in TOOLS["servicebench"] if tool.route == route)
        values = dict(action.params)
    return tool.name, strict_arguments(values, tool.input_schema(strict=True))
