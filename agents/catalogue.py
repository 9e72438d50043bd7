"""ServiceBench's endpoints as the model sees them: strict function-calling tools, or text.

The tools are the server's own (action_tools.py, what `GET /servicebench/tools`
serves): one strict OpenAI function per endpoint, named by the endpoint's declaration,
and a call maps back to exactly one (service, endpoint, method), a null argument
meaning "absent" (strict mode makes the model send every parameter). The episode's
catalogue (the observation's `available_endpoints`) renders as text for endpoints
that do not support tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..action_tools import TOOLS, ActionTool

ENV = "servicebench"


class Catalogue:
    """The endpoints of one episode: its catalogue rows, and the tools that call them."""

    def __init__(self, available_endpoints: Sequence[Mapping[str, Any]]) -> None:
        self.rows = list(available_endpoints)
        self.by_name: dict[str, ActionTool] = {tool.name: tool for tool in TOOLS[ENV]}

    def find(self, endpoint: str, service: str = "") -> ActionTool | None:
        """The tool of the endpoint at `endpoint` (and `service`, if given): to fill in what
        a text action left out."""
        matches = [
            tool
            for tool in self.by_name.values()
            if tool.route is not None
            and tool.route[1] == endpoint
            and (not service or tool.route[0] == service)
        ]
        return matches[0] if len(matches) == 1 else None

    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI `tools` list: one strict function per endpoint of this episode's catalogue
        (a canonical task's world runs three services, a request task's six)."""
        offered = {(row.get("service"), row.get("endpoint")) for row in self.rows}
        return [
            tool.openai_tool()
            for tool in TOOLS[ENV]
            if tool.route is not None and tool.route[:2] in offered
        ]

    def action(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
        """The wire action of a call of tool `name`; None if there is no such tool."""
        tool = self.by_name.get(name)
        return None if tool is None else tool.action(arguments)

    def as_text(self) -> str:
        """One line per endpoint, for prompts of endpoints without tool support."""
        lines = []
        for row in self.rows:
            params = row.get("params") if isinstance(row.get("params"), Mapping) else {}
            described = ", ".join(
                f"{name} ({spec.get('type', 'any')}, "
                f"{'required' if spec.get('required') else 'optional'})"
                + (f": {spec['description']}" if spec.get("description") else "")
                for name, spec in params.items()
            )
            lines.append(
                f'- service "{row.get("service", "")}", {row.get("method", "GET")} '
                f"{row.get('endpoint', '')}: {row.get('description', '')} "
                f"Params: {described or 'none'}"
            )
        return "\n".join(lines)
