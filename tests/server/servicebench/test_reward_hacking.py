"""Reward hacking: random, brute-force and adversarial policies against ServiceBench's rewards.

Every episode here passes `audit` (tests/servicebench_adversary.py): the score stays in
[0, 1]; rewards sum to `cumulative_reward` and to the state's score; the score is
max(0, the sum of every row triggered), so no penalty is lost at 0; gains never total
more than 1.0; base progress stays within its allowance; a policy that does not complete
its task stays at or under the ceiling of the tables (0.45 / 0.70 / 0.50, under the
issue's 0.45 / 0.70 / 0.55); collateral damage or a missing intended write means less
than 1.0; and the rewards hold the intended writes exactly when the world has them.
Played on the canonical tasks and on seeded variants of every family.
"""

from __future__ import annotations

import itertools
import random

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servicebench_adversary import (
    Episode,
    Knowledge,
    act,
    audit,
    best_without_completing,
    refund,
    seen_amounts,
    spellings,
)

from servicebench_support_queue.server.servicebench.grading.reward_table import (
    REWARD_TABLE,
    non_completing_ceiling,
)
from servicebench_support_queue.server.servicebench.oracle import next_action

TASKS = ("order_status_lookup", "return_and_refund", "billing_discrepancy")
SEEDS: tuple[int | None, ...] = (None, 1, 2, 3, 4, 5, 7, 11, 12, 100003)
"""Canonical, then variants: every billing family, one to three units of the damaged item, held-out."""


def knowledge(task_id: str, seed: int | None) -> Knowledge:
    return Knowledge(Episode.start(task_id, seed).env)


# ------------------------------------------------------------------ random and property-based


@pytest.mark.parametrize("task_id", TASKS)
def test_random_policies_keep_every_bound(task_id):
    rng = random.Random(task_id)
    for seed in SEEDS:
        pool = knowledge(task_id, seed).pool()
        for _ in range(30):
            episode = Episode.start(task_id, seed)
            episode.play(rng.choice(pool) for _ in range(episode.env.task.max_steps))
            audit(episode)


POOLS = {
    (task_id, seed): knowledge(task_id, seed).pool() for task_id in TASKS for seed in SEEDS[:4]
}


@settings(
    max_examples=250, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    case=st.sampled_from(sorted(POOLS, key=str)),
    picks=st.lists(st.integers(0, 10**6), max_size=15),
    oracle=st.booleans(),
)
def test_any_sequence_of_calls_then_maybe_the_oracle_keeps_every_bound(case, picks, oracle):
    pool = POOLS[case]
    episode = Episode.start(*case).play(pool[pick % len(pool)] for pick in picks)
    if oracle:
        episode.finish_with_oracle()
    audit(episode)


# ------------------------------------------------------------------ adversarial search


@pytest.mark.parametrize("seed", (None, 2, 4, 100003))
@pytest.mark.parametrize("task_id", TASKS)
def test_the_strongest_search_cannot_pass_the_ceiling_without_completing(task_id, seed):
    best = best_without_completing(Episode.start(task_id, seed))
    audit(best)
    assert not best.env.state.task_completed
    assert best.score == pytest.approx(non_completing_ceiling(task_id))  # reached, and never passed


# ------------------------------------------------------------------ the farms of the issue


@pytest.mark.parametrize(
    "seed", (None,) + tuple(range(1, 21))
)  # the measurement: 21 of 21 farmed 1.0
@pytest.mark.parametrize("task_id", TASKS)
def test_reading_the_same_records_under_other_spellings_is_not_progress(task_id, seed):
    facts = knowledge(task_id, seed)
    episode = Episode.start(task_id, seed).play(facts.reads())
    audit(episode)
    signals = episode.signals()
    assert signals.count("base_progress") <= 1 and not episode.env.state.task_completed
    assert episode.score <= non_completing_ceiling(task_id)
    respelled = Episode.start(task_id, seed).play(
        [act("user", "/users/lookup", user_id=text) for text in spellings(facts.spec.customer_id)]
        + [act("user", "/users/lookup", email=text) for text in spellings(facts.customer["email"])]
    )
    again = [o.info["reward_signals"] for o in respelled.observations[2:]]
    assert len(again) >= 7 and again == [["duplicate_call"]] * len(again)


@pytest.mark.parametrize("seed", SEEDS)
def test_re_sending_the_case_note_with_new_wording_pays_once(seed):
    facts = knowledge("billing_discrepancy", seed)
    episode = Episode.start("billing_discrepancy", seed)
    episode.play(
        facts.notes()
        + [
            act(
                "user",
                "/users/update",
                "POST",
                user_id=facts.spec.customer_id,
                updates={"notes": f"version {n}"},
            )
            for n in range(6)
        ]
    )
    audit(episode)
    signals = [o.info["reward_signals"] for o in episode.observations[1:]]
    assert signals[0] == ["base_progress"] and all(s == ["duplicate_call"] for s in signals[1:])
    assert episode.score == 0.0
    assert episode.env.state.penalty_balance == pytest.approx(0.10 * (len(signals) - 1) - 0.05)


