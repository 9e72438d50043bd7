"""InventoryService: the product catalogue, with list prices, stock and price history by `sku`."""

from __future__ import annotations

from typing import Annotated, Any

from ..read_only_json import thaw
from .base import _Service
from .paths import (
    INVENTORY,
    INVENTORY_CHECK_STOCK,
    INVENTORY_LOOKUP,
    INVENTORY_PRICE_HISTORY,
    INVENTORY_UPDATE_STOCK,
)
from .registry import Range, ServiceError, endpoint
from .world import SETTINGS

MAX_STOCK_ADJUSTMENT = 1_000_000


class InventoryService(_Service):
    """Product catalogue: list prices, stock and price history by `sku`."""

    @endpoint(INVENTORY, INVENTORY_LOOKUP, "GET", tool="lookup_product")
    def lookup(self, sku: Annotated[str, "Product SKU, e.g. SKU-445"]) -> dict[str, Any]:
        """Look up a product by SKU: name, category, list price and stock."""
        product = self._require("products", sku, "sku")
        return {field: product[field] for field in ("sku", "name", "category", "price", "stock")}

    @endpoint(INVENTORY, INVENTORY_CHECK_STOCK, "GET", tool="check_stock")
    def check_stock(self, sku: Annotated[str, "Product SKU"]) -> dict[str, Any]:
        """Current stock level."""
        product = self._require("products", sku, "sku")
        stock, threshold = product["stock"], SETTINGS["low_stock_threshold"]
        level = "out_of_stock" if stock == 0 else "low_stock" if stock <= threshold else "in_stock"
        return {
            "sku": product["sku"],
            "stock": stock,
            "stock_status": level,
            "low_stock_threshold": threshold,
        }

    @endpoint(INVENTORY, INVENTORY_PRICE_HISTORY, "GET", tool="price_history")
    def price_history(self, sku: Annotated[str, "Product SKU"]) -> dict[str, Any]:
        """Price change history (list price, oldest first)."""
        product = self._require("products", sku, "sku")
        return {
            "sku": product["sku"],
            "current_price": product["price"],
            "history": thaw(product["price_history"]),
        }

    @endpoint(INVENTORY, INVENTORY_UPDATE_STOCK, "POST", tool="update_stock")
    def update_stock(
        self,
        sku: Annotated[str, "Product SKU"],
        adjustment: Annotated[
            int,
            "Units to add (positive) or remove (negative); non-zero, at most 1,000,000 either way",
            Range(-MAX_STOCK_ADJUSTMENT, MAX_STOCK_ADJUSTMENT),
        ],
    ) -> dict[str, Any]:
        """Adjust stock quantity."""
        product = self._require("products", sku, "sku")
        if adjustment == 0:
            raise ServiceError(400, "adjustment must be non-zero")
        new_stock = product["stock"] + adjustment
        if new_stock < 0:
            raise ServiceError(
                409,
                f"cannot remove {-adjustment} units of {product['sku']}: "
                f"only {product['stock']} in stock",
            )
        record = self.state.write("products", product["sku"])
        record["stock"] = new_stock
        return {
            "sku": product["sku"],
            "previous_stock": product["stock"],
            "adjustment": adjustment,
            "stock": new_stock,
        }
