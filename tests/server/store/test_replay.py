"""An episode is its header plus its action log: replaying any prefix of the log gives
byte-identical observations and state, in this process and in another one, and a fork
is an independent copy (what the durable stores rely on, server/store/log.py)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servicebench_support_queue.mock_services import ENDPOINT_CATALOGUE
from servicebench_support_queue.models import (
    DISPOSITIONS,
    PRIORITIES,
    QUEUES,
    ServiceBenchAction,
    SupportQueueAction,
)
from servicebench_support_queue.server.app import ENVIRONMENTS
from servicebench_support_queue.server.lifecycle.episode import EpisodeEnvironment
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.store import log
from servicebench_support_queue.server.store.log import Header, Replayer, entry_of, same_action
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.tasks.splits import SPLIT_NAMES
from servicebench_support_queue.server.transport.encoding import result_json

SEEDS = st.sampled_from([None, 0, 1, 2, 7])
IDS = st.sampled_from(["USR-001", "USR-003", "ORD-1005", "ORD-1009", "SKU-445", "SKU-9", "x"])
PARAM_VALUES = IDS | st.integers(-5, 300) | st.sampled_from([12.5, 0.01, "49.99", "delivered"])
PARAMS = st.dictionaries(
    st.sampled_from(
        ["user_id", "email", "order_id", "sku", "amount", "reason", "new_status", "adjustment"]
    ),
    PARAM_VALUES,
    max_size=3,
)
SERVICEBENCH_ACTIONS = st.builds(
    lambda endpoint, method, params: ServiceBenchAction(
        service=endpoint["service"], endpoint=endpoint["endpoint"], method=method, params=params
    ),
    st.sampled_from(list(ENDPOINT_CATALOGUE)),
    st.sampled_from(["GET", "POST", "PUT"]),
    PARAMS,
)
SUPPORT_QUEUE_ACTIONS = st.builds(
    SupportQueueAction,
    priority=st.sampled_from(PRIORITIES),
    queue=st.sampled_from(QUEUES),
    disposition=st.sampled_from(DISPOSITIONS),
    summary=st.text(max_size=60),
    response=st.sampled_from(["", "We are on it.", "Your refund of $20.00 is on its way."]),
    confidence=st.floats(0, 1),
)
SPLIT_TASKS = st.builds(  # a Task API split task: the header names its split and index
    lambda split, index: {"split": split, "index": index},
    st.sampled_from(SPLIT_NAMES),
    st.integers(0, 40),
)


def starts(env_cls: type[EpisodeEnvironment]) -> st.SearchStrategy[dict[str, Any]]:
    """How an episode of `env_cls` is reset: a task and seed, or a split and index, and (an
    environment with faults) a fault level: the header keeps it, the replay meets the same
    faults."""
    by_task = st.builds(
        lambda task_id, seed: {"task_id": task_id, "seed": seed},
        st.sampled_from([c.id for c in env_cls.tasks]),
        SEEDS,
    )
    return st.builds(
        lambda start, faults: {**start, "faults": faults},
        by_task | SPLIT_TASKS,
        st.sampled_from(env_cls.fault_levels),
    )


EPISODES = st.one_of(
    st.tuples(
        st.just(ServiceBenchEnvironment),
        starts(ServiceBenchEnvironment),
        st.lists(SERVICEBENCH_ACTIONS, max_size=16),
    ),
    st.tuples(
        st.just(SupportQueueEnvironment),
        starts(SupportQueueEnvironment),
        st.lists(SUPPORT_QUEUE_ACTIONS, max_size=12),
    ),
)


def snapshot(env: EpisodeEnvironment, observation: Any) -> tuple[bytes, bytes]:
    return result_json(observation), env.state.model_dump_json().encode()


def play(
    env_cls: type[EpisodeEnvironment], start: dict[str, Any], actions: list[Any]
) -> tuple[Header, list[str], list[tuple[bytes, bytes]]]:
    """Play live: the header, the log entries, and the snapshot after reset and each step."""
    env = env_cls()
    snapshots = [snapshot(env, env.reset(**start, episode_id="replayed"))]
    entries = []
    for action in actions:
        if env.done:
            break
        observation = env.step(action)
        entries.append(entry_of(action))
        snapshots.append(snapshot(env, observation))
    return Header.of(env), entries, snapshots


def replayed(header: Header, entries: list[str]) -> list[tuple[bytes, bytes]]:
    """The snapshot after replaying each prefix of the log, from scratch each time."""
    replayer = Replayer(ENVIRONMENTS)
    return [
        snapshot(*replayer.replay(header, [e.encode() for e in entries[:k]]))
        for k in range(len(entries) + 1)
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EPISODES)
def test_replaying_any_prefix_gives_byte_identical_observations_and_state(episode: Any) -> None:
    header, entries, live = play(*episode)
    assert replayed(header, entries) == live


@settings(max_examples=40, deadline=None)
@given(EPISODES, st.integers(0, 16))
def test_a_fork_is_an_independent_copy(episode: Any, at: int) -> None:
    env_cls, start, actions = episode
    env = env_cls()
    env.reset(**start, episode_id="forked")
    at = min(at, len(actions))
    for action in actions[:at]:
        if not env.done:
            env.step(action)
    before = env.state.model_dump_json()
    twin = env.fork()
    rest = [a for a in actions[at:]][: max(0, env.task.max_steps - env.step_count)]
    forked = [snapshot(twin, twin.step(a)) for a in rest if not twin.done]
    assert env.state.model_dump_json() == before  # stepping the fork left the original alone
    assert forked == [snapshot(env, env.step(a)) for a in rest[: len(forked)]]


def test_an_entry_is_the_action_as_sent_and_compares_by_content() -> None:
    action = ServiceBenchAction(
        service="order", endpoint="/orders/lookup", params={"b": 1, "a": [1.0, "x"]}
    )
    entry = entry_of(action)
    assert ServiceBenchAction.model_validate_json(entry) == action
    assert list(json.loads(entry)["params"]) == ["b", "a"]  # the client's order, as state shows
    swapped = ServiceBenchAction(
        service="order", endpoint="/orders/lookup", params={"a": [1.0, "x"], "b": 1}
    )
    assert same_action(entry, entry_of(swapped))
    for other in ({"b": 1, "a": [1, "x"]}, {"b": True, "a": [1.0, "x"]}, {"b": 1}):
        changed = ServiceBenchAction(service="order", endpoint="/orders/lookup", params=other)
        assert not same_action(entry, entry_of(changed))


REPLAY_ELSEWHERE = """
import hashlib, json, sys
from servicebench_support_queue.server.app import ENVIRONMENTS
from servicebench_support_queue.server.transport.encoding import result_json
from servicebench_support_queue.server.store.log import Header, Replayer
replayer = Replayer(ENVIRONMENTS)
for header, entries in json.load(sys.stdin):
    header = Header(**header)
    for k in range(len(entries) + 1):
        env, observation = replayer.replay(header, [e.encode() for e in entries[:k]])
        both = result_json(observation) + env.state.model_dump_json().encode()
        print(hashlib.sha256(both).hexdigest())
