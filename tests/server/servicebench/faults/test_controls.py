"""The controls of fault handling against the oracle, and the docs' table of faults.

The blind re-sender (writes without a key, a failed write sent again at once) and the
never-retrier (gives up at the first fault) play the oracle's calls otherwise
(server/servicebench/faults/controls.py). Without faults they are the oracle; with faults
each scores measurably below it, and each of its failures is put down to the faults by
the evaluation's rule (agents/fault_blame.py) for the reason its habit predicts. The docs
show exactly the measured table, and bench/results/ keeps exactly the measured raw result.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from servicebench_support_queue.agents.fault_blame import failure_cause
from servicebench_support_queue.server.servicebench.catalogue import FAMILIES
from servicebench_support_queue.server.servicebench.faults.controls import (
    FAULT_CONTROLS,
    KEY,
    FaultPlay,
    run_fault_control,
)
from servicebench_support_queue.server.servicebench.faults.table import (
    FAULT_SEEDS,
    faults_markdown,
    measure_faults,
)
from servicebench_support_queue.server.servicebench.oracle import next_action

REPO = Path(__file__).resolve().parents[4]
RAW = REPO / "bench" / "results" / "servicebench_faults.json"
MARGIN = {
    "blind_resender": {"light": 0.005, "heavy": 0.02},
    "never_retrier": {"light": 0.1, "heavy": 0.3},
}
"""How far below the oracle's mean score each control must stay, at least. The blind
re-sender loses only where a timed-out write had been applied (a few calls in a hundred),
and a failed episode keeps what its reads earned, so its gap is small but never nil."""


@pytest.fixture(scope="module")
def measured() -> dict[str, Any]:
    return measure_faults()


def test_without_faults_both_controls_are_the_oracle(measured: dict[str, Any]) -> None:
    off = measured["levels"]["off"]
    assert off["mean_score"] == {name: 1.0 for name in FAULT_CONTROLS}
    assert set(off["completed"].values()) == {off["episodes"]}
    assert off["faults_by_kind"] == {}


@pytest.mark.parametrize("level", ["light", "heavy"])
def test_with_faults_both_controls_score_measurably_below_the_oracle(
    measured: dict[str, Any], level: str
) -> None:
    row = measured["levels"][level]
    oracle = row["mean_score"]["oracle"]
    assert oracle == 1.0 and row["completed"]["oracle"] == row["episodes"]
    for name in ("blind_resender", "never_retrier"):
        assert row["mean_score"][name] <= oracle - MARGIN[name][level], (level, name, row)
        assert row["completed"][name] < row["episodes"], (level, name)


def _failures(name: str, level: str) -> list[dict[str, Any]]:
    """The final states of the control's failed episodes on the sample."""
    states = []
    for info in FAMILIES:
        for seed in FAULT_SEEDS:
            play = run_fault_control(name, info.task_id, seed, info.name, level)
            state = play.env.state.model_dump(mode="json")
            if not state["task_completed"]:
                summary = play.history[-1].info.get("faults")
                states.append({"state": state, "summary": summary})
    return states


def test_the_blind_resenders_failures_are_double_writes() -> None:
    failed = _failures("blind_resender", "heavy")
    assert failed
    for found in failed:
        cause = failure_cause(found["state"], False, found["summary"])
        assert cause == "fault_double_write", found["state"]["call_history"]
        assert failure_cause(found["state"], False) == cause, "the state alone tells it too"
        calls = found["state"]["call_history"]
        assert all(KEY not in call["params"] for call in calls if call["method"] != "GET")


def test_the_never_retriers_failures_are_unretried_faults() -> None:
    failed = _failures("never_retrier", "light")
    assert failed
    for found in failed:
        assert failure_cause(found["state"], False, found["summary"]) == "fault_unretried"
        last = found["state"]["call_history"][-1]
        assert last["status_code"] in (503, 429, 504)


def test_a_policy_that_stops_before_writing_fails_on_its_own_under_faults() -> None:
    """Faults are no excuse: a failure with every fault retried is the agent's."""
    checked = 0
    for info in FAMILIES[:6]:
        play = FaultPlay(info.task_id, FAULT_SEEDS[0], info.name, "heavy")
        while not play.done and (action := next_action(play.history)) is not None:
            if action.method != "GET":
                break  # the oracle's reads, each fault retried as it retries, and no write
            play.send(action)
        state = play.env.state.model_dump(mode="json")
        if not state["task_completed"]:
            assert failure_cause(state, False) == "agent", state["call_history"]
            checked += 1
    assert checked


def _block(text: str) -> str:
    match = re.search(r"<!-- faults table -->\n(.*?)\n<!-- /faults table -->", text, re.S)
    assert match, "the docs need a <!-- faults table --> block"
    return match.group(1)


def test_the_docs_and_the_raw_result_hold_the_measured_table(measured: dict[str, Any]) -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    [page] = [p for p in pages if "<!-- faults table -->" in p.read_text("utf-8")]
    hint = "run: python scripts/servicebench_faults.py --write"
    assert _block(page.read_text("utf-8")) == faults_markdown(measured), hint
    assert json.loads(RAW.read_text("utf-8")) == measured, hint
