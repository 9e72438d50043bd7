"""How an endpoint is declared, described and validated: the endpoint registry.

Each endpoint is a typed service method registered with `@endpoint(service, path,
method, tool)` (tau2-bench style): its signature, `Annotated` parameter descriptions,
bounds (`Range`), closed value sets (`OneOf`), an object's fields (`Fields`) and
docstring are the single source of the catalogue shown to agents (`endpoint_spec`),
of the parameter validation (`bind_params`) and of the agents' tools
(action_tools.py), so an endpoint is described exactly once; `tool` names its tool.
This module knows no service: catalogue.py collects them.

Every write (an endpoint whose method is not GET) also takes the optional
`idempotency_key` (`KEY_PARAM`), added here to its declared parameters rather than
written into each handler: the handler never sees it, `ServiceState.dispatch`
(state.py) does. A parameter marked `Wording` (and an object's `Fields.wording`) is
free text: what a write says, not what it does; the call identity of the reward rules
and the idempotency fingerprint both leave it out.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType, UnionType
from typing import (
    Annotated,
    Any,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from ..error_messages import shown, shown_names
from ..models import EndpointSpec

INTEGER_PATTERN = re.compile(r"^[+-]?[0-9]+$")
NUMBER_PATTERN = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")
MAX_NUMBER_CHARS = 100
"""A number written as a string may be this long; a longer one is refused before conversion
(Python's int() raises ValueError past 4,300 digits)."""
IDEMPOTENCY_KEY = "idempotency_key"
MAX_KEY_CHARS = 255
"""An idempotency key's longest spelling (Stripe's bound)."""
PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]+")


class ServiceError(Exception):
    """A request the service refuses; becomes `(status, {"error": message})`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Range:
    """Inclusive bounds of a numeric parameter, declared in its `Annotated` hint."""

    minimum: float
    maximum: float


@dataclass(frozen=True)
class OneOf:
    """The closed set of values a string parameter takes, declared in its `Annotated` hint.

    Descriptive: it becomes the parameter's `enum` in the catalogue and the tools, while
    the handler stays the judge of a value (it may accept other spellings of one)."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class Fields:
    """The fields an object parameter may set (each a string, at least one), declared in
    its `Annotated` hint; the handler refuses any other. `wording` names the fields that
    are free text (a user's notes)."""

    names: tuple[str, ...]
    wording: tuple[str, ...] = ()


@dataclass(frozen=True)
class Wording:
    """Marks a string parameter as free text (a refund's reason): what a write says, not
    the effect it has. Declared in its `Annotated` hint."""


@dataclass(frozen=True)
class Token:
    """An opaque client-chosen string (an idempotency key): 1 to `max_length` printable
    ASCII characters, not blank, compared exactly (neither stripped nor case-folded)."""

    max_length: int


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "string" | "integer" | "number" | "object"
    required: bool
    description: str
    default: Any = None
    bounds: Range | None = None
    choices: OneOf | None = None
    fields: Fields | None = None
    wording: bool = False
    token: Token | None = None


KEY_PARAM = Param(
    IDEMPOTENCY_KEY,
    "string",
    False,
    "Optional, for safe retries: a key you choose for this write, in printable ASCII (e.g. a "
    "UUID). Sent again with the same key and the same parameters, the write is not applied "
    "again and answers what it answered the first time; a key already used for a different "
    "request is refused (409). Use a new key for each new write",
    token=Token(MAX_KEY_CHARS),
)
"""The optional parameter every write takes (see `ServiceState.dispatch`)."""


@dataclass(frozen=True)
class Endpoint:
    service: str
    path: str
    method: str
    tool: str
    """The name of the endpoint's tool (MCP and OpenAI function calling)."""
    description: str
    params: tuple[Param, ...]
    handler: Callable[..., dict[str, Any]]
    owner: type

    @cached_property
    def param_names(self) -> frozenset[str]:
        return frozenset(param.name for param in self.params)

    @property
    def writes(self) -> bool:
        """A write (it takes an `idempotency_key`): every method but GET."""
        return self.method != "GET"

    @cached_property
    def wording(self) -> frozenset[str]:
        """The parameters, and an object's fields, that are free text (no part of the effect)."""
        names = {param.name for param in self.params if param.wording}
        for param in self.params:
            if param.fields is not None:
                names.update(param.fields.wording)
        return frozenset(names)


KIND_BY_TYPE: Mapping[type, str] = MappingProxyType(
    {str: "string", int: "integer", float: "number", dict: "object"}
)


def endpoint(service: str, path: str, method: str, tool: str) -> Callable[[Callable], Callable]:
    """Register a service method as the endpoint `method path` of `service`, whose tool is `tool`."""

    def register(func: Callable) -> Callable:
        func.__route__ = (service, path, method, tool)  # type: ignore[attr-defined]
        return func

    return register


def _param_from_signature(name: str, hint: Any, parameter: inspect.Parameter) -> Param:
    """Read kind, description, bounds, choices, fields and optionality off an `Annotated[...]` hint."""
    base, extras = hint, []
    if get_origin(hint) is Annotated:
        base, *extras = get_args(hint)

    def extra(kind: type) -> Any:
        return next((item for item in extras if isinstance(item, kind)), None)

    if get_origin(base) in (Union, UnionType):  # Optional[str] or str | None
        base = next(arg for arg in get_args(base) if arg is not type(None))
    base = get_origin(base) or base
    required = parameter.default is inspect.Parameter.empty
    return Param(
        name,
        KIND_BY_TYPE[base],
        required,
        str(extra(str) or ""),
        None if required else parameter.default,
        extra(Range),
        extra(OneOf),
        extra(Fields),
        extra(Wording) is not None,
    )


