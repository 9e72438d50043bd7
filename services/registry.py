"""How an endpoint is declared, described and validated: the endpoint registry.

Each endpoint is a typed service method registered with `@endpoint(service, path,
method)` (tau2-bench style): its signature, `Annotated` parameter descriptions and
docstring are the single source of both the catalogue shown to agents
(`endpoint_spec`) and the parameter validation (`bind_params`), so an endpoint is
described exactly once. This module knows no service: catalogue.py collects them.
"""

from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import (
    Annotated,
    Any,
    Callable,
    Mapping,
    Optional,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from models import EndpointSpec

INTEGER_PATTERN = re.compile(r"^[+-]?\d+$")


class ServiceError(Exception):
    """A request the service refuses; becomes `(status, {"error": message})`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "string" | "integer" | "number" | "object"
    required: bool
    description: str
    default: Any = None


@dataclass(frozen=True)
class Endpoint:
    service: str
    path: str
    method: str
    description: str
    params: tuple[Param, ...]
    handler: Callable[..., dict[str, Any]]
    owner: type

    @cached_property
    def param_names(self) -> frozenset[str]:
        return frozenset(param.name for param in self.params)


KIND_BY_TYPE: Mapping[type, str] = MappingProxyType(
    {str: "string", int: "integer", float: "number", dict: "object"}
)


def endpoint(service: str, path: str, method: str) -> Callable[[Callable], Callable]:
    """Register a service method as the endpoint `method path` of `service`."""
    def register(func: Callable) -> Callable:
        func.__route__ = (service, path, method)  # type: ignore[attr-defined]
        return func
    return register


def _param_from_signature(name: str, hint: Any, parameter: inspect.Parameter) -> Param:
    """Read kind, description and optionality off an `Annotated[...]` hint."""
    base, description = hint, ""
    if get_origin(hint) is Annotated:
        base, description = get_args(hint)[0], str(get_args(hint)[1])
    if get_origin(base) is Union:
        base = next(arg for arg in get_args(base) if arg is not type(None))
    base = get_origin(base) or base
    required = parameter.default is inspect.Parameter.empty
    return Param(name, KIND_BY_TYPE[base], required, description,
                 None if required else parameter.default)


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
                for name, parameter in signature.parameters.items() if name != "self"
            )
            doc = inspect.getdoc(func) or ""
            found.append(Endpoint(*route, doc.split("\n\n")[0].replace("\n", " "), params, func, cls))
    return tuple(found)


def endpoint_spec(entry: Endpoint) -> EndpointSpec:
    """The catalogue row of one endpoint, as the agent sees it."""
    params: dict[str, dict[str, Any]] = {}
    for param in entry.params:
        row: dict[str, Any] = {"type": param.kind, "required": param.required,
                               "description": param.description}
        if param.default is not None:
            row["default"] = param.default
        params[param.name] = row
    return EndpointSpec(service=entry.service, endpoint=entry.path, method=entry.method,
                        description=entry.description, params=params)


def coerce(param: Param, value: Any) -> Any:
    """The value as the parameter's type, or a 400 naming what was wrong."""
    kind = param.kind
    if kind == "string" and isinstance(value, str) and value.strip():
        return value.strip()
    if kind == "integer" and not isinstance(value, bool):
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and INTEGER_PATTERN.match(value.strip()):
            return int(value.strip())
    if kind == "number" and not isinstance(value, bool):
        number: Optional[float] = None
        if isinstance(value, (int, float)):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                number = None
        if number is not None and math.isfinite(number):
            return number
    if kind == "object" and isinstance(value, dict):
        return value
    wanted = "a non-empty string" if kind == "string" else f"of type {kind}"
    raise ServiceError(400, f"parameter '{param.name}' must be {wanted}, got {value!r}")


def bind_params(entry: Endpoint, params: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for the handler: unknown, missing or mistyped params are 400s."""
    known = entry.param_names
    unknown = [name for name in params if name not in known]
    if unknown:
        accepted = ", ".join(param.name for param in entry.params)
        raise ServiceError(400, f"unknown parameter(s) {', '.join(map(repr, unknown))} for "
                                f"{entry.path}; accepted: {accepted}")
    kwargs: dict[str, Any] = {}
    for param in entry.params:
        value = params.get(param.name)
        if value is None:
            if param.required:
                raise ServiceError(400, f"missing required parameter '{param.name}' for {entry.path}")
            continue
        kwargs[param.name] = coerce(param, value)
    return kwargs
