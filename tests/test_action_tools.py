"""action_tools.py: one source for the MCP tools and the strict OpenAI tools, checked against
OpenAI's documented strict-mode rules, and calls with a strict model's nulls play as intended.

The rules (OpenAI, "Structured Outputs: supported schemas"): the root is an object, not
`anyOf`; every object sets `additionalProperties: false` and lists every property in
`required` (an optional one is emulated with a union with null); the types are string,
number, integer, boolean, object, array, null, enum and anyOf; the keywords beyond type
and structure are, for strings, `pattern` and `format` (one of a fixed list), for numbers
`multipleOf`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, for arrays
`minItems`, `maxItems`; composition other than `anyOf` (`allOf`, `not`, `if`...) is not
supported, nor is `default`; at most 10 levels of nesting, 5,000 properties, 1,000 enum
values and 120,000 characters of property names and enum values; a function's name is
1-64 of a-z A-Z 0-9 _ -.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient
from tool_calls import strict_arguments, tool_call

from servicebench_support_queue.action_tools import TOOLS, TOOLS_BY_NAME
from servicebench_support_queue.mock_services import ENDPOINTS, SETTINGS
from servicebench_support_queue.models import (
    DISPOSITIONS,
    PRIORITIES,
    QUEUES,
    ServiceBenchAction,
    SupportQueueAction,
)
from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.grading.outcome import episode_outcome
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.heuristic import triage

FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TYPES = {"string", "number", "integer", "boolean", "object", "array", "null"}
STRUCTURE = {"type", "description", "title", "enum", "const", "anyOf", "$ref", "$defs"}
BY_TYPE = {
    "object": {"properties", "required", "additionalProperties"},
    "array": {"items", "minItems", "maxItems"},
    "string": {"pattern", "format"},
    "number": {"multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
    "integer": {"multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
    "boolean": set(),
    "null": set(),
}
FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
RESERVED_TOOL_NAMES = {"reset", "step", "state", "close"}  # OpenEnv's mcp_types.py


class Tally:
    """Counts across one schema, for the size limits."""

    def __init__(self) -> None:
        self.properties = 0
        self.enum_values = 0
        self.characters = 0


def strict_schema_problems(schema: Any, path: str, depth: int, tally: Tally) -> list[str]:
    """Everything in `schema` that strict mode does not accept."""
    if not isinstance(schema, dict):
        return [f"{path}: not a schema object"]
    if depth > 10:
        return [f"{path}: nested deeper than 10 levels"]
    problems: list[str] = []
    if "anyOf" in schema:
        for i, option in enumerate(schema["anyOf"]):
            problems += strict_schema_problems(option, f"{path}.anyOf[{i}]", depth, tally)
        unexpected = set(schema) - {"anyOf", "description", "title"}
        return problems + ([f"{path}: {sorted(unexpected)} beside anyOf"] if unexpected else [])
    if "$ref" in schema:
        return problems
    types = schema.get("type")
    types = [types] if isinstance(types, str) else types
    if not isinstance(types, list) or not types or not set(types) <= TYPES:
        return [f"{path}: type {types!r} is not a supported type"]
    allowed = STRUCTURE.union(*(BY_TYPE[kind] for kind in types))
    unsupported = set(schema) - allowed
    if unsupported:
        problems.append(f"{path}: keyword(s) {sorted(unsupported)} not supported for {types}")
    if "format" in schema and schema["format"] not in FORMATS:
        problems.append(f"{path}: format {schema['format']!r} not supported")
    if "enum" in schema:
        values = schema["enum"]
        tally.enum_values += len(values)
        tally.characters += sum(len(str(value)) for value in values)
        kinds = {"string": str, "integer": int, "number": (int, float), "boolean": bool}
        for value in values:
            if value is None and "null" in types:
                continue
            if not any(isinstance(value, kinds.get(kind, ())) for kind in types):
                problems.append(f"{path}: enum value {value!r} is not of type {types}")
    if "object" in types:
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            return [*problems, f"{path}: an object without properties"]
        if schema.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties is not false")
        if sorted(schema.get("required", [])) != sorted(properties):
            problems.append(f"{path}: required {schema.get('required')} != every property")
        tally.properties += len(properties)
        tally.characters += sum(map(len, properties))
        for name, prop in properties.items():
            problems += strict_schema_problems(prop, f"{path}.{name}", depth + 1, tally)
    if "array" in types:
        problems += strict_schema_problems(schema.get("items"), f"{path}[]", depth + 1, tally)
    return problems


def strict_tool_problems(tool: Any) -> list[str]:
    """Everything in an OpenAI function tool that strict mode refuses."""
    if not isinstance(tool, dict) or tool.get("type") != "function":
        return ["not a function tool"]
    function = tool.get("function", {})
    name = function.get("name", "")
    problems = [] if FUNCTION_NAME.match(str(name)) else [f"bad function name {name!r}"]
    if function.get("strict") is not True:
        problems.append(f"{name}: strict is not true")
    if set(function) - {"name", "description", "parameters", "strict"}:
        problems.append(f"{name}: unknown keys {sorted(set(function))}")
    parameters = function.get("parameters", {})
    if parameters.get("type") != "object" or "anyOf" in parameters:
        problems.append(f"{name}: the root must be an object, not anyOf")
    tally = Tally()
    problems += strict_schema_problems(parameters, name, 1, tally)
    if tally.properties > 5000 or tally.enum_values > 1000 or tally.characters > 120_000:
        problems.append(f"{name}: over strict mode's size limits")
    return problems


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(Settings()))


def test_the_checker_refuses_what_strict_mode_refuses() -> None:
    def tool(parameters: dict[str, Any], name: str = "f") -> dict[str, Any]:
        function = {"name": name, "description": "", "parameters": parameters, "strict": True}
        return {"type": "function", "function": function}

    ok = {
        "type": "object",
        "properties": {"a": {"type": ["string", "null"]}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert strict_tool_problems(tool(ok)) == []
    broken = [
        {**ok, "required": []},  # an optional property left out of required
        {k: v for k, v in ok.items() if k != "additionalProperties"},
        {**ok, "properties": {"a": {"type": "string", "default": "x"}}},
        {**ok, "properties": {"a": {"type": "string", "maxLength": 5}}},
        {**ok, "properties": {"a": {"type": "integer", "pattern": "^1$"}}},
        {**ok, "properties": {"a": {"allOf": [{"type": "string"}]}}},
        {**ok, "properties": {"a": {"type": "object", "properties": {}, "required": []}}},
        {**ok, "properties": {"a": {"type": "string", "enum": ["x", 1]}}},
        {"anyOf": [ok]},
    ]
    for parameters in broken:
        assert strict_tool_problems(tool(parameters)), parameters
    assert strict_tool_problems(tool(ok, name="no spaces"))
    assert strict_tool_problems({"type": "function", "function": {"name": "f", "parameters": ok}})


@pytest.mark.parametrize("prefix", ["", "/servicebench", "/support_queue"])
def test_every_served_tool_complies_with_strict_mode(client: TestClient, prefix: str) -> None:
    tools = client.get(f"{prefix}/tools").json()
    envs = {"": ("servicebench", "support_queue")}.get(prefix, (prefix.strip("/"),))
    assert [t["function"]["name"] for t in tools] == [
        tool.name for env in envs for tool in TOOLS[env]
    ]
    problems = [problem for tool in tools for problem in strict_tool_problems(tool)]
    assert not problems, problems
    for tool in tools:  # and each is a valid JSON schema in the first place
        jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])


def test_one_declaration_makes_both_tools() -> None:
    assert len(TOOLS_BY_NAME) == len(ENDPOINTS) + 1
    assert not RESERVED_TOOL_NAMES & set(TOOLS_BY_NAME)
    for entry, tool in zip(ENDPOINTS, TOOLS["servicebench"], strict=True):
        assert (tool.name, tool.route) == (entry.tool, (entry.service, entry.path, entry.method))
        mcp, strict = tool.input_schema(strict=False), tool.input_schema(strict=True)
        assert set(mcp["properties"]) == set(strict["properties"]) == entry.param_names
        assert set(mcp.get("required", [])) == {p.name for p in entry.params if p.required}
        for param in entry.params:
            if param.bounds is not None:
                bounds = mcp["properties"][param.name]
                assert (bounds["minimum"], bounds["maximum"]) == (
                    param.bounds.minimum,
                    param.bounds.maximum,
                )
    [triage_tool] = TOOLS["support_queue"]
    assert triage_tool.name == SupportQueueAction.TOOL_NAME
    assert set(triage_tool.input_schema(strict=False)["required"]) == {
        "priority",
        "queue",
        "disposition",
    }


def test_closed_value_sets_are_enums_and_user_updates_are_typed() -> None:
    def strict_property(tool: str, name: str) -> dict[str, Any]:
        return TOOLS_BY_NAME[tool].input_schema(strict=True)["properties"][name]

    assert strict_property("update_order_status", "new_status")["enum"] == list(
        SETTINGS["status_transitions"]
    )
    triage_enums = {
        name: strict_property("triage", name)["enum"]
        for name in ("priority", "queue", "disposition")
    }
    assert triage_enums == {
        "priority": list(PRIORITIES),
        "queue": list(QUEUES),
        "disposition": list(DISPOSITIONS),
    }
    updates = strict_property("update_user", "updates")
    assert list(updates["properties"]) == list(SETTINGS["user_updatable_fields"])
    assert updates["additionalProperties"] is False
    assert all(p["type"] == ["string", "null"] for p in updates["properties"].values())
    natural = TOOLS_BY_NAME["update_user"].input_schema(strict=False)["properties"]["updates"]
    assert natural["minProperties"] == 1 and natural["additionalProperties"] is False


def test_a_strict_models_nulls_mean_absent() -> None:
    lookup = TOOLS_BY_NAME["lookup_user"]
    assert lookup.action({"email": "jane.doe@example.com", "user_id": None}) == {
        "service": "user",
        "endpoint": "/users/lookup",
        "method": "GET",
        "params": {"email": "jane.doe@example.com"},
    }
    update = TOOLS_BY_NAME["update_user"].action(
        strict_arguments({"user_id": "USR-003", "updates": {"notes": "n"}}, _schema("update_user"))
    )
    assert update["params"] == {"user_id": "USR-003", "updates": {"notes": "n"}}
    nulls = strict_arguments(
        {"priority": "P1", "queue": "security", "disposition": "escalate"}, _schema("triage")
    )
    assert TOOLS_BY_NAME["triage"].action(nulls) == {
        "priority": "P1",
        "queue": "security",
        "disposition": "escalate",
    }
    assert (
        SupportQueueAction.model_validate(TOOLS_BY_NAME["triage"].action(nulls)).confidence == 0.5
    )


def _schema(name: str) -> dict[str, Any]:
    return TOOLS_BY_NAME[name].input_schema(strict=True)


@pytest.mark.parametrize("task", [card.id for card in ServiceBenchEnvironment.tasks])
def test_strict_calls_play_servicebench_as_the_actions_do(task: str) -> None:
    """Every oracle action, sent as a strict model sends its tool call (nulls and all), plays
    exactly as the action itself: same observations, rewards and score."""
    by_action, by_tool = ServiceBenchEnvironment(), ServiceBenchEnvironment()
    history = [by_action.reset(task_id=task, seed=11, episode_id="e")]
    by_tool.reset(task_id=task, seed=11, episode_id="e")
    while not history[-1].done:
        action = next_action(history)
        assert action is not None
        name, arguments = tool_call(action)
        jsonschema.validate(arguments, _schema(name))
        played = ServiceBenchAction.model_validate(TOOLS_BY_NAME[name].action(arguments))
        expected = by_action.step(action)
        assert by_tool.step(played).model_dump() == expected.model_dump()
        history.append(expected)
    assert by_tool.score == by_action.score == 1.0


def test_strict_user_update_plays_as_the_plain_call() -> None:
    """update_user with every other field null writes the note alone: no collateral damage."""
    plain, strict = ServiceBenchEnvironment(), ServiceBenchEnvironment()
    for env in (plain, strict):
        env.reset(task_id="billing_discrepancy", episode_id="e")
    note = {"user_id": "USR-003", "updates": {"notes": "Refunded the stale price difference."}}
    arguments = strict_arguments(note, _schema("update_user"))
    assert arguments["updates"]["email"] is None
    expected = plain.step(
        ServiceBenchAction(service="user", endpoint="/users/update", method="POST", params=note)
    )
    got = strict.step(
        ServiceBenchAction.model_validate(TOOLS_BY_NAME["update_user"].action(arguments))
    )
    assert got.model_dump() == expected.model_dump() and got.success
    assert got.api_response["data"]["updated_fields"] == ["notes"]
    assert strict.state.outcome is None  # served once the episode is done
    assert episode_outcome(strict._spec, strict._services)["collateral_damage"] == []


@pytest.mark.parametrize("task", [card.id for card in SupportQueueEnvironment.tasks])
def test_strict_triage_calls_play_support_queue_as_the_actions_do(task: str) -> None:
    by_action, by_tool = SupportQueueEnvironment(), SupportQueueEnvironment()
    observation = by_action.reset(task_id=task, episode_id="e")
    by_tool.reset(task_id=task, episode_id="e")
    while not observation.done:
        action = triage(observation)
        bare = SupportQueueAction(
            priority=action.priority, queue=action.queue, disposition=action.disposition
        )
        played = {}
        for sent in (action, bare):  # the heuristic's, and one leaving every optional field null
            name, arguments = tool_call(sent)
            jsonschema.validate(arguments, _schema(name))
            played[sent is action] = TOOLS_BY_NAME[name].action(arguments)
            assert SupportQueueAction.model_validate(played[sent is action]) == sent
        observation = by_action.step(action)
        got = by_tool.step(SupportQueueAction.model_validate(played[True]))
        assert got.model_dump() == observation.model_dump()
    assert by_tool.score == by_action.score


@pytest.mark.parametrize("prefix", ["", "/servicebench"])
def test_every_write_tool_takes_an_optional_idempotency_key(
    client: TestClient, prefix: str
) -> None:
    served = {t["function"]["name"]: t["function"] for t in client.get(f"{prefix}/tools").json()}
    writes = {entry.tool for entry in ENDPOINTS if entry.method != "GET"}
    assert len(writes) == 8
    for entry in ENDPOINTS:
        strict = served[entry.tool]["parameters"]
        mcp = TOOLS_BY_NAME[entry.tool].mcp_tool()["inputSchema"]
        if entry.tool not in writes:
            assert "idempotency_key" not in strict["properties"] | mcp["properties"]
            continue
        key = strict["properties"]["idempotency_key"]
        assert key["type"] == ["string", "null"] and "idempotency_key" in strict["required"]
        assert "not applied again" in key["description"] and "at most 255" in key["description"]
        natural = mcp["properties"]["idempotency_key"]
        assert natural["type"] == "string" and natural["maxLength"] == 255
        assert "idempotency_key" not in mcp.get("required", [])
        arguments = {name: None for name in strict["properties"]}
        assert "idempotency_key" not in TOOLS_BY_NAME[entry.tool].action(arguments)["params"]
        arguments["idempotency_key"] = "k-1"
        assert TOOLS_BY_NAME[entry.tool].action(arguments)["params"] == {"idempotency_key": "k-1"}
