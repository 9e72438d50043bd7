"""mock_services/state.py: a write sent with an `idempotency_key` is applied at most once.

The same key with the same write answers the first answer again and changes nothing;
with a different write it is a 409 that changes nothing; a bad key is a 400 naming it.
Keys are the episode's own (a fork copies them), and a key records whatever the write's
handler answered, refusals included, never a call refused before the handler ran.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from typing import Any

import pytest
from mock_services_support import call

from servicebench_support_queue.mock_services import (
    ENDPOINTS,
    FULL_SURFACE,
    IDEMPOTENCY_KEY,
    MAX_KEY_CHARS,
    MAX_KEY_ENTRY_BYTES,
    ServiceState,
    World,
)

REFUND = ("order", "/orders/process-refund", "POST")
LOOKUP_ORDER = ("order", "/orders/lookup", "GET")
ONE_OF_EACH: dict[tuple[str, str, str], dict[str, Any]] = {
    ("user", "/users/update", "POST"): {"user_id": "USR-001", "updates": {"phone": "555-0100"}},
    ("order", "/orders/update-status", "POST"): {"order_id": "ORD-1005", "new_status": "returned"},
    REFUND: {"order_id": "ORD-1005", "amount": 5, "reason": "late"},
    ("inventory", "/inventory/update-stock", "POST"): {"sku": "SKU-445", "adjustment": 3},
    ("shipment", "/shipments/update-address", "POST"): {
        "shipment_id": "SHP-1017-1",
        "address": "1 Oak Road, Salem, OR 97301",
    },
    ("shipment", "/shipments/reship", "POST"): {
        "order_id": "ORD-1005",
        "sku": "SKU-445",
        "quantity": 1,
        "reason": "arrived broken",
    },
    ("payment", "/payments/refund", "POST"): {"payment_id": "PAY-10002", "reason": "duplicate"},
    ("case", "/cases/open", "POST"): {
        "order_id": "ORD-1005",
        "category": "declined",
        "summary": "outside the window",
    },
}
"""A valid call of every write of the full world."""


@pytest.fixture
def state(world: World) -> ServiceState:
    return ServiceState(world)


def snapshot(state: ServiceState) -> str:
    """Everything the episode wrote, and its keys, as text (to compare before and after)."""
    written = [[table, key, dict(after)] for table, key, _, after in state.written()]
    keys = [[entry.fingerprint.hex(), entry.status, entry.body()] for entry in state.keys.answers()]
    return json.dumps([written, keys], sort_keys=True)


def refunds(state: ServiceState) -> list[dict[str, Any]]:
    return call(state, *LOOKUP_ORDER, order_id="ORD-1005")[1]["refunds"]


def test_every_write_and_no_read_declares_the_key() -> None:
    writes = {(e.service, e.path, e.method) for e in ENDPOINTS if e.method != "GET"}
    assert writes == set(ONE_OF_EACH)
    for entry in ENDPOINTS:
        assert (IDEMPOTENCY_KEY in entry.param_names) == (entry.method != "GET"), entry.path
        assert all(p.name != IDEMPOTENCY_KEY or not p.required for p in entry.params)


@pytest.mark.parametrize("route", list(ONE_OF_EACH), ids=lambda route: route[1])
def test_every_write_retried_with_its_key_applies_once(state, route) -> None:
    params = {**ONE_OF_EACH[route], IDEMPOTENCY_KEY: "attempt-1"}
    first = state.serve(*route, params)
    assert first.status == 200 and not first.replayed, first
    after_one = snapshot(state)
    for _ in range(3):
        again = state.serve(*route, params)
        assert (again.status, again.body, again.replayed) == (200, first.body, True)
    assert snapshot(state) == after_one


@pytest.mark.parametrize("route", list(ONE_OF_EACH), ids=lambda route: route[1])
def test_the_same_write_without_its_key_or_with_another_applies_again(world, route) -> None:
    """What the key prevents: counted on the reads, a second write is a second effect."""
    keyed, twin = ServiceState(world), ServiceState(world)
    params = ONE_OF_EACH[route]
    keyed.serve(*route, {**params, IDEMPOTENCY_KEY: "a"})
    keyed.serve(*route, {**params, IDEMPOTENCY_KEY: "a"})
    twin.serve(*route, {**params, IDEMPOTENCY_KEY: "a"})
    second = twin.serve(*route, {**params, IDEMPOTENCY_KEY: "b"})
    assert not second.replayed
    # a second effect changes the state, or is refused by the service's own rules
    assert snapshot(twin) != snapshot(keyed) or second.status >= 400


def test_a_retry_answers_the_first_answer_whatever_the_state_is_now(state) -> None:
    params = {"order_id": "ORD-1005", "amount": 5, "reason": "late", IDEMPOTENCY_KEY: "k"}
    first = state.serve(*REFUND, params)
    drained = call(state, *REFUND[:2], "POST", order_id="ORD-1005", amount=84.98, reason="rest")
    assert drained[0] == 200 and drained[1]["refunded_total"] == 89.98
    again = state.serve(*REFUND, params)
    assert (again.status, again.body, again.replayed) == (200, first.body, True)
    assert [refund["amount"] for refund in refunds(state)] == [5.0, 84.98]


def test_a_retry_is_a_copy_the_caller_may_change(state) -> None:
    params = {**ONE_OF_EACH[REFUND], IDEMPOTENCY_KEY: "k"}
    first = state.serve(*REFUND, params)
    expected = json.dumps(first.body)
    first.body["refund"]["amount"] = 1_000
    replay = state.serve(*REFUND, params)
    assert json.dumps(replay.body) == expected
    replay.body["refund"].clear()
    assert json.dumps(state.serve(*REFUND, params).body) == expected


@pytest.mark.parametrize(
    "changed",
    [
        {"amount": 6},
        {"order_id": "ORD-1001"},
        {"order_id": "ord-1005"},  # a retry re-sends its request: ids are compared as sent
    ],
)
def test_the_key_of_another_write_is_a_409_that_changes_nothing(state, changed) -> None:
    params = {**ONE_OF_EACH[REFUND], IDEMPOTENCY_KEY: "k"}
    state.serve(*REFUND, params)
    before = snapshot(state)
    code, body = call(state, *REFUND, **{**params, **changed})
    assert code == 409
    assert "idempotency_key 'k' was already used for a different request" in body["error"]
    assert snapshot(state) == before


def test_a_key_belongs_to_one_route(state) -> None:
    state.serve(*REFUND, {**ONE_OF_EACH[REFUND], IDEMPOTENCY_KEY: "k"})
    before = snapshot(state)
    route = ("order", "/orders/update-status", "POST")
    code, _ = call(state, *route, **ONE_OF_EACH[route], idempotency_key="k")
    assert code == 409 and snapshot(state) == before


@pytest.mark.parametrize(
    "same",
    [
        {"amount": "5.00"},
        {"amount": 5.0},
        {"order_id": "  ORD-1005 "},  # strings are stripped before anything sees them
        {"reason": "the parcel came a week late"},  # free text is no part of the write
    ],
)
def test_a_retry_spelt_or_worded_otherwise_is_the_same_write(state, same) -> None:
    params = {**ONE_OF_EACH[REFUND], IDEMPOTENCY_KEY: "k"}
    first = state.serve(*REFUND, params)
    again = state.serve(*REFUND, {**params, **same})
    assert (again.status, again.body, again.replayed) == (200, first.body, True)
    assert len(refunds(state)) == 1 and refunds(state)[0]["reason"] == "late"


def test_a_user_update_s_notes_are_wording_its_other_fields_effect(state) -> None:
    route = ("user", "/users/update", "POST")
    first = state.serve(
        *route, {"user_id": "USR-001", "updates": {"notes": "a"}, "idempotency_key": "k"}
    )
    reworded = state.serve(
        *route, {"user_id": "USR-001", "updates": {"notes": "b"}, "idempotency_key": "k"}
    )
    assert reworded.replayed and reworded.body == first.body
    other = {"user_id": "USR-001", "updates": {"notes": "a", "phone": "1"}, "idempotency_key": "k"}
    assert state.serve(*route, other).status == 409
    assert call(state, "user", "/users/lookup", user_id="USR-001")[1]["notes"] == "a"


def test_keys_are_compared_exactly(state) -> None:
    params = ONE_OF_EACH[REFUND]
    for key in ("k", "K", " k", "k "):
        assert not state.serve(*REFUND, {**params, IDEMPOTENCY_KEY: key}).replayed
    assert len(refunds(state)) == 4
    assert len(state.keys) == 4 and all(key in state.keys for key in ("k", "K", " k", "k "))
    assert "k  " not in state.keys


def test_a_refusal_by_the_service_is_recorded_and_answered_again(state) -> None:
    route = ("inventory", "/inventory/update-stock", "POST")
    stock = call(state, "inventory", "/inventory/check-stock", sku="SKU-445")[1]["stock"]
    params = {"sku": "SKU-445", "adjustment": -(stock + 1), IDEMPOTENCY_KEY: "k"}
    refused = state.serve(*route, params)
    assert refused.status == 409 and not refused.replayed
    call(state, *route, sku="SKU-445", adjustment=5)  # now there would be enough
    again = state.serve(*route, params)
    assert (again.status, again.body, again.replayed) == (409, refused.body, True)
    assert (
        call(state, "inventory", "/inventory/check-stock", sku="SKU-445")[1]["stock"] == stock + 5
    )


@pytest.mark.parametrize(
    "params",
    [
        {"order_id": "ORD-1005", "reason": "late"},  # missing amount
        {"order_id": "ORD-1005", "amount": "five", "reason": "late"},
        {"order_id": "ORD-1005", "amount": 5, "reason": "late", "bogus": 1},
    ],
)
def test_a_call_refused_before_the_write_ran_records_nothing(state, params) -> None:
    code, _ = call(state, *REFUND, **params, idempotency_key="k")
    assert code == 400 and len(state.keys) == 0
    good = state.serve(*REFUND, {**ONE_OF_EACH[REFUND], IDEMPOTENCY_KEY: "k"})
    assert good.status == 200 and not good.replayed and len(refunds(state)) == 1


def test_an_unknown_route_or_a_read_takes_no_key(state) -> None:
    code, body = call(state, *LOOKUP_ORDER, order_id="ORD-1005", idempotency_key="k")
    assert code == 400 and "unknown parameter(s) 'idempotency_key'" in body["error"]
    assert call(state, "order", "/orders/nope", "POST", idempotency_key="k")[0] == 404
    assert len(state.keys) == 0 and not state.has_writes


@pytest.mark.parametrize(
    "key",
    ["", " ", "   ", "x" * (MAX_KEY_CHARS + 1), "caf\u00e9", "a\nb", "a\tb", "\x00", 7, 1.5, True,
     ["k"], {"k": 1}],
)  # fmt: skip
def test_a_bad_key_is_a_400_naming_it_that_changes_nothing(state, key) -> None:
    code, body = call(state, *REFUND, **ONE_OF_EACH[REFUND], idempotency_key=key)
    assert code == 400
    assert body["error"].startswith(
        f"parameter 'idempotency_key' must be a string of 1 to {MAX_KEY_CHARS} printable ASCII"
    )
    assert not state.has_writes and len(state.keys) == 0


def test_the_longest_and_the_oddest_printable_keys_are_keys(state) -> None:
    for key in ("x" * MAX_KEY_CHARS, "~!@#$%^&*() {}", "a b"):
        params = {**ONE_OF_EACH[REFUND], IDEMPOTENCY_KEY: key}
        assert state.serve(*REFUND, params).status == 200
        assert state.serve(*REFUND, params).replayed
    assert len(refunds(state)) == 3


def test_a_fork_copies_the_keys_and_then_keeps_its_own(state) -> None:
    params = {**ONE_OF_EACH[REFUND], IDEMPOTENCY_KEY: "k"}
    first = state.serve(*REFUND, params)
    twin = state.fork()
    assert twin.serve(*REFUND, params).body == first.body and len(refunds(twin)) == 1
    twin.serve(*REFUND, {**params, IDEMPOTENCY_KEY: "only-in-the-twin"})
    assert "k" in twin.keys and len(twin.keys) == 2
    assert len(state.keys) == 1 and "only-in-the-twin" not in state.keys
    assert len(refunds(state)) == 1
    assert state.serve(*REFUND, {**params, IDEMPOTENCY_KEY: "only-in-the-twin"}).replayed is False


def test_a_fresh_episode_has_no_keys(world) -> None:
    used = ServiceState(world)
    used.serve(*REFUND, {**ONE_OF_EACH[REFUND], IDEMPOTENCY_KEY: "k"})
    fresh = ServiceState(world)
    assert len(fresh.keys) == 0
    assert not fresh.serve(*REFUND, {**ONE_OF_EACH[REFUND], IDEMPOTENCY_KEY: "k"}).replayed


def test_without_a_key_dispatch_answers_as_before(state) -> None:
    """`dispatch` is `serve` without the flag; no key, no table."""
    code, body = state.dispatch(*REFUND, ONE_OF_EACH[REFUND])
    assert code == 200 and body["refund"]["refund_id"] == "RF-ORD-1005-1"
    assert len(state.keys) == 0 and FULL_SURFACE.keyed is False


def retained_per_write(world: World, route: tuple[str, str, str], keyed: bool) -> float:
    """The heap 20 episodes of 8 such writes each retain, per write (tracemalloc).

    One write of the same kind runs first, outside the trace, so that what the process
    builds once (a cache, an interned name, a lazily built table) is not counted as per-write.
    The trace sees every thread's allocations (an app that an earlier test started may still
    be loading a model in the background), so the test keeps the least of three measures.
    """
    episodes, params = [], ONE_OF_EACH[route]
    ServiceState(world).dispatch(*route, {**params, IDEMPOTENCY_KEY: "warm".ljust(MAX_KEY_CHARS)})
    ServiceState(world).dispatch(*route, params)
    gc.collect()
    tracemalloc.start()
    try:
        for episode in range(20):
            state = ServiceState(world)
            for write in range(8):
                key = {IDEMPOTENCY_KEY: f"{episode}-{write}".ljust(MAX_KEY_CHARS, "k")}
                state.dispatch(*route, {**params, **(key if keyed else {})})
            episodes.append(state)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] / (20 * 8)
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("route", list(ONE_OF_EACH), ids=lambda route: route[1])
def test_a_key_s_entry_holds_no_more_than_its_allowance(world, route) -> None:
    """What the memory bound allows per step (server/lifecycle/episode.py's `step_entry_bytes`)."""
    keyed, unkeyed = (
        min(retained_per_write(world, route, k) for _ in range(3)) for k in (True, False)
    )
    extra = keyed - unkeyed
    assert 0 < extra <= MAX_KEY_ENTRY_BYTES


def test_an_answer_s_long_strings_come_back_whole(state) -> None:
    route = ("user", "/users/update", "POST")
    updates = {"name": "N" * 300, "address": "A" * 17, "phone": "1" * 16, "notes": "\u00e9" * 900}
    first = state.serve(*route, {"user_id": "USR-001", "updates": updates, IDEMPOTENCY_KEY: "k"})
    call(state, *route, user_id="USR-001", updates={"name": "Someone Else", "notes": "gone"})
    again = state.serve(*route, {"user_id": "USR-001", "updates": updates, IDEMPOTENCY_KEY: "k"})
    assert again.replayed and again.body == first.body
    assert again.body["user"]["name"] == "N" * 300 and again.body["user"]["notes"] == "\u00e9" * 900
