"""Every family against the family-agnostic negative controls, and docs/servicebench.md's tables.

The controls (server/servicebench/controls.py) play from the observations alone: do
nothing, read everything reachable with the ids seen, spam every write with the ids and
amounts seen, and always do the obvious write (refund the order in full, mark it
returned). None scores 0.9 or more on any family, but reading on the lookup family,
whose answer is the reading. Reads never complete a family whose end state needs a
write, and stay within the table's reads-only ceiling. The oracle scores exactly 1.0
with the expected end state on every episode.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from servicebench_support_queue.server.servicebench.catalogue import FAMILIES
from servicebench_support_queue.server.servicebench.controls import CONTROLS, run_control
from servicebench_support_queue.server.servicebench.family_table import (
    TABLE_SEEDS,
    Measured,
    families_markdown,
    measure,
    rows_markdown,
)
from servicebench_support_queue.server.servicebench.grading.reward_table import (
    FAMILY_TABLES,
    reads_ceiling,
)

SERVICEBENCH_PAGE = Path(__file__).resolve().parents[3] / "docs" / "servicebench.md"


@pytest.fixture(scope="module")
def measured() -> list[Measured]:
    return measure(TABLE_SEEDS)


def test_the_oracle_solves_every_family_exactly(measured):
    for row in measured:
        assert row.oracle_min == 1.0 and row.end_states_matched == row.episodes, row.info.name


def test_no_control_reaches_0_9_on_any_family(measured):
    for row in measured:
        for name, best in row.controls.items():
            if name == "read_everything" and row.info.workflow == "lookup":
                continue  # reading the two records the prompt names is the lookup's answer
            assert best < 0.9, (row.info.name, name, best)
        assert row.controls["do_nothing"] == 0.0


def test_reads_complete_only_the_lookup_and_stay_within_the_reads_ceiling(measured):
    for row in measured:
        info = row.info
        if info.workflow == "lookup":
            assert row.completed_by_reads == row.episodes
            continue
        assert row.completed_by_reads == 0, info.name
        table = info.name if info.name in FAMILY_TABLES else info.task_id
        assert row.controls["read_everything"] <= reads_ceiling(table) + 1e-9, info.name


@pytest.mark.parametrize("name", [name for name in CONTROLS if name != "do_nothing"])
def test_a_control_on_a_write_family_leaves_the_end_state_unmatched_or_pays_for_it(name):
    """Whatever a control completes by luck (a spammed 'declined' case), it did other writes
    first, or wrote before verifying: its end state is not the expected one, or it paid."""
    for info in FAMILIES:
        if info.workflow == "lookup":
            continue
        for seed in TABLE_SEEDS[:4]:
            play = run_control(name, info.task_id, seed, info.name)
            state = play.env.state
            if state.task_completed:
                signals = [s for record in state.call_history for s in record.signals]
                assert not state.outcome.end_state_matches or any(
                    s in signals for s in ("write_before_verification", "unintended_write")
                ), (info.name, name, seed)


def _section(title: str) -> str:
    text = SERVICEBENCH_PAGE.read_text(encoding="utf-8")
    match = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ )", text, re.S | re.M)
    assert match, f"docs/servicebench.md has no section {title!r}"
    return match.group(1)


def test_the_docs_show_the_measured_catalogue_and_the_reward_rows(measured):
    section = _section("Task families")
    rewrite = "run: uv run --frozen python scripts/servicebench_families.py --write"
    assert families_markdown(measured) in section, rewrite
    assert rows_markdown() in section
