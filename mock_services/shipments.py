"""ShipmentService: the parcels of an order, their address, and replacements sent from stock.

Every order of a generated world with all six services has its original shipment; a
replacement (`/shipments/reship`) is a new shipment of the episode that takes its
units out of stock in the same write, as a warehouse allocates them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from ..read_only_json import thaw
from .base import _Service
from .paths import SHIPMENT, SHIPMENTS_BY_ORDER, SHIPMENTS_RESHIP, SHIPMENTS_UPDATE_ADDRESS
from .registry import Range, ServiceError, Wording, endpoint

NOT_DISPATCHED = "label_created"
RESHIPPABLE_ORDER_STATUSES = ("shipped", "delivered")
MAX_UNITS = 1000


class ShipmentService(_Service):
    """Parcels of an order: status, address, packed items; replacements from stock."""

    def _of_order(self, order_id: str) -> list[Mapping[str, Any]]:
        shared = self.state.world.shipment_ids_by_order.get(order_id, ())
        found = [self.state.read("shipments", shipment_id) for shipment_id in shared]
        found += [s for s in self.state.created("shipments") if s["order_id"] == order_id]
        return [shipment for shipment in found if shipment is not None]

    @endpoint(SHIPMENT, SHIPMENTS_BY_ORDER, "GET", tool="list_order_shipments")
    def by_order(
        self, order_id: Annotated[str, "Order ID whose shipments to list"]
    ) -> dict[str, Any]:
        """An order's shipments: status, address, packed items (original and replacements)."""
        order = self._require("orders", order_id, "order")
        return {
            "order_id": order["order_id"],
            "shipments": [thaw(shipment) for shipment in self._of_order(order["order_id"])],
        }

    @endpoint(SHIPMENT, SHIPMENTS_UPDATE_ADDRESS, "POST", tool="update_shipment_address")
    def update_address(
        self,
        shipment_id: Annotated[str, "Shipment ID, e.g. SHP-1005-1"],
        address: Annotated[str, "The new delivery address, in full"],
    ) -> dict[str, Any]:
        """Change where a shipment goes: only before it is dispatched (status label_created)."""
        shipment = self._require("shipments", shipment_id, "shipment")
        if shipment["status"] != NOT_DISPATCHED:
            raise ServiceError(
                409,
                f"shipment {shipment['shipment_id']} is {shipment['status']} (dispatched "
                f"{shipment['dispatched_at']}): its address can no longer change",
            )
        record = self.state.write("shipments", shipment["shipment_id"])
        previous, record["address"] = record["address"], address
        return {
            "shipment_id": record["shipment_id"],
            "previous_address": previous,
            "address": address,
        }

    @endpoint(SHIPMENT, SHIPMENTS_RESHIP, "POST", tool="reship_item")
    def reship(
        self,
        order_id: Annotated[str, "Order ID the replacement belongs to"],
        sku: Annotated[str, "SKU to send again: a line of the order"],
        quantity: Annotated[
            int, "Units to send (at most the line's quantity)", Range(1, MAX_UNITS)
        ],
        reason: Annotated[str, "Why a replacement is sent (kept on the shipment)", Wording()],
    ) -> dict[str, Any]:
        """Send units of an order's line again, from stock: a new shipment, stock reduced."""
        order = self._require("orders", order_id, "order")
        product = self._require("products", sku, "sku")
        line = next((item for item in order["items"] if item["sku"] == product["sku"]), None)
        if line is None:
            raise ServiceError(400, f"{product['sku']} is not a line of {order['order_id']}")
        if quantity > line["quantity"]:
            raise ServiceError(
                400,
                f"{order['order_id']} holds {line['quantity']} of {product['sku']}: "
                f"cannot reship {quantity}",
            )
        if order["status"] not in RESHIPPABLE_ORDER_STATUSES:
            raise ServiceError(409, f"{order['order_id']} is {order['status']}: nothing to replace")
        if product["stock"] < quantity:
            raise ServiceError(
                409,
                f"only {product['stock']} of {product['sku']} in stock: cannot reship {quantity}",
            )
        stock = self.state.write("products", product["sku"])
        stock["stock"] -= quantity
        existing = self._of_order(order["order_id"])
        address = (
            existing[0]["address"]
            if existing
            else self._require("users", order["user_id"], "user")["address"]
        )
        shipment = {
            "shipment_id": f"SHP-{order['order_id'].split('-', 1)[1]}-{len(existing) + 1}",
            "order_id": order["order_id"],
            "kind": "replacement",
            "status": NOT_DISPATCHED,
            "carrier": "UPS",
            "address": address,
            "items": [{"sku": product["sku"], "quantity": quantity}],
            "dispatched_at": None,
            "reason": reason,
        }
        self.state.insert("shipments", shipment["shipment_id"], shipment)
        return {
            "shipment": thaw(shipment),
            "stock": {
                "sku": product["sku"],
                "previous_stock": stock["stock"] + quantity,
                "stock": stock["stock"],
            },
        }
