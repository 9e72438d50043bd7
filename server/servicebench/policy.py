"""The support policy every ServiceBench observation carries: a template and its values.

The text (data/servicebench_policy.json) states the refund window, the agent's refund
limit, the price-adjustment window, when to escalate or decline, and what must be
verified before any write. A `Policy` is one set of values; `text()` renders it. The
canonical tasks are served `CANONICAL_POLICY`; a seeded variant draws its own values
(policy drift: the same family under another window or limit, so that a memorised
script fails), and its expected end state is the one those values imply. A variant of
one of the seed's tasks draws only values under which its answer stays right.

Nothing here reads a task or a world; the oracle reads the values back out of the text
(`read_policy`), never from here.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from ... import DATA_DIR
from ...read_only_json import read_only
from .world import TODAY

POLICY_PATH = DATA_DIR / "servicebench_policy.json"
POLICY_DATA: Mapping[str, Any] = read_only(json.loads(POLICY_PATH.read_text(encoding="utf-8")))
TEMPLATE = "\n".join(POLICY_DATA["template"])
DRAWS: Mapping[str, Sequence[int]] = POLICY_DATA["draws"]


@dataclass(frozen=True, slots=True)
class Policy:
    """One set of policy values (money in whole dollars, windows in days)."""

    return_window_days: int
    refund_limit: int
    price_adjustment_days: int
    today: date = TODAY

    @property
    def refund_limit_cents(self) -> int:
        return self.refund_limit * 100

    def text(self) -> str:
        return TEMPLATE.format(
            today=self.today.isoformat(),
            return_window_days=self.return_window_days,
            refund_limit=f"{self.refund_limit:,.2f}",
            price_adjustment_days=self.price_adjustment_days,
        )


CANONICAL_POLICY = Policy(**POLICY_DATA["canonical"])


def draw_policy(rng: random.Random, return_window_days: int | None = None) -> Policy:
    """Values drawn from the policy's ranges (`return_window_days`: fixed instead)."""
    window = rng.choice(DRAWS["return_window_days"])
    return Policy(
        return_window_days=return_window_days or window,
        refund_limit=rng.choice(DRAWS["refund_limit"]),
        price_adjustment_days=rng.choice(DRAWS["price_adjustment_days"]),
    )


def policy_allowing(rng: random.Random, return_window_days: int, refund_cents: int) -> Policy:
    """Drawn values under which a refund of `refund_cents` stays within the limit (a variant of
    one of the seed's tasks, whose answer is that refund); the window is the world's own."""
    limits = [limit for limit in DRAWS["refund_limit"] if limit * 100 >= refund_cents]
    limit = rng.choice(limits) if limits else -(-refund_cents // 10_000) * 100
    return Policy(return_window_days, limit, rng.choice(DRAWS["price_adjustment_days"]))


POLICY_READINGS = {
    "today": re.compile(r"today is (\d{4}-\d{2}-\d{2})"),
    "return_window_days": re.compile(r"honoured within (\d+) days of the order date"),
    "refund_limit": re.compile(r"at most \$([\d,]+\.\d{2}) per request"),
    "price_adjustment_days": re.compile(r"within (\d+) days after the order date"),
}


def read_policy(text: str) -> Policy:
    """The values a policy text states (what the oracle knows of the policy)."""
    found = {}
    for name, pattern in POLICY_READINGS.items():
        match = pattern.search(text)
        if match is None:
            raise ValueError(f"the policy states no {name}")
        found[name] = match.group(1)
    return Policy(
        return_window_days=int(found["return_window_days"]),
        refund_limit=round(float(found["refund_limit"].replace(",", ""))),
        price_adjustment_days=int(found["price_adjustment_days"]),
        today=date.fromisoformat(found["today"]),
    )
