"""ServiceBench's endpoint catalogue as the model sees it: function-calling tools, or text.

Each endpoint of the observation's `available_endpoints` becomes one tool whose
JSON-schema parameters carry the catalogue's types, required flags and
descriptions; a tool call maps back to exactly one (service, endpoint, method).
The same catalogue renders as text for endpoints that do not support tools.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# catalogue type name -> JSON-schema type
JSON_TYPES: Mapping[str, str] = {
    "str": "string",
    "string": "string",
    "int": "integer",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "bool": "boolean",
    "boolean": "boolean",
    "dict": "object",
    "object": "object",
    "list": "array",
    "array": "array",
}
_UNSAFE_NAME = re.compile(r"[^a-zA-Z0-9_]+")


@dataclass(frozen=True)
class Endpoint:
    tool_name: str
    service: str
    endpoint: str
    method: str
    description: str
    params: Mapping[str, Mapping[str, Any]]


def _json_type(type_name: Any) -> Any:
    """The JSON-schema type(s) of a catalogue type like "str", "float" or "str|int"; None if unknown."""
    parts = [JSON_TYPES.get(p.strip().lower()) for p in str(type_name or "").split("|")]
    known = sorted({p for p in parts if p})
    if not known or len(known) < len(parts):
        return None
    return known[0] if len(known) == 1 else known


def _tool_name(service: str, endpoint: str, method: str, taken: set[str]) -> str:
    """A function name from the path (`/orders/process-refund` -> `orders_process_refund`), unique."""
    base = _UNSAFE_NAME.sub("_", endpoint).strip("_") or service
    for candidate in (base, f"{service}_{base}", f"{service}_{base}_{method.lower()}"):
        if candidate not in taken:
            return candidate[:64]
    index = 2
    while f"{base}_{index}" in taken:
        index += 1
    return f"{base}_{index}"[:64]


class Catalogue:
    """The endpoints of one episode, looked up by tool name or by path."""

    def __init__(self, available_endpoints: Sequence[Mapping[str, Any]]) -> None:
        taken: set[str] = set()
        self.endpoints: list[Endpoint] = []
        for row in available_endpoints:
            service, path = str(row.get("service", "")), str(row.get("endpoint", ""))
            method = str(row.get("method", "GET")).upper()
            name = _tool_name(service, path, method, taken)
            taken.add(name)
            params = row.get("params") if isinstance(row.get("params"), Mapping) else {}
            self.endpoints.append(
                Endpoint(name, service, path, method, str(row.get("description", "")), params)
            )
        self.by_name = {e.tool_name: e for e in self.endpoints}

    def find(self, endpoint: str, service: str = "") -> Endpoint | None:
        """The endpoint at `endpoint` (and `service`, if given): to fill in what a text action left out."""
        matches = [
            e
            for e in self.endpoints
            if e.endpoint == endpoint and (not service or e.service == service)
        ]
        return matches[0] if len(matches) == 1 else None

    def tools(self) -> list[dict[str, Any]]:
        """The OpenAI `tools` list: one function per endpoint."""
        return [self._tool(e) for e in self.endpoints]

    @staticmethod
    def _tool(endpoint: Endpoint) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, spec in endpoint.params.items():
            prop: dict[str, Any] = {}
            json_type = _json_type(spec.get("type"))
            if json_type is not None:
                prop["type"] = json_type
            description = str(spec.get("description", "")).strip()
            if description:
                prop["description"] = description
            if "default" in spec and spec["default"] is not None:
                prop["default"] = spec["default"]
            properties[name] = prop
            if spec.get("required"):
                required.append(name)
        parameters: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            parameters["required"] = required
        return {
            "type": "function",
            "function": {
                "name": endpoint.tool_name,
                "description": f"{endpoint.method} {endpoint.service} service {endpoint.endpoint}: "
                f"{endpoint.description}".strip(),
                "parameters": parameters,
            },
        }

    def as_text(self) -> str:
        """One line per endpoint, for prompts of endpoints without tool support."""
        lines = []
        for e in self.endpoints:
            params = ", ".join(
                f"{name} ({spec.get('type', 'any')}, {'required' if spec.get('required') else 'optional'})"
                + (f": {spec['description']}" if spec.get("description") else "")
                for name, spec in e.params.items()
            )
            lines.append(
                f'- service "{e.service}", {e.method} {e.endpoint}: {e.description} '
                f"Params: {params or 'none'}"
            )
        return "\n".join(lines)
