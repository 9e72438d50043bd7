"""ServiceBench's in-process backends: the seed's UserService, OrderService and
InventoryService, and ShipmentService, PaymentService and CaseService beside them.

Laid out like a tau2-bench domain, data, tools and environment apart; the imports
run one way, top to bottom:

    billing.py     money in whole cents and the one coupon rule
    world.py       the read-only seed data (data/servicebench.json) and its indexes
    registry.py    `@endpoint`, parameter specs and validation, `ServiceError`
    base.py        the services' base class and the view of an episode they get
    users.py, orders.py, inventory.py    the seed's services, one each
    shipments.py, payments.py, cases.py  the services the other task families need
    catalogue.py   every endpoint, each world's surface (the catalogue agents see), `resolve_route`
    state.py       `ServiceState`: one episode's copy-on-write writes, its idempotency keys
                   and `dispatch`

Everything public is re-exported here: `from servicebench_support_queue.mock_services import ServiceState`.
"""

from ..read_only_json import thaw
from .base import EpisodeRecords, normalize_id
from .billing import BilledLine, coupon_discount, dollars, order_lines, to_cents
from .cases import CASE_CATEGORIES, CaseService
from .catalogue import (
    ENDPOINT_CATALOGUE,
    ENDPOINT_SPECS,
    ENDPOINTS,
    FULL_SURFACE,
    ROUTES,
    SEED_CATALOGUE,
    SEED_SURFACE,
    SERVICE_NAMES,
    Surface,
    normalize_route,
    resolve_route,
    surface,
)
from .inventory import InventoryService
from .orders import STATUS_CHOICES, OrderService
from .paths import ALL_SERVICES, SEED_SERVICES
from .payments import PaymentService
from .registry import (
    IDEMPOTENCY_KEY,
    INTEGER_PATTERN,
    KEY_PARAM,
    KIND_BY_TYPE,
    MAX_KEY_CHARS,
    Endpoint,
    Fields,
    OneOf,
    Param,
    ServiceError,
    Token,
    Wording,
    bind_params,
    coerce,
    collect_endpoints,
    endpoint,
    endpoint_spec,
)
from .shipments import ShipmentService
from .state import (
    MAX_KEY_ENTRY_BYTES,
    KeyedAnswer,
    KeyTable,
    Served,
    ServiceState,
    write_fingerprint,
)
from .users import EMAIL_PATTERN, UPDATABLE_USER_FIELDS, UserService
from .world import (
    BASE,
    CANONICAL_WORLD,
    DATA_PATH,
    ORDER_IDS_BY_USER,
    SETTINGS,
    USER_ID_BY_EMAIL,
    World,
)

__all__ = [
    "ALL_SERVICES",
    "SEED_SERVICES",
    "BASE",
    "CANONICAL_WORLD",
    "CASE_CATEGORIES",
    "FULL_SURFACE",
    "SEED_CATALOGUE",
    "SEED_SURFACE",
    "CaseService",
    "PaymentService",
    "ShipmentService",
    "Surface",
    "surface",
    "DATA_PATH",
    "EMAIL_PATTERN",
    "ENDPOINTS",
    "ENDPOINT_CATALOGUE",
    "ENDPOINT_SPECS",
    "IDEMPOTENCY_KEY",
    "INTEGER_PATTERN",
    "KEY_PARAM",
    "MAX_KEY_CHARS",
    "MAX_KEY_ENTRY_BYTES",
    "KeyedAnswer",
    "KeyTable",
    "Served",
    "Token",
    "Wording",
    "write_fingerprint",
    "KIND_BY_TYPE",
    "ORDER_IDS_BY_USER",
    "ROUTES",
    "SERVICE_NAMES",
    "SETTINGS",
    "STATUS_CHOICES",
    "UPDATABLE_USER_FIELDS",
    "USER_ID_BY_EMAIL",
    "BilledLine",
    "Endpoint",
    "EpisodeRecords",
    "Fields",
    "InventoryService",
    "OneOf",
    "OrderService",
    "Param",
    "ServiceError",
    "ServiceState",
    "UserService",
    "World",
    "bind_params",
    "coerce",
    "collect_endpoints",
    "coupon_discount",
    "dollars",
    "endpoint",
    "endpoint_spec",
    "normalize_id",
    "normalize_route",
    "order_lines",
    "resolve_route",
    "thaw",
    "to_cents",
]
