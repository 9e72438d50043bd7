"""The live-episode store: lookup, isolation by env, expiry, and making room at the cap."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from servicebench_support_queue.server.sessions import (
    EpisodeIdTakenError,
    EpisodeNotFoundError,
    EpisodeStore,
)


@dataclass
class Episode:
    """Just what the store reads of an environment."""

    episode_id: str
    env_name: str = "servicebench"
    done: bool = False


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_store(max_live: int = 3, ttl: float = 60.0) -> tuple[EpisodeStore, Clock]:
    clock = Clock()
    return EpisodeStore(max_live, ttl, clock=clock), clock


def test_get_returns_the_added_episode_and_refuses_other_envs() -> None:
    store, _ = make_store()
    episode = Episode("a")
    store.add(episode)
    assert store.get("a", ("servicebench",)) is episode
    with pytest.raises(EpisodeNotFoundError):
        store.get("a", ("support_queue",))
    with pytest.raises(EpisodeNotFoundError):
        store.get("nope", ("servicebench",))


def test_idle_episode_expires_after_ttl_and_use_keeps_it_alive() -> None:
    store, clock = make_store(ttl=60)
    store.add(Episode("a"))
    store.add(Episode("b"))
    clock.now += 50
    store.get("a", ("servicebench",))
    clock.now += 20  # b idle 70s, a idle 20s
    with pytest.raises(EpisodeNotFoundError, match="expired"):
        store.get("b", ("servicebench",))
    assert store.get("a", ("servicebench",)).episode_id == "a"
    assert store.expired == 1


def test_at_cap_finished_episodes_go_first_then_longest_idle() -> None:
    store, clock = make_store(max_live=3)
    for name in "abc":
        store.add(Episode(name))
        clock.now += 1
    finished = store.get("b", ("servicebench",))
    finished.done = True
    store.note_progress(finished)
    store.add(Episode("d"))  # drops b (finished) although a is idler
    assert "b" not in store and {"a", "c", "d"} <= {e for e in "acd" if e in store}
    store.get("a", ("servicebench",))  # a is now the most recently used
    store.add(Episode("e"))  # drops c, the longest idle
    assert "c" not in store and "a" in store and len(store) == 3
    assert store.evicted == 2
    with pytest.raises(EpisodeNotFoundError):
        store.get("c", ("servicebench",))


def test_latest_tracks_the_most_recent_reset_per_env_and_overall() -> None:
    store, _ = make_store()
    store.add(Episode("a", "servicebench"))
    store.add(Episode("b", "support_queue"))
    assert store.latest_id(None) == "b"
    assert store.latest_id("servicebench") == "a"
    empty, _ = make_store()
    with pytest.raises(EpisodeNotFoundError, match="reset"):
        empty.latest_id(None)


def test_an_id_is_never_reused_while_held_and_is_free_again_once_gone() -> None:
    store, clock = make_store(max_live=3, ttl=60)
    live, finished = Episode("live"), Episode("finished", done=True)
    store.add(live)
    store.add(finished)
    for held in (live, finished):  # a finished episode is held too: its owner may still read it
        with pytest.raises(EpisodeIdTakenError, match="still held"):
            store.ensure_free(held.episode_id)
        with pytest.raises(EpisodeIdTakenError):
            store.add(Episode(held.episode_id))
        assert store.get(held.episode_id, ("servicebench",)) is held
    store.ensure_free("new")
    clock.now += 61  # expired: the ids are free again
    store.ensure_free("live")
    replacement = Episode("live")
    store.add(replacement)
    assert store.get("live", ("servicebench",)) is replacement
