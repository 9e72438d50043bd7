"""The Task API's splits (server/tasks/splits.py) for both environments, in process: disjoint and
stable splits, the interleaving index, slice semantics, bounds, specs without answers, and
reset by split and index playing exactly the family and seed its spec names."""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import combinations
from typing import Any

import pytest

from servicebench_support_queue.server.lifecycle.episode import EpisodeEnvironment
from servicebench_support_queue.server.servicebench import split_families as sb_split_families
from servicebench_support_queue.server.servicebench.catalogue import FamilyInfo
from servicebench_support_queue.server.servicebench.catalogue import (
    servicebench_families as servicebench_registry,
)
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.split_families import (
    registry_families as servicebench_families,
)
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.scenarios import FAMILIES as SQ_FAMILIES
from servicebench_support_queue.server.tasks import splits as splits_module
from servicebench_support_queue.server.tasks.seeds import HELD_OUT, SEED_RANGES, TRAIN, VALIDATION
from servicebench_support_queue.server.tasks.splits import (
    MAX_RANGE,
    SPLIT_NAMES,
    Catalogue,
    SplitRequestError,
    TaskIndexError,
    TaskRangeError,
    UnknownSplitError,
)

ENVS: tuple[type[EpisodeEnvironment], ...] = (ServiceBenchEnvironment, SupportQueueEnvironment)
SPEC_KEYS = {
    "id",
    "index",
    "split",
    "env",
    "family",
    "task_id",
    "title",
    "difficulty",
    "max_steps",
    "seed",
}


@pytest.fixture(params=ENVS, ids=[env.env_name for env in ENVS])
def env_cls(request: pytest.FixtureRequest) -> type[EpisodeEnvironment]:
    return request.param


def test_the_four_splits_and_their_seed_ranges_never_overlap() -> None:
    assert SPLIT_NAMES == ("train", "validation", "test", "test_families")
    for (_, a), (_, b) in combinations(SEED_RANGES.items(), 2):
        assert not set(a) & set(b)
    assert (range(1, 100_000), range(110_000, 120_000), HELD_OUT) == (TRAIN, VALIDATION, HELD_OUT)
    assert 0 not in TRAIN  # the canonical task is in no split


def test_families_are_split_into_train_and_held_out_and_every_family_is_served(
    env_cls: type[EpisodeEnvironment],
) -> None:
    catalogue = env_cls.catalogue()
    train = catalogue.splits["train"].families
    held_out = catalogue.splits["test_families"].families
    assert train and held_out and not {f.name for f in train} & {f.name for f in held_out}
    assert {f.name for f in (*train, *held_out)} == {f.name for f in env_cls.task_families()}
    for name in ("validation", "test"):
        assert catalogue.splits[name].families == train
    assert catalogue.splits["test"].seeds == catalogue.splits["test_families"].seeds == HELD_OUT
    assert catalogue.splits["validation"].seeds == VALIDATION
    assert catalogue.splits["train"].seeds == TRAIN


def test_servicebench_and_support_queue_families_come_from_their_registries() -> None:
    registry = servicebench_registry()
    families = ServiceBenchEnvironment.task_families()
    assert [f.name for f in families] == [info.name for info in registry]
    assert [(f.card.id, f.held_out, f.workflow) for f in families] == [
        (info.task_id, info.held_out, info.workflow) for info in registry
    ]
    assert {f.card.id for f in families} == {card.id for card in ServiceBenchEnvironment.tasks}
    held_out = ServiceBenchEnvironment.catalogue().splits["test_families"].families
    assert {f.name for f in held_out} == {info.name for info in registry if info.held_out}
    assert [f.name for f in SupportQueueEnvironment.task_families()] == list(SQ_FAMILIES)


def test_a_family_added_to_the_registry_is_in_the_training_splits_with_nothing_else_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    late = FamilyInfo("late_refund", "return_and_refund", "refund", "medium", False, "Late")
    unseen = replace(late, name="unseen_refund", held_out=True)
    registry = (*servicebench_registry(), late, unseen)
    monkeypatch.setattr(sb_split_families, "servicebench_families", lambda: registry)
    catalogue = Catalogue("servicebench", servicebench_families())
    for name in ("train", "validation", "test"):
        names = [f.name for f in catalogue.splits[name].families]
        assert "late_refund" in names and "unseen_refund" not in names
    held_out = [f.name for f in catalogue.splits["test_families"].families]
    assert "unseen_refund" in held_out and "late_refund" not in held_out


