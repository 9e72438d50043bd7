"""The endpoint catalogue: every endpoint of the three services, and how a call finds one.

Built once at import from the services' `@endpoint` methods (registry.py), in
definition order: the route table `resolve_route` reads, and the catalogue rows
shown to agents. state.py imports this module to dispatch calls; nothing here
imports the state.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..models import EndpointSpec
from ..read_only_json import ReadOnlyList, read_only
from .inventory import InventoryService
from .orders import OrderService
from .registry import Endpoint, ServiceError, collect_endpoints, endpoint_spec
from .users import UserService

ENDPOINTS: tuple[Endpoint, ...] = collect_endpoints(UserService, OrderService, InventoryService)
ROUTES: Mapping[tuple[str, str], Endpoint] = MappingProxyType(
    {(entry.service, entry.path): entry for entry in ENDPOINTS}
)
SERVICE_NAMES: tuple[str, ...] = tuple(dict.fromkeys(entry.service for entry in ENDPOINTS))
ENDPOINT_SPECS: tuple[EndpointSpec, ...] = tuple(endpoint_spec(entry) for entry in ENDPOINTS)
ENDPOINT_CATALOGUE: ReadOnlyList = read_only([spec.model_dump() for spec in ENDPOINT_SPECS])
"""The catalogue as agents see it. Every observation carries this one read-only list:
nothing to copy per step, and nothing a caller could corrupt for everyone else."""


def normalize_route(service: str, path: str, method: str) -> tuple[str, str, str]:
    """`(service, path, method)` as routed: `" Order "`, `"orders/lookup"`, `"get"` name
    `("order", "/orders/lookup", "GET")`."""
    return (
        str(service).strip().lower(),
        "/" + str(path).strip().lstrip("/"),
        str(method).strip().upper(),
    )


def resolve_route(service: str, path: str, method: str) -> Endpoint:
    """The endpoint a call names, or a 404/405 that lists what does exist."""
    service_name, path, method_name = normalize_route(service, path, method)
    if service_name not in SERVICE_NAMES:
        raise ServiceError(
            404, f"unknown service {service!r}; services: {', '.join(SERVICE_NAMES)}"
        )
    entry = ROUTES.get((service_name, path))
    if entry is None:
        owner = next((other.service for other in ENDPOINTS if other.path == path), None)
        if owner is not None:
            raise ServiceError(
                404, f"endpoint {path} belongs to service '{owner}', not '{service_name}'"
            )
        listing = ", ".join(
            f"{other.method} {other.path}" for other in ENDPOINTS if other.service == service_name
        )
        raise ServiceError(
            404, f"unknown endpoint {path!r} for service '{service_name}'; its endpoints: {listing}"
        )
    if method_name != entry.method:
        raise ServiceError(405, f"method {method_name} not allowed on {path}; use {entry.method}")
    return entry
