"""server/tasks/variants.py: the one variant pipeline of both environments (draw, prove, cache)."""

from __future__ import annotations

import asyncio
import json
import secrets
import threading

import httpx
import pytest
from fastapi.testclient import TestClient

from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.lifecycle.episode import EpisodeEnvironment
from servicebench_support_queue.server.servicebench import proof as servicebench_proof
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.variants import (
    build_variant as draw_servicebench,
)
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.support_queue import variants as support_queue_variants
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.tasks.variants import (
    MAX_ATTEMPTS,
    Draw,
    VariantCache,
    VariantRejected,
    VariantUnavailable,
    require,
)

ENVIRONMENTS = (ServiceBenchEnvironment, SupportQueueEnvironment)
LOOKUP = {
    "service": "user",
    "endpoint": "/users/lookup",
    "params": {"email": "jane.doe@example.com"},
}


def test_a_rejection_is_not_a_value_error():
    assert not issubclass(VariantRejected, ValueError)


def test_require_names_the_draw():
    draw = Draw("some_task", 12, 3)
    require(True, draw, "fine")
    with pytest.raises(VariantRejected, match=r"^some_task seed 12 attempt 3: too easy$"):
        require(False, draw, "too easy")
    assert draw_servicebench("billing_discrepancy", 5).label.startswith(
        "billing_discrepancy seed 5 attempt 0 ("
    )


def test_rejected_draws_are_skipped_until_one_passes_and_counted():
    def draw(task_id: str, seed: int, attempt: int) -> Draw:
        if attempt < 2:
            raise VariantRejected("a dead end of the generator")
        return Draw(task_id, seed, attempt)

    def prove(drawn: Draw) -> Draw:
        require(drawn.attempt >= 3, drawn, "proof failed")
        return drawn

    cache = VariantCache(draw, prove)
    assert cache.get("t", 1) == Draw("t", 1, 3) and cache.rejections == 3
    assert cache.get("t", 1) is cache.get("t", 1) and cache.rejections == 3  # cached


@pytest.mark.parametrize(
    "bug", [ValueError("a generator bug"), KeyError("missing"), TypeError("bad")]
)
def test_any_other_exception_of_a_generator_propagates(bug: Exception):
    calls = []

    def draw(task_id: str, seed: int, attempt: int) -> Draw:
        calls.append(attempt)
        raise bug

    cache = VariantCache(draw, lambda drawn: drawn)
    with pytest.raises(type(bug)):
        cache.get("t", 1)
    assert calls == [0] and cache.rejections == 0 and len(cache) == 0


def test_any_other_exception_of_a_proof_propagates():
    def prove(drawn: Draw) -> Draw:
        raise ValueError("a proof bug")

    cache = VariantCache(lambda task_id, seed, attempt: Draw(task_id, seed, attempt), prove)
    with pytest.raises(ValueError, match="a proof bug"):
        cache.get("t", 1)
    assert cache.rejections == 0


def test_nothing_passing_gives_up_loudly():
    def prove(drawn: Draw) -> Draw:
        require(False, drawn, "never")
        return drawn

    cache = VariantCache(lambda task_id, seed, attempt: Draw(task_id, seed, attempt), prove)
    with pytest.raises(VariantUnavailable, match=f"no valid variant in {MAX_ATTEMPTS} attempts"):
        cache.get("t", 1)
    assert cache.rejections == MAX_ATTEMPTS


def test_a_cache_holds_at_least_one_variant():
    with pytest.raises(ValueError, match="capacity"):
        VariantCache(lambda *args: None, lambda drawn: drawn, capacity=0)


def test_the_oracle_raising_during_a_proof_is_a_bug_not_a_rejection(
    monkeypatch: pytest.MonkeyPatch,
):
    def broken_oracle(history):
        raise KeyError("the oracle misread a response")

    monkeypatch.setattr(servicebench_proof, "next_action", broken_oracle)
    cache = VariantCache(draw_servicebench, ServiceBenchEnvironment.prove_variant)
    with pytest.raises(KeyError, match="misread"):
        cache.get("order_status_lookup", 4)
    assert cache.rejections == 0


