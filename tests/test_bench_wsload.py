"""The C WebSocket load generator: it plays whole episodes and counts a wrong one as an error.

Benchmarks never run in the suite; this checks only that the tool measuring figure 3
checks what it claims to (every reply an observation, each episode finished with a
perfect score), against the real server, for a moment.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/ is not installed

from bench import wsload  # noqa: E402
from bench.plans import EpisodePlan, Plan, episode_mix  # noqa: E402

pytestmark = pytest.mark.skipif(
    not (shutil.which("gcc") or shutil.which("cc")), reason="no C compiler to build bench/wsload.c"
)


def _ws_url(live_server: str) -> str:
    return live_server.replace("http://", "ws://") + "/servicebench/ws"


def test_every_reply_is_checked_and_each_episode_end_is_checked_for_a_perfect_score() -> None:
    plan = episode_mix()
    lines = wsload.cycle_lines(plan)
    assert len(lines) == sum(1 + len(episode.steps) for episode in plan.episodes)
    assert all('\t^{"type":"observation"' in line for line in lines)
    ends = [line for line in lines if '+"done":true' in line]
    assert len(ends) == len(plan.episodes) and all(
        '+"cumulative_reward":1.0' in line for line in ends
    )
    assert sum(line.startswith("s") for line in lines) == plan.steps_per_cycle


def test_the_episode_mix_plays_without_errors(live_server: str) -> None:
    result = wsload.throughput(_ws_url(live_server), episode_mix(), 2, 0.5)
    assert result["errors"] == 0, result
    assert result["steps"] > 0 and result["messages"] > result["steps"]


def test_an_episode_that_does_not_finish_perfectly_counts_as_an_error(live_server: str) -> None:
    whole = episode_mix().episodes[1]
    cut = Plan("cut-short", (EpisodePlan(whole.reset_body, whole.steps[:-1], True),))
    result = wsload.throughput(_ws_url(live_server), cut, 1, 0.5)
    assert result["messages"] > 0 and result["errors"] > 0, result