def collect_endpoints(*service_classes: type) -> tuple[Endpoint, ...]:
    """Every `@endpoint` method of the classes, in definition order."""
    found: list[Endpoint] = []
    for cls in service_classes:
        for func in vars(cls).values():
            route = getattr(func, "__route__", None)
            if route is None:
                continue
            hints = get_type_hints(func, include_extras=True)
            signature = inspect.signature(func)
            params = tuple(
                _param_from_signature(name, hints[name], parameter)
                for name, parameter in signature.parameters.items()
                if name != "self"
            )
            if route[2] != "GET":
                params += (KEY_PARAM,)
            doc = inspect.getdoc(func) or ""
            found.append(
                Endpoint(*route, doc.split("\n\n")[0].replace("\n", " "), params, func, cls)
            )
    tools = [entry.tool for entry in found]
    if len(set(tools)) != len(tools):
        raise ValueError(f"two endpoints share a tool name: {tools}")
    return tuple(found)


def declared_params(entry: Endpoint, keyed: bool) -> tuple[Param, ...]:
    """The parameters a catalogue shows: all of them, or (`keyed` false) all but the key."""
    return entry.params if keyed else tuple(p for p in entry.params if p is not KEY_PARAM)


def endpoint_spec(entry: Endpoint, keyed: bool = True) -> EndpointSpec:
    """The catalogue row of one endpoint, as the agent sees it (with or without the key)."""
    params: dict[str, dict[str, Any]] = {}
    for param in declared_params(entry, keyed):
        row: dict[str, Any] = {
            "type": param.kind,
            "required": param.required,
            "description": param.description,
        }
        if param.default is not None:
            row["default"] = param.default
        if param.bounds is not None:
            row["minimum"], row["maximum"] = param.bounds.minimum, param.bounds.maximum
        if param.choices is not None:
            row["enum"] = list(param.choices.values)
        if param.fields is not None:
            row["fields"] = list(param.fields.names)
        if param.token is not None:
            row["maxLength"] = param.token.max_length
        params[param.name] = row
    return EndpointSpec(
        service=entry.service,
        endpoint=entry.path,
        method=entry.method,
        tool=entry.tool,
        description=entry.description,
        params=params,
    )


def _number_text(value: str, pattern: re.Pattern[str]) -> str | None:
    """`value` stripped if it spells a number in ASCII digits, else None."""
    text = value.strip()
    return text if pattern.match(text) else None


def _as_integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    text = _number_text(value, INTEGER_PATTERN) if isinstance(value, str) else None
    return int(text) if text is not None else None


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an int beyond the range of a float
            return math.inf
    text = _number_text(value, NUMBER_PATTERN) if isinstance(value, str) else None
    return float(text) if text is not None else None


def _bound(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def coerce(param: Param, value: Any) -> Any:
    """The value as the parameter's type and within its bounds, or a 400 naming what was wrong."""
    kind = param.kind
    if param.token is not None:
        return _token(param, param.token, value)
    if kind == "string" and isinstance(value, str) and value.strip():
        return value.strip()
    if kind == "object" and isinstance(value, dict):
        return value
    if isinstance(value, str) and len(value) > MAX_NUMBER_CHARS and kind in ("integer", "number"):
        raise ServiceError(
            400,
            f"parameter '{param.name}' must be a number of at most "
            f"{MAX_NUMBER_CHARS} characters, got {len(value)}",
        )
    number = (
        _as_integer(value) if kind == "integer" else _as_number(value) if kind == "number" else None
    )
    if number is not None and (isinstance(number, int) or math.isfinite(number)):
        bounds = param.bounds
        if bounds is not None and not bounds.minimum <= number <= bounds.maximum:
            raise ServiceError(
                400,
                f"parameter '{param.name}' must be between {_bound(bounds.minimum)} "
                f"and {_bound(bounds.maximum)}, got {shown(value)}",
            )
        return number
    wanted = "a non-empty string" if kind == "string" else f"of type {kind}"
    if number is not None:
        wanted = "a finite number"
    raise ServiceError(400, f"parameter '{param.name}' must be {wanted}, got {shown(value)}")


def _token(param: Param, token: Token, value: Any) -> str:
    """`value` as it was sent, if it is a token, else a 400 naming the rule."""
    if (
        isinstance(value, str)
        and len(value) <= token.max_length
        and PRINTABLE_ASCII.fullmatch(value)
        and value.strip()
    ):
        return value
    raise ServiceError(
        400,
        f"parameter '{param.name}' must be a string of 1 to {token.max_length} printable "
        f"ASCII characters, not blank, got {shown(value)}",
    )


def bind_params(entry: Endpoint, params: Mapping[str, Any], keyed: bool = True) -> dict[str, Any]:
    """Keyword arguments for the handler: unknown, missing or mistyped params are 400s.

    The key, when a write has one, is bound with the rest (the caller takes it out).
    `keyed` false leaves it out of the list of accepted parameters an error shows (a world
    whose catalogue does not show it), not out of what is accepted."""
    known = entry.param_names
    unknown = [name for name in params if name not in known]
    if unknown:
        accepted = ", ".join(param.name for param in declared_params(entry, keyed))
        raise ServiceError(
            400,
            f"unknown parameter(s) {shown_names(unknown)} for {entry.path}; accepted: {accepted}",
        )
    kwargs: dict[str, Any] = {}
    for param in entry.params:
        value = params.get(param.name)
        if value is None:
            if param.required:
                raise ServiceError(
                    400, f"missing required parameter '{param.name}' for {entry.path}"
                )
            continue
        kwargs[param.name] = coerce(param, value)
    return kwargs
