"""ServiceBench's three in-process backends: UserService, OrderService, InventoryService.

Each endpoint is a typed method registered with `@endpoint(service, path, method)`
(tau2-bench style): its signature, `Annotated` parameter descriptions and docstring
are the single source of both the catalogue shown to agents and the parameter
validation in `ServiceState.dispatch`, so an endpoint is described exactly once.

The seed data (data/servicebench.json) is loaded once at import into the frozen
`CANONICAL_WORLD`; a seeded task variant brings its own frozen `World`. Either is
shared by every episode that plays it. An episode's writes land in a small
copy-on-write overlay held by its `ServiceState`, so an episode costs a few bytes
until it writes, and a fresh `ServiceState` is exactly the initial data again.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Callable, Mapping, Optional, Union, get_args, get_origin, get_type_hints

from models import EndpointSpec

DATA_PATH = Path(__file__).resolve().parent / "data" / "servicebench.json"
EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
INTEGER_PATTERN = re.compile(r"^[+-]?\d+$")


# ----------------------------------------------------------------- shared data

def freeze(value: Any) -> Any:
    """A read-only deep view of plain JSON data: dicts become mapping proxies, lists tuples."""
    kind = type(value)  # exact types: the data is plain JSON, and ABC checks are slow
    if kind is dict:
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if kind is list:
        return tuple([freeze(item) for item in value])
    return value


def thaw(value: Any) -> Any:
    """A fresh plain-JSON deep copy, safe to hand out or to mutate."""
    if isinstance(value, (dict, MappingProxyType)):  # concrete types: ABC checks are slow
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return [thaw(item) for item in value]
    return value


def to_cents(amount: float) -> int:
    """Money compared as whole cents, so float noise never decides a refund."""
    return round(amount * 100)


@dataclass(frozen=True)
class World:
    """One complete, frozen data set for the three services, with its lookup indexes.

    The canonical world is the seed data; a task variant brings its own world. Either
    is built once and shared, read-only, by every episode that plays it.
    """

    tables: Mapping[str, Any]
    user_id_by_email: Mapping[str, str]
    order_ids_by_user: Mapping[str, tuple[str, ...]]

    @classmethod
    def from_records(cls, settings: Mapping[str, Any], users: list[dict[str, Any]],
                     products: list[dict[str, Any]], coupons: list[dict[str, Any]],
                     orders: list[dict[str, Any]]) -> "World":
        """Key the records by id, check their foreign keys, freeze them and index them."""
        tables = {
            "settings": settings,
            "users": {user["user_id"]: user for user in users},
            "orders": {order["order_id"]: order for order in orders},
            "products": {product["sku"]: product for product in products},
            "coupons": {coupon["code"]: coupon for coupon in coupons},
        }
        for order in orders:
            if order["user_id"] not in tables["users"]:
                raise ValueError(f"{order['order_id']}: unknown user {order['user_id']}")
            if order["coupon_code"] is not None and order["coupon_code"] not in tables["coupons"]:
                raise ValueError(f"{order['order_id']}: unknown coupon {order['coupon_code']}")
            for item in order["items"]:
                if item["sku"] not in tables["products"]:
                    raise ValueError(f"{order['order_id']}: unknown sku {item['sku']}")
        order_ids: dict[str, list[str]] = {user["user_id"]: [] for user in users}
        for order in orders:
            order_ids[order["user_id"]].append(order["order_id"])
        return cls(
            tables=freeze(tables),
            user_id_by_email=MappingProxyType({user["email"].lower(): user["user_id"] for user in users}),
            order_ids_by_user=MappingProxyType({uid: tuple(ids) for uid, ids in order_ids.items()}),
        )


def _load_world(path: Path) -> World:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return World.from_records(freeze(raw["settings"]), raw["users"], raw["products"],
                              raw["coupons"], raw["orders"])


CANONICAL_WORLD: World = _load_world(DATA_PATH)
BASE: Mapping[str, Any] = CANONICAL_WORLD.tables
SETTINGS: Mapping[str, Any] = BASE["settings"]
USER_ID_BY_EMAIL: Mapping[str, str] = CANONICAL_WORLD.user_id_by_email
ORDER_IDS_BY_USER: Mapping[str, tuple[str, ...]] = CANONICAL_WORLD.order_ids_by_user


class ServiceError(Exception):
    """A request the service refuses; becomes `(status, {"error": message})`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# ------------------------------------------------------------ endpoint registry

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
    known = {param.name: param for param in entry.params}
    unknown = [name for name in params if name not in known]
    if unknown:
        raise ServiceError(400, f"unknown parameter(s) {', '.join(map(repr, unknown))} for "
                                f"{entry.path}; accepted: {', '.join(known)}")
    kwargs: dict[str, Any] = {}
    for param in entry.params:
        value = params.get(param.name)
        if value is None:
            if param.required:
                raise ServiceError(400, f"missing required parameter '{param.name}' for {entry.path}")
            continue
        kwargs[param.name] = coerce(param, value)
    return kwargs


