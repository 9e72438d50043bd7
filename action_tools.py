"""The agents' tools: one per action, derived from the declarations that define the actions.

ServiceBench has one tool per endpoint, read off its `@endpoint` declaration
(mock_services/registry.py: the tool's name, the parameters with their types,
descriptions, bounds, closed value sets and an object's fields; every write's optional
`idempotency_key`, whatever a world's catalogue shows); Support Queue has one
`triage` tool, read off `SupportQueueAction`. Each `ActionTool` renders that one
description two ways, and maps a call back to the environment's action:

* `mcp_tool()`: an MCP tool whose `inputSchema` is the natural one (an optional
  parameter may be left out, and keeps its default);
* `openai_tool()`: an OpenAI function tool in strict mode: every property required,
  the optional ones nullable, `additionalProperties: false` on every object, and only
  keywords strict mode supports (no `default`, no `maxLength`: those go into the
  description);
* `action(arguments)`: the environment's action for a call, a null argument meaning
  "absent", since a strict model must send every parameter.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .mock_services import ENDPOINTS, Endpoint
from .models import MAX_STEP_INDEX, SupportQueueAction
from .openenv_types import Action

SCHEMA_KINDS = ("string", "integer", "number", "boolean", "object")


@dataclass(frozen=True)
class ToolParam:
    """One parameter of a tool, as both renderings need it."""

    name: str
    kind: str
    required: bool
    description: str
    enum: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    fields: tuple[str, ...] | None = None
    """An object's settable fields (each a string, at least one)."""
    default: Any = None

    def schema(self, strict: bool) -> dict[str, Any]:
        """The parameter's JSON schema: natural (MCP) or for OpenAI's strict mode."""
        schema: dict[str, Any] = {"type": self.kind}
        if self.fields is not None:
            text = {"type": ["string", "null"]} if strict else {"type": "string"}
            schema["properties"] = {name: dict(text) for name in self.fields}
            schema["additionalProperties"] = False
            if strict:
                schema["required"] = list(self.fields)
            else:
                schema["minProperties"] = 1
        if self.enum is not None:
            schema["enum"] = list(self.enum)
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        notes = []
        if self.max_length is not None:
            if strict:
                notes.append(f"at most {self.max_length} characters")
            else:
                schema["maxLength"] = self.max_length
        if self.fields is not None and strict:
            notes.append("set at least one field; null leaves a field unchanged")
        if strict and not self.required:
            notes.append(f"null: {_shown_default(self.default)}")
            schema = _nullable(schema)
        elif self.default is not None:
            schema["default"] = self.default
        description = self.description.strip()
        if notes:
            description = f"{description} ({'; '.join(notes)})".strip()
        return {"description": description, **schema} if description else schema


