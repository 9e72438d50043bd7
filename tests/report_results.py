"""A constructed results document for the report's tests: numbers worked out by hand.

Task `t_a` (servicebench), two instances of three tries each:
    seed 1: scores 1.0, 0.5, 1.0, successes T F T  -> instance mean 5/6, c = 2 of n = 3
    seed 2: scores 0.0, 0.0, 0.3, successes F F F  -> instance mean 0.1, c = 0
    mean (5/6 + 0.1) / 2 = 7/15; s.e. |5/6 - 0.1| / 2 = 11/30 (two values)
    pass^1 = (2/3 + 0) / 2 = 1/3; pass^2 = (C(2,2)/C(3,2) + 0) / 2 = 1/6; pass^3 = 0
Task `t_b` (support_queue): seeds 1 and 2, three tries each, all 0.9 and successful.
Overall: mean (7/15 + 0.9) / 2 = 41/60; s.e. sqrt((11/30)^2 + 0^2) / 2 = 11/60;
pass^2 = (1/6 + 1) / 2 = 7/12.
"""

from __future__ import annotations

import copy
from typing import Any

SB_SCORES = {
    1: ((1.0, True), (0.5, False), (1.0, True)),
    2: ((0.0, False), (0.0, False), (0.3, False)),
}
OUTCOME = {
    "end_state_matches": False,
    "checks": [
        {
            "name": "status",
            "record": "orders/ORD-1",
            "expected": "returned",
            "actual": "x",
            "met": False,
        }
    ],
    "intended_changes": [],
    "collateral_damage": [
        {"table": "orders", "key": "ORD-1", "field": "status", "before": "delivered", "after": "x"}
    ],
}
FEEDBACK = {
    "ticket_id": "SQ-9",
    "priority": {"chosen": "P2", "correct": True, "weight": 0.3, "earned": 0.3},
    "queue": {"chosen": "billing", "correct": False, "weight": 0.25, "earned": 0.0},
    "disposition": {"chosen": "respond", "correct": True, "weight": 0.2, "earned": 0.2},
    "summary": {
        "coverage": 0.5,
        "weight": 0.15,
        "earned": 0.075,
        "matched": ["refund"],
        "missing": ["invoice number"],
        "off_topic": [],
        "flags": [],
        "word_count": 12,
        "word_cap": 60,
        "echo_share": 0.0,
    },
    "response": {
        "coverage": 1.0,
        "weight": 0.1,
        "earned": 0.1,
        "matched": ["apology"],
        "missing": [],
        "off_topic": [],
        "flags": ["over_cap"],
        "word_count": 20,
        "word_cap": 150,
        "echo_share": 0.0,
    },
    "unsafe": {
        "hits": [{"rule": "asks_for_password", "excerpt": "send your password"}],
        "penalty": 0.2,
    },
    "raw_total": 0.675,
    "reward": 0.475,
}


def _servicebench(seed: int, repeat: int, score: float, success: bool) -> dict[str, Any]:
    call = {
        "service": "order",
        "endpoint": "/orders/lookup",
        "method": "GET",
        "params": {"order_id": "<b>ORD-1</b>"},
    }
    observation = {
        "success": True,
        "error_message": None,
        "api_response": '{"status_code": 200}',
        "task_completed": success,
        "cumulative_reward": score,
        "reward_signals": ["order_found"],
        "outcome": OUTCOME,
    }
    return {
        "env": "servicebench",
        "task_id": "t_a",
        "seed": seed,
        "repeat": repeat,
        "score": score,
        "success": success,
        "error": None,
        "trajectory": [
            {
                "step": 1,
                "action": call,
                "reward": score,
                "done": True,
                "error": None,
                "stand_in": False,
                "observation": observation,
            }
        ],
    }


def _support_queue(seed: int, repeat: int) -> dict[str, Any]:
    action = {
        "priority": "P2",
        "queue": "billing",
        "disposition": "respond",
        "summary": "s",
        "response": "<script>alert(1)</script>",
        "confidence": 0.5,
    }
    observation = {
        "next_ticket_id": None,
        "current_index": 1,
        "total_tickets": 1,
        "last_feedback": FEEDBACK,
        "average_reward": 0.9,
    }
    return {
        "env": "support_queue",
        "task_id": "t_b",
        "seed": seed,
        "repeat": repeat,
        "score": 0.9,
        "success": True,
        "error": None,
        "trajectory": [
            {
                "step": 1,
                "action": action,
                "reward": 0.9,
                "done": True,
                "error": None,
                "stand_in": False,
                "observation": observation,
            }
        ],
    }


def results_document(families: bool = False) -> dict[str, Any]:
    """The run above; with `families`, t_a's seeds are families f1 and f2 of split `test` and
    t_b's are family g1 of split `train`."""
    tasks = []
    for seed, tries in SB_SCORES.items():
        for repeat, (score, success) in enumerate(tries):
            tasks.append(_servicebench(seed, repeat, score, success))
    for seed in (1, 2):
        tasks.extend(_support_queue(seed, repeat) for repeat in range(3))
    if families:
        for task in tasks:
            if task["env"] == "servicebench":
                task.update(split="test", family=f"f{task['seed']}")
            else:
                task.update(split="train", family="g1")
    return copy.deepcopy(
        {"model": "test-model", "seeds": [1, 2], "repeats": 3, "duration_s": 1.5, "tasks": tasks}
    )