# -------------------------------------------------------------- episode state

class ServiceState:
    """One episode's view of the services: a shared world plus its own writes."""

    __slots__ = ("_world", "_overlay")

    def __init__(self, world: World = CANONICAL_WORLD) -> None:
        self._world = world
        self._overlay: Optional[dict[str, dict[str, dict[str, Any]]]] = None

    @property
    def world(self) -> World:
        return self._world

    @property
    def has_writes(self) -> bool:
        return self._overlay is not None

    def fork(self) -> "ServiceState":
        """An independent copy: same shared world, its own copy of the writes so far."""
        twin = ServiceState(self._world)
        twin._overlay = thaw(self._overlay) if self._overlay is not None else None
        return twin

    def read(self, table: str, key: str) -> Optional[Mapping[str, Any]]:
        """The current record (this episode's copy if it wrote one), or None."""
        if self._overlay is not None:
            written = self._overlay.get(table, {}).get(key)
            if written is not None:
                return written
        return self._world.tables[table].get(key)

    def write(self, table: str, key: str) -> dict[str, Any]:
        """A mutable copy of an existing record, made on first write (copy-on-write)."""
        if self._overlay is None:
            self._overlay = {}
        records = self._overlay.setdefault(table, {})
        if key not in records:
            records[key] = thaw(self._world.tables[table][key])
        return records[key]

    def find_user_id_by_email(self, email: str) -> Optional[str]:
        """The user whose current email this is, honouring this episode's email updates."""
        wanted = email.strip().lower()
        written = self._overlay.get("users", {}) if self._overlay is not None else {}
        for user_id, user in written.items():
            if user["email"].lower() == wanted:
                return user_id
        user_id = self._world.user_id_by_email.get(wanted)
        if user_id is None or user_id in written:
            return None
        return user_id

    def dispatch(self, service: str, endpoint: str, method: str,
                 params: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """Serve one call: `(200, data)` or `(4xx, {"error": message})`; never raises."""
        try:
            entry = resolve_route(service, endpoint, method)
            if not isinstance(params, Mapping):
                raise ServiceError(400, "params must be a JSON object")
            kwargs = bind_params(entry, params)
            return 200, entry.handler(entry.owner(self), **kwargs)
        except ServiceError as error:
            return error.status, {"error": error.message}
        except Exception as error:  # a bug must not take the episode down with it
            return 500, {"error": f"internal error in {endpoint!r}: {type(error).__name__}"}



# ------------------------------------------------------------------- services

STATUS_CHOICES = ", ".join(SETTINGS["status_transitions"])
UPDATABLE_USER_FIELDS = ", ".join(SETTINGS["user_updatable_fields"])


def normalize_id(value: str) -> str:
    """Ids are matched case-insensitively: `ord-1005` finds ORD-1005."""
    return value.strip().upper()


class _Service:
    """Base of the three services: a service call sees the episode's state only."""

    def __init__(self, state: ServiceState) -> None:
        self.state = state

    def _require(self, table: str, key: str, label: str) -> Mapping[str, Any]:
        record = self.state.read(table, normalize_id(key))
        if record is None:
            raise ServiceError(404, f"{label} {key!r} not found")
        return record


class UserService(_Service):
    """Customer profiles; `user_id` is the foreign key into OrderService."""

    @endpoint("user", "/users/lookup", "GET")
    def lookup(self, email: Annotated[Optional[str], "Customer email address"] = None,
               user_id: Annotated[Optional[str], "User ID, e.g. USR-001"] = None) -> dict[str, Any]:
        """Look up a user by email or ID (at least one of the two is required)."""
        if email is None and user_id is None:
            raise ServiceError(400, "provide 'email' or 'user_id'")
        if user_id is not None:
            user = self._require("users", user_id, "user")
            if email is not None and user["email"].lower() != email.lower():
                raise ServiceError(404, f"no user has both user_id {user_id!r} and email {email!r}")
            return thaw(user)
        found = self.state.find_user_id_by_email(email or "")
        if found is None:
            raise ServiceError(404, f"no user with email {email!r}")
        return thaw(self.state.read("users", found))

    @endpoint("user", "/users/list", "GET")
    def list_users(self, page: Annotated[int, "Page number, starting at 1"] = 1,
                   per_page: Annotated[int, "Users per page (1-5)"] = SETTINGS["max_per_page"],
                   ) -> dict[str, Any]:
        """List all users, paginated (max 5 per page)."""
        limit = SETTINGS["max_per_page"]
        if page < 1:
            raise ServiceError(400, f"page must be >= 1, got {page}")
        if not 1 <= per_page <= limit:
            raise ServiceError(400, f"per_page must be between 1 and {limit}, got {per_page}")
        user_ids = tuple(self.state.world.tables["users"])
        start = (page - 1) * per_page
        users = [self.state.read("users", user_id) for user_id in user_ids[start:start + per_page]]
        return {
            "users": [{field: user[field] for field in ("user_id", "name", "email", "tier", "account_status")}
                      for user in users],
            "page": page, "per_page": per_page, "total_users": len(user_ids),
            "total_pages": -(-len(user_ids) // per_page),
        }

    @endpoint("user", "/users/update", "POST")
    def update(self, user_id: Annotated[str, "User ID to update"],
               updates: Annotated[dict[str, Any], "Fields to change: " + UPDATABLE_USER_FIELDS],
               ) -> dict[str, Any]:
        """Update user fields."""
        user = self._require("users", user_id, "user")
        if not updates:
            raise ServiceError(400, "updates must name at least one field")
        refused = [field for field in updates if field not in SETTINGS["user_updatable_fields"]]
        if refused:
            raise ServiceError(400, f"field(s) {', '.join(map(repr, refused))} cannot be updated; "
                                    f"updatable: {UPDATABLE_USER_FIELDS}")
        for field, value in updates.items():
            if not isinstance(value, str) or (field != "notes" and not value.strip()):
                raise ServiceError(400, f"update of '{field}' must be a non-empty string")
        cleaned = {field: value.strip() for field, value in updates.items()}
        if "email" in cleaned:
            if not EMAIL_PATTERN.match(cleaned["email"]):
                raise ServiceError(400, f"invalid email {cleaned['email']!r}")
            owner = self.state.find_user_id_by_email(cleaned["email"])
            if owner is not None and owner != user["user_id"]:
                raise ServiceError(409, f"email {cleaned['email']!r} is already used by another user")
        record = self.state.write("users", user["user_id"])
        record.update(cleaned)
        return {"user": thaw(record), "updated_fields": list(cleaned)}


class OrderService(_Service):
    """Purchase orders; line items reference InventoryService by `sku`."""

    def _detail(self, order: Mapping[str, Any]) -> dict[str, Any]:
        coupons = self.state.world.tables["coupons"]
        coupon = coupons.get(order["coupon_code"]) if order["coupon_code"] else None
        refunded = sum(to_cents(refund["amount"]) for refund in order["refunds"])
        return {
            "order_id": order["order_id"], "user_id": order["user_id"], "status": order["status"],
            "placed_at": order["placed_at"],
            "items": [{"sku": item["sku"], "name": self.state.read("products", item["sku"])["name"],
                       "quantity": item["quantity"], "unit_price": item["unit_price"]}
                      for item in order["items"]],
            "coupon_applied": thaw(coupon), "total_charged": order["total_charged"],
            "return_eligible": order["return_eligible"], "refunds": thaw(order["refunds"]),
            "refunded_total": refunded / 100,
        }

    @endpoint("order", "/orders/lookup", "GET")
    def lookup(self, order_id: Annotated[str, "Order ID, e.g. ORD-1005"]) -> dict[str, Any]:
        """Look up a single order by ID: status, line items, coupon, charge and refunds."""
        return self._detail(self._require("orders", order_id, "order"))

    @endpoint("order", "/orders/by-user", "GET")
    def by_user(self, user_id: Annotated[str, "User ID whose orders to list"]) -> dict[str, Any]:
        """All orders placed by a user, as summaries (details via /orders/lookup)."""
        user = self._require("users", user_id, "user")
        orders = [self.state.read("orders", order_id) for order_id in self.state.world.order_ids_by_user[user["user_id"]]]
        return {
            "user_id": user["user_id"],
            "orders": [{"order_id": order["order_id"], "status": order["status"],
                        "placed_at": order["placed_at"], "total_charged": order["total_charged"],
                        "item_count": sum(item["quantity"] for item in order["items"])}
                       for order in orders],
            "total_orders": len(orders),
        }

    @endpoint("order", "/orders/update-status", "POST")
    def update_status(self, order_id: Annotated[str, "Order ID to change"],
                      new_status: Annotated[str, "New status: one of " + STATUS_CHOICES],
                      ) -> dict[str, Any]:
        """Change order status (only along allowed transitions, e.g. delivered -> returned)."""
        order = self._require("orders", order_id, "order")
        wanted = new_status.strip().lower()
        transitions = SETTINGS["status_transitions"]
        if wanted not in transitions:
            raise ServiceError(400, f"unknown status {new_status!r}; valid: {STATUS_CHOICES}")
        current = order["status"]
        if wanted not in transitions[current]:
            allowed = ", ".join(transitions[current]) or "none"
            raise ServiceError(409, f"cannot change {order['order_id']} from '{current}' to "
                                    f"'{wanted}'; allowed from '{current}': {allowed}")
        record = self.state.write("orders", order["order_id"])
        record["status"] = wanted
        return {"order_id": order["order_id"], "previous_status": current, "status": wanted}

    @endpoint("order", "/orders/process-refund", "POST")
    def process_refund(self, order_id: Annotated[str, "Order ID to refund"],
                       amount: Annotated[float, "Amount in USD: positive, whole cents, "
                                                "at most what remains refundable"],
                       reason: Annotated[str, "Why the refund is issued (kept on the order)"],
                       ) -> dict[str, Any]:
        """Issue a refund; several are allowed while their total stays within the charge."""
        order = self._require("orders", order_id, "order")
        if amount <= 0:
            raise ServiceError(400, f"amount must be positive, got {amount}")
        if abs(amount * 100 - round(amount * 100)) > 1e-6:
            raise ServiceError(400, f"amount must be in whole cents, got {amount}")
        refunded = sum(to_cents(refund["amount"]) for refund in order["refunds"])
        remaining = to_cents(order["total_charged"]) - refunded
        if to_cents(amount) > remaining:
            raise ServiceError(400, f"refund of {amount:.2f} exceeds the refundable balance of "
                                    f"{remaining / 100:.2f} on {order['order_id']}")
        record = self.state.write("orders", order["order_id"])
        refund = {"refund_id": f"RF-{order['order_id']}-{len(record['refunds']) + 1}",
                  "amount": to_cents(amount) / 100, "reason": reason}
        record["refunds"].append(refund)
        return {"refund": dict(refund), "order_id": order["order_id"],
                "total_charged": order["total_charged"],
                "refunded_total": (refunded + to_cents(amount)) / 100}


class InventoryService(_Service):
    """Product catalogue: list prices, stock and price history by `sku`."""

    @endpoint("inventory", "/inventory/lookup", "GET")
    def lookup(self, sku: Annotated[str, "Product SKU, e.g. SKU-445"]) -> dict[str, Any]:
        """Look up a product by SKU: name, category, list price and stock."""
        product = self._require("products", sku, "sku")
        return {field: product[field] for field in ("sku", "name", "category", "price", "stock")}

    @endpoint("inventory", "/inventory/check-stock", "GET")
    def check_stock(self, sku: Annotated[str, "Product SKU"]) -> dict[str, Any]:
        """Current stock level."""
        product = self._require("products", sku, "sku")
        stock, threshold = product["stock"], SETTINGS["low_stock_threshold"]
        level = "out_of_stock" if stock == 0 else "low_stock" if stock <= threshold else "in_stock"
        return {"sku": product["sku"], "stock": stock, "stock_status": level,
                "low_stock_threshold": threshold}

    @endpoint("inventory", "/inventory/price-history", "GET")
    def price_history(self, sku: Annotated[str, "Product SKU"]) -> dict[str, Any]:
        """Price change history (list price, oldest first)."""
        product = self._require("products", sku, "sku")
        return {"sku": product["sku"], "current_price": product["price"],
                "history": thaw(product["price_history"])}

    @endpoint("inventory", "/inventory/update-stock", "POST")
    def update_stock(self, sku: Annotated[str, "Product SKU"],
                     adjustment: Annotated[int, "Units to add (positive) or remove (negative); non-zero"],
                     ) -> dict[str, Any]:
        """Adjust stock quantity."""
        product = self._require("products", sku, "sku")
        if adjustment == 0:
            raise ServiceError(400, "adjustment must be non-zero")
        new_stock = product["stock"] + adjustment
        if new_stock < 0:
            raise ServiceError(409, f"cannot remove {-adjustment} units of {product['sku']}: "
                                    f"only {product['stock']} in stock")
        record = self.state.write("products", product["sku"])
        record["stock"] = new_stock
        return {"sku": product["sku"], "previous_stock": product["stock"],
                "adjustment": adjustment, "stock": new_stock}


# ------------------------------------------------------------------ catalogue

ENDPOINTS: tuple[Endpoint, ...] = collect_endpoints(UserService, OrderService, InventoryService)
ROUTES: Mapping[tuple[str, str], Endpoint] = MappingProxyType(
    {(entry.service, entry.path): entry for entry in ENDPOINTS}
)
SERVICE_NAMES: tuple[str, ...] = tuple(dict.fromkeys(entry.service for entry in ENDPOINTS))
ENDPOINT_SPECS: tuple[EndpointSpec, ...] = tuple(endpoint_spec(entry) for entry in ENDPOINTS)
ENDPOINT_CATALOGUE: tuple[dict[str, Any], ...] = tuple(spec.model_dump() for spec in ENDPOINT_SPECS)


def endpoint_catalogue() -> list[dict[str, Any]]:
    """A fresh copy of the catalogue for one observation: no caller can alter the shared one."""
    return [{**row, "params": {name: dict(spec) for name, spec in row["params"].items()}}
            for row in ENDPOINT_CATALOGUE]


def resolve_route(service: str, path: str, method: str) -> Endpoint:
    """The endpoint a call names, or a 404/405 that lists what does exist."""
    service_name, method_name = str(service).strip().lower(), str(method).strip().upper()
    path = "/" + str(path).strip().lstrip("/")
    if service_name not in SERVICE_NAMES:
        raise ServiceError(404, f"unknown service {service!r}; services: {', '.join(SERVICE_NAMES)}")
    entry = ROUTES.get((service_name, path))
    if entry is None:
        owner = next((other.service for other in ENDPOINTS if other.path == path), None)
        if owner is not None:
            raise ServiceError(404, f"endpoint {path} belongs to service '{owner}', not '{service_name}'")
        listing = ", ".join(f"{other.method} {other.path}" for other in ENDPOINTS
                            if other.service == service_name)
        raise ServiceError(404, f"unknown endpoint {path!r} for service '{service_name}'; "
                                f"its endpoints: {listing}")
    if method_name != entry.method:
        raise ServiceError(405, f"method {method_name} not allowed on {path}; use {entry.method}")
    return entry