def sweep(task_id: str, seed: int | None, amounts_of) -> Episode:
    """The oracle's reads, then refunds of every amount `amounts_of(episode)` lists, then the status."""
    episode = Episode.start(task_id, seed)
    while (upcoming := next_action(episode.observations)) is not None and upcoming.method == "GET":
        episode.step(upcoming)
    order_id = knowledge(task_id, seed).spec.order_id
    for cents in amounts_of(episode):
        if episode.done:
            break
        episode.step(refund(order_id, cents, "sweep"))
    if task_id == "return_and_refund" and not episode.done:
        episode.step(
            act("order", "/orders/update-status", "POST", order_id=order_id, new_status="returned")
        )
    return episode


def grid_amounts(episode: Episode) -> list[int]:
    facts = Knowledge(episode.env)
    charged = round(facts.order["total_charged"] * 100)
    return [charged * step // 20 for step in range(1, 21)]


@pytest.mark.parametrize(
    "amounts_of", [seen_amounts, grid_amounts, lambda e: Knowledge(e.env).amounts()]
)
@pytest.mark.parametrize("task_id", ["return_and_refund", "billing_discrepancy"])
def test_refund_sweeps_stay_well_below_the_optimum(task_id, amounts_of):
    wrong = -REWARD_TABLE[task_id]["wrong_refund_amount"]
    precision = REWARD_TABLE[task_id].get("precision_no_wrong_refund", 0.0)
    scores = []
    for seed in SEEDS:
        episode = sweep(task_id, seed, amounts_of)
        audit(episode)
        misses = episode.signals().count("wrong_refund_amount")
        if misses:  # a sweep that missed first pays for every miss, and the clean-refund bonus
            assert episode.score <= max(0.0, 1.0 - misses * wrong - precision) + 1e-9
        scores.append(episode.score)
    assert sum(scores) / len(scores) <= 0.5, scores  # measured: 0.43 at most (task 2, numbers seen)


# ------------------------------------------------------------------ damage, then the right thing


@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("seed", (None, 3, 12))
@pytest.mark.parametrize("task_id", TASKS)
def test_destructive_writes_first_always_cost_their_penalties(task_id, seed, count):
    destructive = knowledge(task_id, seed).destructive()
    for damage in itertools.combinations(destructive[:6], count):
        episode = Episode.start(task_id, seed).play(damage).finish_with_oracle()
        audit(episode)
        state = episode.env.state
        penalties = -sum(min(0.0, REWARD_TABLE[task_id][name]) for name in episode.signals())
        assert state.task_completed and penalties >= 0.05 * count
        assert episode.score <= 1.0 - penalties + 1e-9 and episode.score < 1.0
        assert state.outcome.collateral_damage and not state.outcome.end_state_matches


@pytest.mark.parametrize("seed", (None, 1, 2))
def test_six_destructive_writes_cost_at_least_six_penalties(seed):
    """The issue's case: six of them cost 0.10 in all, where the table implies at least 0.30."""
    facts = knowledge("billing_discrepancy", seed)
    episode = (
        Episode.start("billing_discrepancy", seed)
        .play(facts.destructive()[:6])
        .finish_with_oracle()
    )
    audit(episode)
    state = episode.env.state
    assert all(record.signals == ["irrelevant_endpoint"] for record in state.call_history[:6])
    touched = {field for action in facts.destructive()[:6] for field in fields_written(action)}
    assert state.task_completed
    assert {(c.table, c.key, c.field) for c in state.outcome.collateral_damage} == touched
    assert episode.score <= 1.0 - 0.30 - 0.10 + 1e-9  # and the efficiency bonus is gone


def fields_written(action) -> list[tuple[str, str, str]]:
    """The (table, key, field) a successful destructive write changes."""
    params = action.params
    return {
        "/inventory/update-stock": [("products", params.get("sku"), "stock")],
        "/users/update": [
            ("users", params.get("user_id"), name) for name in params.get("updates", {})
        ],
        "/orders/update-status": [("orders", params.get("order_id"), "status")],
        "/orders/process-refund": [("orders", params.get("order_id"), "refunds")],
    }[action.endpoint]


@pytest.mark.parametrize("seed", SEEDS)
def test_hijacking_the_customer_record_then_solving_the_task_never_scores_one(seed):
    facts = knowledge("billing_discrepancy", seed)
    for hijack in facts.hijacks():
        episode = Episode.start("billing_discrepancy", seed).play([hijack]).finish_with_oracle()
        audit(episode)
        state = episode.env.state
        assert state.task_completed and episode.score == pytest.approx(0.95)
        assert {change.key for change in state.outcome.collateral_damage} == {
            facts.spec.customer_id
        }


# ------------------------------------------------------------------ the optimum is exactly 1.00


def _canonical_paths(task_id: str) -> list[list]:
    """Every ordering of the canonical optimal calls that completes on its last call, with each
    call that could be its one base-progress call."""
    if task_id == "order_status_lookup":
        users = [
            act("user", "/users/lookup", email=text)
            for text in spellings("jane.doe@example.com")[:2]
        ]
        orders = [
            act("order", "/orders/lookup", order_id="ord-1005"),
            act("order", "/orders/by-user", user_id="USR-001"),
        ]
        return [[user, order] for user in users for order in orders]
    if task_id == "return_and_refund":
        bases = [
            act("user", "/users/lookup", email="Jane.Doe@example.com"),
            act("user", "/users/lookup", user_id="usr-001"),
            act("order", "/orders/by-user", user_id="USR-001"),
            act("inventory", "/inventory/lookup", sku="SKU-204"),
            act("inventory", "/inventory/price-history", sku="SKU-445"),
        ]
        core = {
            "O": act("order", "/orders/lookup", order_id="ORD-1005"),
            "I": act("inventory", "/inventory/lookup", sku="sku-445"),
            "R": refund(" ord-1005", 4999, "damaged"),
            "S": act(
                "order", "/orders/update-status", "POST", order_id="ORD-1005", new_status="Returned"
            ),
        }
        paths = []
        for base in bases:
            for order in itertools.permutations("BOIRS"):
                if (
                    order.index("R") > order.index("O")
                    and max(order.index("R"), order.index("S")) == 4
                ):
                    paths.append([base if key == "B" else core[key] for key in order])
        return paths
    bases = [
        act("user", "/users/lookup", user_id="USR-003"),
        act("order", "/orders/by-user", user_id="usr-003"),
        act(
            "user",
            "/users/update",
            "POST",
            user_id="USR-003",
            updates={"notes": "SAVE20 was added"},
        ),
        act("inventory", "/inventory/price-history", sku="SKU-555"),
    ]
    core = {
        "O": act("order", "/orders/lookup", order_id="ORD-1009"),
        "I": act("inventory", "/inventory/lookup", sku="SKU-555"),
    }
    return [
        [base if key == "B" else core[key] for key in order]
        + [refund("ORD-1009", 9900, "coupon added")]
        for base in bases
        for order in itertools.permutations("BOI")
    ]


@pytest.mark.parametrize("task_id", TASKS)
def test_every_optimal_path_sums_to_exactly_one(task_id):
    paths = _canonical_paths(task_id)
    assert len(paths) >= 4
    for path in paths:
        episode = Episode.start(task_id, None).play(path)
        audit(episode)
        assert len(episode.observations) == len(path) + 1 and episode.env.state.task_completed, path
        assert episode.score == 1.0 and sum(
            o.reward for o in episode.observations[1:]
        ) == pytest.approx(1.0)
    for seed in SEEDS:  # and the oracle's path on every variant
        episode = Episode.start(task_id, seed).finish_with_oracle()
        audit(episode)
        assert episode.score == 1.0 and episode.env.state.outcome.end_state_matches


# ------------------------------------------------------------------ the same over HTTP


def _http_episode(base: str, task_id: str, seed: int | None, actions: list) -> None:
    with httpx.Client(base_url=base, timeout=30) as http:
        body = {"task_id": task_id} | ({"seed": seed} if seed is not None else {})
        episode_id = http.post("/reset", json=body).json()["episode_id"]
        results = []
        for action in actions:
            result = http.post(
                "/step",
                json={"episode_id": episode_id, "action": action.model_dump(exclude={"metadata"})},
            ).json()
            results.append(result)
            if result["done"]:
                break
        state = http.get("/state", params={"episode_id": episode_id}).json()
    final = results[-1]["observation"]
    assert sum(r["reward"] for r in results) == pytest.approx(final["cumulative_reward"], abs=1e-9)
    assert final["cumulative_reward"] == state["cumulative_reward"]
    table = REWARD_TABLE[task_id]
    total = sum(table[name] for r in results for name in r["observation"]["info"]["reward_signals"])
    assert state["cumulative_reward"] == pytest.approx(max(0.0, total), abs=1e-9)
    assert state["penalty_balance"] == pytest.approx(max(0.0, -total), abs=1e-9)
    if results[-1]["done"]:
        assert final["info"]["outcome"] == state["outcome"]


def test_rewards_sum_to_the_state_score_over_http(live_server):
    for task_id, seed in (
        ("billing_discrepancy", None),
        ("return_and_refund", 4),
        ("billing_discrepancy", 5),
    ):
        facts = knowledge(task_id, seed)
        oracle = Episode.start(task_id, seed).finish_with_oracle()
        path = [record for record in oracle.env.state.call_history]
        optimal = [act(r.service, r.endpoint, r.method, **r.params) for r in path]
        _http_episode(live_server, task_id, seed, facts.reads()[:8])  # farm, then budget left over
        _http_episode(
            live_server, task_id, seed, facts.destructive()[:3] + facts.hijacks()[:1] + optimal
        )
        _http_episode(
            live_server,
            task_id,
            seed,
            optimal[:-1] + [refund(facts.spec.order_id, 1, "x")] + optimal[-1:],
        )