def test_a_held_out_name_that_is_not_a_family_stops_the_catalogue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = dict(splits_module.HELD_OUT_FAMILIES)
    table["servicebench"] = frozenset({"stale_price", "stale_prise"})  # a typo in the data file
    monkeypatch.setattr(splits_module, "HELD_OUT_FAMILIES", table)
    with pytest.raises(ValueError, match="stale_prise"):
        Catalogue("servicebench", servicebench_families())
    table["servicebench"] = frozenset(f.name for f in servicebench_families())
    with pytest.raises(ValueError, match="train would be empty"):
        Catalogue("servicebench", servicebench_families())


def test_counts_are_families_times_seeds_and_the_descriptors_say_so(
    env_cls: type[EpisodeEnvironment],
) -> None:
    env = env_cls()
    descriptors = env.list_splits()
    assert [d["name"] for d in descriptors] == list(SPLIT_NAMES)
    for d in descriptors:
        split = env.catalogue().splits[d["name"]]
        assert d["num_tasks"] == len(split.families) * len(split.seeds) == env.num_tasks(d["name"])
        assert d["families"] == [f.name for f in split.families]
        assert d["seeds"] == [split.seeds[0], split.seeds[-1]]
        assert d["type"] == ("test" if d["name"] == "test_families" else d["name"])


