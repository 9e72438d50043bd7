"""ServiceBench's three in-process backends: UserService, OrderService, InventoryService.

Laid out like a tau2-bench domain, data, tools and environment apart; the imports
run one way, top to bottom:

    billing.py     money in whole cents and the one coupon rule
    world.py       the read-only seed data (data/servicebench.json) and its indexes
    registry.py    `@endpoint`, parameter specs and validation, `ServiceError`
    base.py        the services' base class and the view of an episode they get
    users.py, orders.py, inventory.py    one service each
    catalogue.py   every endpoint, the catalogue agents see, `resolve_route`
    state.py       `ServiceState`: one episode's copy-on-write writes and `dispatch`

Everything public is re-exported here: `from servicebench_support_queue.mock_services import ServiceState`.
"""

from ..read_only_json import thaw
from .base import EpisodeRecords, normalize_id
from .billing import BilledLine, coupon_discount, dollars, order_lines, to_cents
from .catalogue import (
    ENDPOINT_CATALOGUE,
    ENDPOINT_SPECS,
    ENDPOINTS,
    ROUTES,
    SERVICE_NAMES,
    normalize_route,
    resolve_route,
)
from .inventory import InventoryService
from .orders import STATUS_CHOICES, OrderService
from .registry import (
    INTEGER_PATTERN,
    KIND_BY_TYPE,
    Endpoint,
    Fields,
    OneOf,
    Param,
    ServiceError,
    bind_params,
    coerce,
    collect_endpoints,
    endpoint,
    endpoint_spec,
)
from .state import ServiceState
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
    "BASE",
    "CANONICAL_WORLD",
    "DATA_PATH",
    "EMAIL_PATTERN",
    "ENDPOINTS",
    "ENDPOINT_CATALOGUE",
    "ENDPOINT_SPECS",
    "INTEGER_PATTERN",
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