def _shown_default(default: Any) -> str:
    """What a null argument stands for, in words."""
    if default is None:
        return "not given"
    return "empty" if default == "" else json.dumps(default)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` or null: a type union for a plain scalar, else `anyOf` (enums, objects)."""
    if "enum" in schema or "properties" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    return {**schema, "type": [schema["type"], "null"]}


@dataclass(frozen=True)
class ActionTool:
    """One tool: an endpoint of ServiceBench (`route` set) or Support Queue's action."""

    name: str
    env: str
    description: str
    params: tuple[ToolParam, ...]
    route: tuple[str, str, str] | None = None
    """ServiceBench's (service, path, method); None: the arguments are the action."""

    def input_schema(self, strict: bool) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {param.name: param.schema(strict) for param in self.params},
            "additionalProperties": False,
        }
        required = [p.name for p in self.params if strict or p.required]
        if required or strict:
            schema["required"] = required
        return schema

    def mcp_tool(self) -> dict[str, Any]:
        """The MCP tool: the action's parameters, plus the call's own `step_index`."""
        schema = self.input_schema(strict=False)
        schema["properties"][STEP_INDEX.name] = STEP_INDEX.schema(strict=False)
        return {"name": self.name, "description": self.description, "inputSchema": schema}

    def openai_tool(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema(strict=True),
                "strict": True,
            },
        }

    def action(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The environment's action data for a call with `arguments` (null: absent).

        Nothing else is judged here: the environment validates the action as it
        validates one sent over HTTP, so a call means the same on every transport.
        """
        objects = {p.name for p in self.params if p.fields is not None}
        given = {
            name: _without_nulls(value) if name in objects else value
            for name, value in arguments.items()
            if value is not None
        }
        if self.route is None:
            return given
        service, path, method = self.route
        return {"service": service, "endpoint": path, "method": method, "params": given}


STEP_INDEX = ToolParam(
    name="step_index",
    kind="integer",
    required=False,
    description="Optional, for safe retries: the number of the step this call is (1 for the "
    "first call after the session starts or restarts; a result's observation.info.step). A "
    "call sent again with the same step_index (after a lost answer, or an error whose outcome "
    "is unknown) is answered again and never applied twice; with other arguments it is refused",
    minimum=1,
    maximum=MAX_STEP_INDEX,
)
"""An argument of every MCP tool that is not the action's: the step the call means. Models
do not choose it, so the strict OpenAI tools (`openai_tool`) leave it out."""


def split_call(arguments: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """(the action's arguments, the step_index or None) of a tool call's arguments."""
    action = {name: value for name, value in arguments.items() if name != STEP_INDEX.name}
    return action, arguments.get(STEP_INDEX.name)


def _without_nulls(value: Any) -> Any:
    return {k: v for k, v in value.items() if v is not None} if isinstance(value, dict) else value


def endpoint_tool(entry: Endpoint) -> ActionTool:
    """ServiceBench's tool for one endpoint, read off its declaration."""
    params = tuple(
        ToolParam(
            name=param.name,
            kind=param.kind,
            required=param.required,
            description=param.description,
            enum=param.choices.values if param.choices else None,
            minimum=param.bounds.minimum if param.bounds else None,
            maximum=param.bounds.maximum if param.bounds else None,
            max_length=param.token.max_length if param.token else None,
            fields=param.fields.names if param.fields else None,
            default=param.default,
        )
        for param in entry.params
    )
    description = f"{entry.method} {entry.service} service {entry.path}: {entry.description}"
    return ActionTool(
        entry.tool, "servicebench", description, params, (entry.service, entry.path, entry.method)
    )


def action_tool(action_cls: type[Action], env: str, how: str) -> ActionTool:
    """The tool whose arguments are `action_cls` itself (its own fields, not OpenEnv's)."""
    schema = action_cls.model_json_schema()
    own = [name for name in action_cls.model_fields if name not in Action.model_fields]
    required = set(schema.get("required", ()))
    params = []
    for name in own:
        prop = schema["properties"][name]
        if prop.get("type") not in SCHEMA_KINDS:
            raise TypeError(f"{action_cls.__name__}.{name}: no tool type for {prop}")
        params.append(
            ToolParam(
                name=name,
                kind=prop["type"],
                required=name in required,
                description=prop.get("description", ""),
                enum=tuple(prop["enum"]) if "enum" in prop else None,
                minimum=prop.get("minimum"),
                maximum=prop.get("maximum"),
                max_length=prop.get("maxLength"),
                default=prop.get("default"),
            )
        )
    description = f"{(action_cls.__doc__ or '').strip()} {how}".strip()
    return ActionTool(action_cls.TOOL_NAME, env, description, tuple(params))  # type: ignore[attr-defined]


TOOLS: Mapping[str, tuple[ActionTool, ...]] = MappingProxyType(
    {
        "servicebench": tuple(endpoint_tool(entry) for entry in ENDPOINTS),
        "support_queue": (
            action_tool(
                SupportQueueAction,
                "support_queue",
                "Submit one per ticket: it is graded, and the episode moves to the next ticket.",
            ),
        ),
    }
)
"""Every environment's tools, by environment name."""
TOOLS_BY_NAME: Mapping[str, ActionTool] = MappingProxyType(
    {tool.name: tool for tools in TOOLS.values() for tool in tools}
)
if len(TOOLS_BY_NAME) != sum(map(len, TOOLS.values())):
    raise ValueError("two tools share a name: the root serves every environment's tools")


def tools_of(env_names: Iterable[str]) -> tuple[ActionTool, ...]:
    """The tools of the named environments, in order."""
    return tuple(tool for name in env_names for tool in TOOLS[name])


def openai_tools(env_names: Iterable[str]) -> list[dict[str, Any]]:
    """The strict OpenAI `tools` list of the named environments (what GET /tools serves)."""
    return [tool.openai_tool() for tool in tools_of(env_names)]