"""


def test_another_process_replays_a_log_to_the_same_bytes() -> None:
    logs, expected = [], []
    rng_actions = [
        (ServiceBenchEnvironment, {"task_id": "return_and_refund", "seed": 7}, SERVICEBENCH_SAMPLE),
        (
            SupportQueueEnvironment,
            {"task_id": "hard_exec_escalations", "seed": 2},
            SUPPORT_QUEUE_SAMPLE,
        ),
        (ServiceBenchEnvironment, {"task_id": "billing_discrepancy"}, SERVICEBENCH_SAMPLE),
        (ServiceBenchEnvironment, {"split": "test_families", "index": 3}, SERVICEBENCH_SAMPLE),
        (
            ServiceBenchEnvironment,
            {"task_id": "cancel_request", "seed": 3, "faults": "heavy"},
            SERVICEBENCH_SAMPLE,
        ),
        (
            ServiceBenchEnvironment,
            {"split": "train", "index": 4, "faults": "light"},
            SERVICEBENCH_SAMPLE,
        ),
        (SupportQueueEnvironment, {"split": "validation", "index": 5}, SUPPORT_QUEUE_SAMPLE),
    ]
    for env_cls, start, actions in rng_actions:
        header, entries, live = play(env_cls, start, list(actions))
        logs.append((header.__dict__, entries))
        expected += [hashlib.sha256(result + state).hexdigest() for result, state in live]
    done = subprocess.run(
        [sys.executable, "-c", REPLAY_ELSEWHERE],
        input=json.dumps(logs),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == expected


SERVICEBENCH_SAMPLE = [
    ServiceBenchAction(service="user", endpoint="/users/lookup", params={"email": "x@y.z"}),
    ServiceBenchAction(service="user", endpoint="/users/list", params={"page": 2}),
    ServiceBenchAction(service="order", endpoint="/orders/lookup", params={"order_id": "ORD-1005"}),
    ServiceBenchAction(
        service="order",
        endpoint="/orders/process-refund",
        method="POST",
        params={"order_id": "ORD-1005", "amount": "20.00", "reason": "damaged"},
    ),
    ServiceBenchAction(service="billing", endpoint="/invoices"),
]
SUPPORT_QUEUE_SAMPLE = [
    SupportQueueAction(
        priority=p, queue=q, disposition=d, summary=f"note {i}", response="On it.", confidence=0.3
    )
    for i, (p, q, d) in enumerate(zip(PRIORITIES, QUEUES, DISPOSITIONS, strict=False))
]


def test_the_replay_version_is_the_code_at_startup_not_at_the_first_step(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """Workers started together must agree however late each plays its first episode:
    files changed on disk after startup (running in no worker) change no header."""
    import sqlite3

    from fastapi.testclient import TestClient

    from servicebench_support_queue.server.app import create_app
    from servicebench_support_queue.server.settings import Settings
    from servicebench_support_queue.server.store import log

    database = tmp_path / "episodes.db"
    log.replay_version.cache_clear()
    at_startup = log.code_digest()[:16]
    try:
        with TestClient(create_app(Settings(episode_store=f"sqlite://{database}"))) as client:
            monkeypatch.setattr(log, "code_digest", lambda: "0" * 64)  # files change on disk
            assert client.post("/reset", json={}).status_code == 200
        with sqlite3.connect(database) as db:
            (header,) = db.execute("SELECT header FROM episodes").fetchone()
        assert json.loads(header)["version"].endswith("+" + at_startup)
    finally:
        monkeypatch.undo()
        log.replay_version.cache_clear()


def test_an_episode_of_a_named_family_replays_into_the_same_family() -> None:
    env = ServiceBenchEnvironment()
    first = env.reset(task_id="billing_discrepancy", seed=5, family="stale_price", episode_id="f")
    header = Header.of(env)
    assert header.family == "stale_price" and '"family":"stale_price"' in header.to_json()
    again, observation = Replayer(ENVIRONMENTS).replay(Header.from_json(header.to_json(), "f"), [])
    assert result_json(observation) == result_json(first) and again.family == "stale_price"
    plain = ServiceBenchEnvironment()
    plain.reset(task_id="billing_discrepancy", seed=5, episode_id="p")
    assert "family" not in Header.of(plain).to_json(), "a header without a family reads as before"


def test_every_replay_neutral_path_exists_and_the_environments_are_versioned() -> None:
    """A stale entry (a module since moved) would silently version what it meant to exempt;
    the environments, their services and the data must always count."""
    root = log.PACKAGE_ROOT
    missing = [name for name in log.REPLAY_NEUTRAL if not (root / name).exists()]
    assert not missing, missing
    versioned = {path.relative_to(root).as_posix() for path in log._replay_files(root)}
    for needed in (
        "server/servicebench/environment.py",
        "server/servicebench/grading/rewards.py",
        "server/support_queue/grader.py",
        "mock_services/state.py",
        "data/servicebench.json",
    ):
        assert needed in versioned, needed
    assert not any(path.startswith(("server/web/", "server/mcp/")) for path in versioned)
