"""Every endpoint path of the services, and the services' names, defined once.

The services declare their endpoints with these (`@endpoint(USER, USERS_LOOKUP, "GET")`),
and everything that names an endpoint (the reward rules, call identity, the tasks, the
proof and the oracle) imports them, so a path is spelled in one place only.
"""

from __future__ import annotations

USER, ORDER, INVENTORY = "user", "order", "inventory"

USERS_LOOKUP = "/users/lookup"
USERS_LIST = "/users/list"
USERS_UPDATE = "/users/update"
ORDERS_LOOKUP = "/orders/lookup"
ORDERS_BY_USER = "/orders/by-user"
ORDERS_UPDATE_STATUS = "/orders/update-status"
ORDERS_PROCESS_REFUND = "/orders/process-refund"
INVENTORY_LOOKUP = "/inventory/lookup"
INVENTORY_CHECK_STOCK = "/inventory/check-stock"
INVENTORY_PRICE_HISTORY = "/inventory/price-history"
INVENTORY_UPDATE_STOCK = "/inventory/update-stock"

SHIPMENT, PAYMENT, CASE = "shipment", "payment", "case"
SEED_SERVICES = (USER, ORDER, INVENTORY)
"""The seed's three services: the canonical tasks (and their seeded variants) expose only these."""
ALL_SERVICES = SEED_SERVICES + (SHIPMENT, PAYMENT, CASE)

SHIPMENTS_BY_ORDER = "/shipments/by-order"
SHIPMENTS_UPDATE_ADDRESS = "/shipments/update-address"
SHIPMENTS_RESHIP = "/shipments/reship"
PAYMENTS_BY_ORDER = "/payments/by-order"
PAYMENTS_REFUND = "/payments/refund"
CASES_BY_ORDER = "/cases/by-order"
CASES_OPEN = "/cases/open"