def test_a_support_queue_draw_with_no_diverse_draft_is_rejected_not_raised(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setattr(support_queue_variants, "MAX_DRAFTS", 0)
    with pytest.raises(VariantRejected, match="no diverse draft"):
        support_queue_variants.build_variant("easy_inbox_cleanup", 3)
    cache = VariantCache(
        support_queue_variants.build_variant, SupportQueueEnvironment.prove_variant
    )
    with pytest.raises(VariantUnavailable):
        cache.get("easy_inbox_cleanup", 3)


# ----------------------------------------------------------------------------- the environments


@pytest.mark.parametrize("env_cls", ENVIRONMENTS)
def test_each_environment_has_its_own_cache_of_the_one_kind(env_cls: type[EpisodeEnvironment]):
    assert type(env_cls.variants) is VariantCache
    assert ServiceBenchEnvironment.variants is not SupportQueueEnvironment.variants
    assert not hasattr(env_cls, "_pinned") and not hasattr(env_cls, "start_variant")


@pytest.mark.parametrize(
    "env_cls, task_id",
    [
        (ServiceBenchEnvironment, "return_and_refund"),
        (SupportQueueEnvironment, "medium_sla_defense"),
    ],
)
def test_reset_serves_the_canonical_task_or_the_seeds_proven_variant(env_cls, task_id: str):
    assert (
        env_cls.variant_for(task_id, None)
        is env_cls.variant_for(task_id, 0)
        is env_cls.canonical_variant(task_id)
    )
    assert env_cls.variant_for(task_id, 77) is env_cls.variants.get(task_id, 77)


@pytest.mark.parametrize(
    "env_cls, task_id",
    [
        (ServiceBenchEnvironment, "billing_discrepancy"),
        (SupportQueueEnvironment, "hard_exec_escalations"),
    ],
)
def test_reset_plays_a_variant_passed_to_it(env_cls, task_id: str):
    drawn = env_cls.draw_variant(task_id, 31, 5)  # a draw no seed serves: attempt 5
    pinned = env_cls.prove_variant(drawn)
    env = env_cls()
    first = env.reset(task_id=task_id, seed=31, variant=pinned, episode_id="e").model_dump_json()
    served = env_cls().reset(task_id=task_id, seed=31, episode_id="e").model_dump_json()
    again = (
        env_cls().reset(task_id=task_id, seed=31, variant=pinned, episode_id="e").model_dump_json()
    )
    assert first == again != served
    assert env.state.seed == 31


@pytest.mark.parametrize(
    "env_cls, task_id, other",
    [
        (ServiceBenchEnvironment, "billing_discrepancy", "order_status_lookup"),
        (SupportQueueEnvironment, "hard_exec_escalations", "easy_inbox_cleanup"),
    ],
)
def test_reset_refuses_a_variant_of_another_task(env_cls, task_id: str, other: str):
    variant = env_cls.variant_for(other, 5)
    with pytest.raises(ValueError, match=f"not a variant of {task_id}"):
        env_cls().reset(task_id=task_id, seed=5, variant=variant)


# ----------------------------------------------------------------- off the event loop


class HeldProof:
    """A proof that waits until released, recording the thread it ran on."""

    def __init__(self, prove) -> None:
        self.prove, self.threads = prove, []
        self.release = threading.Event()

    def __call__(self, drawn):
        self.threads.append(threading.current_thread().name)
        assert self.release.wait(30), "never released"
        return self.prove(drawn)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_a_fresh_seed_is_built_off_the_loop_which_serves_others_meanwhile(
    monkeypatch: pytest.MonkeyPatch, tmp_path, store: str
) -> None:
    """While a fresh seed's variant is being proven, the same process answers /health and
    steps another episode: the build runs on the variant thread, never on the loop."""
    url = "memory" if store == "memory" else f"sqlite://{tmp_path / 'episodes.db'}"
    app = create_app(Settings(episode_store=url))
    cache = SupportQueueEnvironment.variants
    held = HeldProof(cache._prove)
    monkeypatch.setattr(cache, "_prove", held)

    async def scenario() -> None:
        transport = httpx.ASGITransport(app=app)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://app") as client,
        ):
            other = (await client.post("/reset", json={"task_id": 1})).json()["episode_id"]
            seed = 90_000 + secrets.randbelow(9_000)
            fresh = asyncio.create_task(
                client.post("/reset", json={"task_id": "easy_inbox_cleanup", "seed": seed})
            )
            while not held.threads:
                await asyncio.sleep(0.01)
            assert (await client.get("/health")).json() == {"status": "healthy"}
            step = {"episode_id": other, "action": LOOKUP}
            assert (await client.post("/step", json=step)).status_code == 200
            assert not fresh.done(), "the fresh seed is still being proven"
            held.release.set()
            answer = await fresh
            assert answer.status_code == 200 and answer.json()["observation"]["ticket"]
            again = await client.post(
                "/reset", json={"task_id": "easy_inbox_cleanup", "seed": seed}
            )
            assert again.status_code == 200 and len(held.threads) == 1, "then it is cached"

    asyncio.run(scenario())
    assert held.threads and all(name.startswith("variants") for name in held.threads)


def test_a_replay_that_needs_a_variant_builds_it_off_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Resuming an episode whose variant left the cache rebuilds it on the variant thread."""
    app = create_app(Settings())
    client = TestClient(app)
    seed = 90_000 + secrets.randbelow(9_000)
    with client.websocket_connect("/ws") as socket:
        socket.send_text(json.dumps({"type": "reset", "data": {"task_id": 2, "seed": seed}}))
        episode = socket.receive_json()["data"]["observation"]["info"]["episode_id"]
        socket.close(code=1001)  # not a normal close: the episode stays, to resume
    cache = ServiceBenchEnvironment.variants
    cache._cache.clear()
    held = HeldProof(cache._prove)
    held.release.set()
    monkeypatch.setattr(cache, "_prove", held)
    with client.websocket_connect("/ws") as socket:
        socket.send_text(json.dumps({"type": "resume", "data": {"episode_id": episode}}))
        assert socket.receive_json()["type"] == "observation"
    assert held.threads and all(name.startswith("variants") for name in held.threads)
