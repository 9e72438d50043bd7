"""The endpoint catalogue: every endpoint of the services, and how a call finds one.

Built once at import from the services' `@endpoint` methods (registry.py), in
definition order: the route table `resolve_route` reads, and the catalogue rows
shown to agents. A world runs either the seed's three services or all six
(`World.services`); its `Surface` is what an episode of it sees and can call: the
canonical tasks keep the seed's eleven endpoints, word for word, and a call to a
service the world does not run is an unknown service. state.py imports this module
to dispatch calls; nothing here imports the state.

Every write takes an optional `idempotency_key` (registry.py's `KEY_PARAM`); the
tools always declare it, and a surface's catalogue shows it when the surface is
`keyed`. An episode whose writes cannot fail is not keyed, so its observations stay
byte for byte what they were before keys existed; the services accept the key either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

from ..models import EndpointSpec
from ..read_only_json import ReadOnlyList, read_only
from .cases import CaseService
from .inventory import InventoryService
from .orders import OrderService
from .paths import ALL_SERVICES, SEED_SERVICES
from .payments import PaymentService
from .registry import Endpoint, ServiceError, collect_endpoints, endpoint_spec
from .shipments import ShipmentService
from .users import UserService

ENDPOINTS: tuple[Endpoint, ...] = collect_endpoints(
    UserService, OrderService, InventoryService, ShipmentService, PaymentService, CaseService
)
"""Every endpoint of every service (the tools are made from these)."""
if tuple(dict.fromkeys(entry.service for entry in ENDPOINTS)) != ALL_SERVICES:
    raise ValueError("the services' endpoints are not declared in ALL_SERVICES order")


@dataclass(frozen=True)
class Surface:
    """The endpoints one world runs: its route table, its services and the catalogue rows."""

    services: tuple[str, ...]
    keyed: bool
    """Whether the catalogue shows the writes' `idempotency_key` (every write accepts it)."""
    endpoints: tuple[Endpoint, ...]
    routes: Mapping[tuple[str, str], Endpoint]
    specs: tuple[EndpointSpec, ...]
    catalogue: ReadOnlyList
    """The catalogue as agents see it. Every observation of a world carries this one
    read-only list: nothing to copy per step, nothing a caller could corrupt for everyone."""


@cache
def surface(services: tuple[str, ...], keyed: bool = False) -> Surface:
    """The surface of a world that runs `services` (built once per set of services), its
    catalogue showing the writes' idempotency key if `keyed`."""
    unknown = [name for name in services if name not in ALL_SERVICES]
    if unknown:
        raise ValueError(f"unknown services {unknown}; known: {ALL_SERVICES}")
    endpoints = tuple(entry for entry in ENDPOINTS if entry.service in services)
    specs = tuple(endpoint_spec(entry, keyed) for entry in endpoints)
    return Surface(
        services=tuple(name for name in ALL_SERVICES if name in services),
        keyed=keyed,
        endpoints=endpoints,
        routes=MappingProxyType({(entry.service, entry.path): entry for entry in endpoints}),
        specs=specs,
        catalogue=read_only([spec.model_dump() for spec in specs]),
    )


SEED_SURFACE = surface(SEED_SERVICES)
"""The seed's three services and eleven endpoints: the canonical tasks see exactly these."""
FULL_SURFACE = surface(ALL_SERVICES)
ROUTES: Mapping[tuple[str, str], Endpoint] = FULL_SURFACE.routes
SERVICE_NAMES: tuple[str, ...] = ALL_SERVICES
ENDPOINT_SPECS: tuple[EndpointSpec, ...] = FULL_SURFACE.specs
ENDPOINT_CATALOGUE: ReadOnlyList = FULL_SURFACE.catalogue
"""Every endpoint's catalogue row (what a world with all six services shows)."""
SEED_CATALOGUE: ReadOnlyList = SEED_SURFACE.catalogue


def normalize_route(service: str, path: str, method: str) -> tuple[str, str, str]:
    """`(service, path, method)` as routed: `" Order "`, `"orders/lookup"`, `"get"` name
    `("order", "/orders/lookup", "GET")`."""
    return (
        str(service).strip().lower(),
        "/" + str(path).strip().lstrip("/"),
        str(method).strip().upper(),
    )


def resolve_route(service: str, path: str, method: str, runs: Surface = FULL_SURFACE) -> Endpoint:
    """The endpoint a call names on the surface of a world (`runs`: what it runs), or a
    404/405 that lists what does exist there."""
    service_name, path, method_name = normalize_route(service, path, method)
    if service_name not in runs.services:
        raise ServiceError(
            404, f"unknown service {service!r}; services: {', '.join(runs.services)}"
        )
    entry = runs.routes.get((service_name, path))
    if entry is None:
        owner = next((other.service for other in runs.endpoints if other.path == path), None)
        if owner is not None:
            raise ServiceError(
                404, f"endpoint {path} belongs to service '{owner}', not '{service_name}'"
            )
        listing = ", ".join(
            f"{other.method} {other.path}"
            for other in runs.endpoints
            if other.service == service_name
        )
        raise ServiceError(
            404, f"unknown endpoint {path!r} for service '{service_name}'; its endpoints: {listing}"
        )
    if method_name != entry.method:
        raise ServiceError(405, f"method {method_name} not allowed on {path}; use {entry.method}")
    return entry
