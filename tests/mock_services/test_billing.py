"""mock_services/billing.py: money in cents and the one coupon rule, on the seed's coupons and made-up ones."""

from __future__ import annotations

import pytest

from servicebench_support_queue.mock_services import (
    BASE,
    BilledLine,
    coupon_discount,
    dollars,
    order_lines,
    to_cents,
)


def coupon(kind: str, eligible: list[str] | None, **value: float) -> dict:
    return {"code": "TEST", "type": kind, "eligible_skus": eligible, **value}


# Two units of SKU-1 charged 80.00 each (list price 100.00), one SKU-2 at 30.00 (list 30.00).
LINES = [BilledLine("SKU-1", 2, 8000, 10000), BilledLine("SKU-2", 1, 3000, 3000)]


def test_money_is_whole_cents():
    assert to_cents(247.5) == 24750 and to_cents(0.1 + 0.2) == 30 and to_cents(49.99) == 4999
    assert dollars(9900) == 99.0


def test_save20_takes_20_percent_of_the_list_price_of_the_eligible_items_as_the_seed_says():
    """ORD-1009: two SKU-555 at 89.50 (list 123.75) and one SKU-118: 20% of 2 x 123.75 is 49.50."""
    order = BASE["orders"]["ORD-1009"]
    assert coupon_discount(BASE["coupons"]["SAVE20"], order_lines(order, BASE["products"])) == 4950


def test_a_percent_of_the_list_price_and_a_percent_of_the_sale_price_differ_on_a_discounted_line():
    assert coupon_discount(coupon("percent_off_list_price", ["SKU-1"], percent=10), LINES) == 2000
    assert coupon_discount(coupon("percent_off_sale_price", ["SKU-1"], percent=10), LINES) == 1600
    assert coupon_discount(coupon("percent_off_sale_price", None, percent=10), LINES) == 1900


def test_a_flat_coupon_counts_once_and_only_when_a_line_is_eligible():
    assert coupon_discount(coupon("fixed_amount_off", ["SKU-1"], amount=10.0), LINES) == 1000
    assert coupon_discount(coupon("fixed_amount_off", ["SKU-9"], amount=10.0), LINES) == 0
    assert coupon_discount(coupon("percent_off_list_price", ["SKU-9"], percent=10), LINES) == 0


def test_an_unknown_coupon_or_a_missing_list_price_is_an_error_not_a_zero():
    with pytest.raises(ValueError, match="unknown type"):
        coupon_discount(coupon("buy_one_get_one", None), LINES)
    with pytest.raises(ValueError, match="list price"):
        coupon_discount(
            coupon("percent_off_list_price", None, percent=10), [BilledLine("SKU-1", 1, 8000)]
        )
