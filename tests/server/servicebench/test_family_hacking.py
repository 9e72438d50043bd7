"""Reward hacking against the request families: today's farming strategies on every new family.

The adversary of tests/servicebench_adversary.py knows each variant's world and answer;
its pool holds every read, every spelling, every write of the six services on the
task's records (right and wrong cases, reships, addresses, reversals, restocks) and the
destructive writes. Every episode passes `audit` (rewards sum to the score, no penalty
lost, gains at most 1.0, a policy that does not complete stays under its table's
ceiling, damage means less than 1.0), on every request family.
"""

from __future__ import annotations

import random

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
)

from servicebench_support_queue.server.servicebench.catalogue import FAMILIES
from servicebench_support_queue.server.servicebench.grading.reward_table import (
    REWARD_TABLE,
    non_completing_ceiling,
)
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.servicebench.tasks import SEED_TASK_IDS

REQUEST = [info for info in FAMILIES if info.task_id not in SEED_TASK_IDS]
SEEDS = (3, 100_002)
ids = {"ids": lambda info: info.name}


def start(info, seed: int) -> Episode:
    return Episode.start(info.task_id, seed, info.name)


@pytest.mark.parametrize("info", REQUEST, **ids)
def test_random_policies_keep_every_bound(info):
    rng = random.Random(info.name)
    for seed in SEEDS:
        pool = Knowledge(start(info, seed).env).pool()
        for _ in range(15):
            episode = start(info, seed)
            episode.play(rng.choice(pool) for _ in range(episode.env.task.max_steps))
            audit(episode)
            if rng.random() < 0.5:
                audit(start(info, seed).play(rng.sample(pool, 3)).finish_with_oracle())


@pytest.mark.parametrize("info", REQUEST, **ids)
def test_the_strongest_search_cannot_pass_the_ceiling_without_completing(info):
    best = best_without_completing(start(info, SEEDS[0]), width=3)
    audit(best)
    assert not best.env.state.task_completed
    assert best.score <= non_completing_ceiling(info.name) + 1e-9 <= 0.70 + 1e-9


@pytest.mark.parametrize("info", REQUEST, **ids)
def test_destructive_or_forbidden_writes_first_always_cost_their_penalties(info):
    for seed in SEEDS:
        facts = Knowledge(start(info, seed).env)
        for damage in facts.destructive()[:3] + facts.hijacks()[:2]:
            episode = start(info, seed).play([damage]).finish_with_oracle()
            audit(episode)
            outcome = episode.outcome
            table = REWARD_TABLE[info.name]
            penalties = -sum(min(0.0, table[name]) for name in episode.signals())
            if outcome.collateral_damage:
                assert penalties >= 0.20 and episode.score <= 1.0 - penalties + 1e-9
                assert not outcome.end_state_matches and episode.score < 0.9


@pytest.mark.parametrize("info", REQUEST, **ids)
def test_the_obvious_write_before_the_oracle_still_loses(info):
    """Refund in full and mark returned, then let the oracle finish: the damage is done."""
    for seed in SEEDS:
        facts = Knowledge(start(info, seed).env)
        order = facts.order
        balance = round(order["total_charged"] * 100) - sum(
            round(r["amount"] * 100) for r in order["refunds"]
        )
        obvious = [
            action for action in facts.writes_on_task() if action.params.get("reason") == "all"
        ]
        episode = start(info, seed).play(obvious).finish_with_oracle()
        audit(episode)
        assert balance > 0 and episode.score < 0.9, (info.name, seed, episode.signals())


@pytest.mark.parametrize("info", REQUEST, **ids)
def test_the_oracles_path_sums_to_exactly_one_on_every_seed(info):
    for seed in (*SEEDS, 11, 100_007):
        episode = start(info, seed).finish_with_oracle()
        audit(episode)
        assert episode.score == 1.0 and sum(o.reward for o in episode.observations[1:]) == 1.0
        assert episode.env.state.outcome.end_state_matches


@pytest.mark.parametrize("info", REQUEST, **ids)
def test_reading_the_same_records_under_other_spellings_is_not_progress(info):
    facts = Knowledge(start(info, SEEDS[0]).env)
    episode = start(info, SEEDS[0]).play(facts.reads())
    audit(episode)
    assert not episode.env.state.task_completed
    assert episode.score <= non_completing_ceiling(info.name) + 1e-9
    again = [o.info["reward_signals"] for o in episode.observations[1:]]
    assert sum(signals == ["duplicate_call"] for signals in again) >= 5


def _sweep(info, seed: int, writes) -> Episode:
    """The oracle's reads, then every write `writes(episode)` lists, in turn."""
    episode = start(info, seed)
    while (upcoming := next_action(episode.observations)) is not None and upcoming.method == "GET":
        episode.step(upcoming)
    return episode.play(writes(episode))


def _cases(episode: Episode) -> list:
    """A case of every category, with no amount and then every amount seen, in order."""
    oid = Knowledge(episode.env).spec.order_id
    return [
        act(
            "case",
            "/cases/open",
            "POST",
            order_id=oid,
            category=category,
            summary="sweep",
            **({"amount": cents / 100} if cents else {}),
        )  # fmt: skip
        for category in ("escalation", "declined", "verification_failed")
        for cents in [None, *seen_amounts(episode)]
    ]


SWEEPS = {
    "refund every amount seen": lambda episode: [
        refund(Knowledge(episode.env).spec.order_id, cents) for cents in seen_amounts(episode)
    ],
    "open every case": _cases,
    "every write the adversary knows": lambda episode: (
        Knowledge(episode.env).writes_on_task() + Knowledge(episode.env).request_writes()
    ),
}


@pytest.mark.parametrize("sweep", SWEEPS, ids=str)
@pytest.mark.parametrize("info", REQUEST, **ids)
def test_sweeps_of_writes_after_the_right_reads_pay_for_every_miss(info, sweep):
    """Whatever a sweep finally hits, each miss before it cost its full penalty and the
    policy bonus: a sweep stays well below the optimum on average."""
    table, scores = REWARD_TABLE[info.name], []
    for seed in SEEDS:
        episode = _sweep(info, seed, SWEEPS[sweep])
        audit(episode)
        scores.append(episode.score)
        misses = [s for s in episode.signals() if s in ("unintended_write", "wrong_amount")]
        if misses:
            penalty = -sum(table[name] for name in misses) + table["policy_followed"]
            assert episode.score <= max(0.0, 1.0 - penalty) + 1e-9
    assert sum(scores) / len(scores) <= 0.6, scores


POOLS = {(info.name, seed): None for info in REQUEST for seed in SEEDS[:1]}


@settings(
    max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    family=st.sampled_from(sorted(POOLS)),
    picks=st.lists(st.integers(0, 10**6), max_size=10),
    oracle=st.booleans(),
)
def test_any_sequence_of_calls_then_maybe_the_oracle_keeps_every_bound(family, picks, oracle):
    info = next(i for i in REQUEST if i.name == family[0])
    pool = POOLS[family] or Knowledge(start(info, family[1]).env).pool()
    POOLS[family] = pool
    episode = start(info, family[1]).play(pool[pick % len(pool)] for pick in picks)
    if oracle:
        episode.finish_with_oracle()
    audit(episode)
