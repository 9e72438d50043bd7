"""mock_services/world.py: the seed data's foreign keys and charges hold (but the planted billing error)."""

from __future__ import annotations

from servicebench_support_queue.mock_services import BASE, coupon_discount, order_lines


def test_foreign_keys_hold():
    for order in BASE["orders"].values():
        assert order["user_id"] in BASE["users"]
        assert all(item["sku"] in BASE["products"] for item in order["items"])
    jane = [uid for uid, user in BASE["users"].items() if user["email"] == "jane.doe@example.com"]
    assert jane == ["USR-001"]
    assert len(BASE["users"]) >= 10 and len(BASE["orders"]) >= 20 and len(BASE["products"]) >= 15


def test_every_charge_matches_its_items_less_its_coupon_by_the_coupon_rule_but_the_billing_error():
    mismatched = {}
    for order_id, order in BASE["orders"].items():
        lines = sum(item["quantity"] * round(item["unit_price"] * 100) for item in order["items"])
        coupon = (
            coupon_discount(
                BASE["coupons"][order["coupon_code"]], order_lines(order, BASE["products"])
            )
            if order["coupon_code"]
            else 0
        )
        charged = round(order["total_charged"] * 100)
        if charged != lines - coupon:
            mismatched[order_id] = (charged, lines, coupon)
    assert list(mismatched) == ["ORD-1009"]
    charged, lines, coupon = mismatched["ORD-1009"]
    assert charged == lines + coupon == 19800 + 4950  # SAVE20 was added instead of deducted