def test_indices_interleave_families_so_every_prefix_covers_them(
    env_cls: type[EpisodeEnvironment],
) -> None:
    env = env_cls()
    for name, split in env.catalogue().splits.items():
        m = len(split.families)
        first = env.get_task_range(name, 0, m)
        assert [t["family"] for t in first] == [f.name for f in split.families]
        assert {t["seed"] for t in first} == {split.seeds[0]}
        for index in (0, 1, m - 1, m, 7 * m + 3, env.num_tasks(name) - 1):
            task = env.get_task(name, index)
            assert task["family"] == split.families[index % m].name
            assert task["seed"] == split.seeds[index // m]
            assert task == env.get_task_range(name, index, index + 1)[0]
            assert task["id"] == f"{task['family']}-{task['seed']}" and task["index"] == index


def test_no_task_is_in_two_splits(env_cls: type[EpisodeEnvironment]) -> None:
    """(family, seed) pairs: the seed ranges are disjoint and test_families' families are not
    train's, so it suffices that no two splits share both a family and a seed."""
    splits = env_cls.catalogue().splits
    for a, b in combinations(splits.values(), 2):
        shared_families = {f.name for f in a.families} & {f.name for f in b.families}
        assert not shared_families or not set(a.seeds) & set(b.seeds), (a.name, b.name)


def test_task_range_follows_python_slices(env_cls: type[EpisodeEnvironment]) -> None:
    env = env_cls()
    n = env.num_tasks("test")
    whole = range(n)
    for start, stop in [
        (None, 5),
        (0, 0),
        (5, 2),
        (-3, None),
        (-5, -2),
        (n - 2, n + 10**6),
        (-(10**12), 3),
        (n + 5, None),
        (10**18, 10**18 + 5),
        (n - MAX_RANGE, None),
    ]:
        got = [t["index"] for t in env.get_task_range("test", start, stop)]
        assert got == list(whole[start:stop]), (start, stop)


@pytest.mark.parametrize(
    ("start", "stop"), [(None, None), (0, MAX_RANGE + 1), (-(MAX_RANGE + 1), None)]
)
def test_a_range_longer_than_one_answer_is_a_400(start: Any, stop: Any) -> None:
    with pytest.raises(TaskRangeError, match="at most 1000") as caught:
        ServiceBenchEnvironment().get_task_range("test", start, stop)
    assert caught.value.status == 400


@pytest.mark.parametrize(
    "index", [-1, ServiceBenchEnvironment().num_tasks("test"), 2**62, 10**40, "3", 3.0, True, None]
)
def test_an_index_outside_the_split_is_an_index_error(index: Any) -> None:
    with pytest.raises(TaskIndexError) as caught:
        ServiceBenchEnvironment().get_task("test", index)
    assert isinstance(caught.value, IndexError) and caught.value.status == 400


@pytest.mark.parametrize("split", ["", "TRAIN", "held_out", None, 3, ["train"]])
def test_an_unknown_split_is_a_404_naming_the_splits(split: Any) -> None:
    with pytest.raises(UnknownSplitError, match="train, validation, test, test_families") as caught:
        ServiceBenchEnvironment().num_tasks(split)
    assert caught.value.status == 404


def test_list_tasks_is_a_bounded_preview(env_cls: type[EpisodeEnvironment]) -> None:
    env = env_cls()
    preview = env.list_tasks("train")
    assert len(preview) == splits_module.LIST_PREVIEW < env.num_tasks("train")
    assert preview == env.get_task_range("train", 0, splits_module.LIST_PREVIEW)


# ------------------------------------------------------------------ specs and resets


def answers_of(env: EpisodeEnvironment) -> list[str]:
    """What solves the episode just reset, as JSON values or texts that must not be in a spec:
    ServiceBench's refund amount, target status and records; Support Queue's gold labels,
    ticket ids and gold texts."""
    if isinstance(env, ServiceBenchEnvironment):
        spec = env._spec
        assert spec is not None
        values = [spec.order_id, spec.customer_id, spec.target_status, spec.refund_amount]
        amount = [f"{spec.refund_amount:.2f}"] if spec.refund_amount is not None else []
        return [json.dumps(v) for v in values if v is not None] + amount
    assert isinstance(env, SupportQueueEnvironment) and env._task is not None
    return [
        text
        for ticket in env._task.tickets
        for text in (
            *(json.dumps(label) for label in (ticket.gold.priority, ticket.gold.queue)),
            json.dumps(ticket.gold.disposition),
            ticket.ticket_id,
            ticket.gold.rationale,
            ticket.gold_summary,
            ticket.gold_response,
        )
    ]


def test_reset_by_split_and_index_plays_the_spec_and_the_spec_holds_no_answer(
    env_cls: type[EpisodeEnvironment],
) -> None:
    for split in SPLIT_NAMES:
        env = env_cls()
        for index in range(len(env.catalogue().splits[split].families) + 1):
            spec = env.get_task(split, index)
            assert set(spec) <= SPEC_KEYS | {"workflow"} and set(spec) >= SPEC_KEYS
            env.reset(split=split, index=index)
            state = env.state
            assert (state.split, state.index, state.seed) == (split, index, spec["seed"])
            assert env.task is not None and env.task.id == spec["task_id"]
            assert spec["difficulty"] == env.catalogue().families[spec["family"]].difficulty
            if isinstance(env, ServiceBenchEnvironment):
                variant = env.family_variants.get(spec["family"], spec["seed"])
                assert variant.family == spec["family"] and env._spec is variant.spec
            else:
                assert isinstance(env, SupportQueueEnvironment) and env._variant is not None
                assert [f.family for f in env._variant.factors] == [spec["family"]]
            text = json.dumps(spec)
            for answer in answers_of(env):
                assert answer not in text, (spec, answer)


def test_the_same_split_and_index_is_the_same_episode(env_cls: type[EpisodeEnvironment]) -> None:
    first, second = env_cls(), env_cls()
    one = first.reset(split="test_families", index=5, episode_id="same")
    env_cls.family_variants._cache.clear()  # drawn and proven afresh: still the same
    two = second.reset(split="test_families", index=5, episode_id="same")
    assert one.model_dump_json() == two.model_dump_json()
    assert first.state.model_dump_json() == second.state.model_dump_json()
    other = env_cls().reset(split="test_families", index=6, episode_id="same")
    assert other.model_dump_json() != one.model_dump_json()


def test_a_seed_without_an_index_picks_one_and_neither_picks_at_random() -> None:
    env = ServiceBenchEnvironment()
    n = env.num_tasks("validation")
    env.reset(split="validation", seed=n + 7)
    assert (env.split, env.index) == ("validation", 7)
    env.reset(split="validation")
    assert env.split == "validation" and env.index is not None and 0 <= env.index < n
    assert env.seed == env.get_task("validation", env.index)["seed"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"index": 3},
        {"split": "test", "index": 3, "seed": 5},
        {"split": "test", "index": 3, "task_id": "order_status_lookup"},
        {"split": "test", "task_id": "order_status_lookup"},
    ],
)
def test_a_reset_that_names_a_split_task_and_something_else_is_refused(
    kwargs: dict[str, Any],
) -> None:
    env = ServiceBenchEnvironment()
    with pytest.raises(SplitRequestError):
        env.reset(**kwargs)
    assert env.task is None  # nothing started


def test_every_family_plays_on_its_first_seeds_of_every_split(
    env_cls: type[EpisodeEnvironment],
) -> None:
    """Every family's variants draw and prove on the first seeds of each split (the proof
    runs as each is built: the ServiceBench oracle earns 1.0, Support Queue's gold action
    earns 1.0 and its labels follow the rules)."""
    env = env_cls()
    for split in SPLIT_NAMES:
        m = len(env.catalogue().splits[split].families)
        for index in range(3 * m):
            env.reset(split=split, index=index)
            assert env.task is not None
