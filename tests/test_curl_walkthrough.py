"""The curl commands of the README and the docs, run as written by bash against a live server (only
the host:port is the live server's): the README's first episode, which starts with the seed's
walkthrough verbatim and ends with the answer it shows; several episodes at once (docs/api.md); the
Task API's splits (docs/variants-and-splits.md)."""

from __future__ import annotations

import json
import re

import pytest
from doc_commands import run_as_written
from readme_support import code_blocks, commands, normalized, section

# Copied from the ServiceBench seed document; the README's first two commands are these.
SEED_WALKTHROUGH = [
    """curl -X POST http://localhost:8000/reset \\
-H "Content-Type: application/json" \\
-d '{"task_id": 1}'""",
    """curl -X POST http://localhost:8000/step \\
-H "Content-Type: application/json" \\
-d '{"service": "user", "endpoint": "/users/lookup", "method": "GET", "params": {"email": "jane.doe@example.com"}}'""",
]
FIRST_EPISODE = section("A first episode with curl")
[WALKTHROUGH] = code_blocks(FIRST_EPISODE, "bash")
[SHOWN] = code_blocks(FIRST_EPISODE, "json")
[SEVERAL] = code_blocks(section("Several episodes at once, with curl", "docs/api.md"), "bash")
[SPLITS] = code_blocks(
    section("Splits (OpenEnv's Task API)", "docs/variants-and-splits.md"), "bash"
)
RUNS = [*commands(WALKTHROUGH, "bash"), normalized(SEVERAL), *commands(SPLITS, "bash")]
"""The commands this module runs (tests/test_docs.py checks that every command is run)."""
ELIDED = "…"


def answers(command: str, live_server: str) -> dict:
    done = run_as_written(command + " --silent --max-time 120", live_server, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def shown_in(shown: object, actual: object, where: str = "") -> None:
    """`shown` is `actual` abridged: every key shown has the value shown, "…" stands for any value,
    a list is shown whole."""
    if shown == ELIDED:
        return
    if isinstance(shown, dict):
        assert isinstance(actual, dict), where
        for key, value in shown.items():
            assert key in actual, f"{where}.{key} is not in the answer"
            shown_in(value, actual[key], f"{where}.{key}")
    else:
        assert shown == actual, f"{where}: shown {shown!r}, answered {actual!r}"


def test_the_readmes_walkthrough_starts_with_the_seeds_verbatim() -> None:
    ours = commands(WALKTHROUGH, "bash")
    assert ours[:2] == [normalized(command) for command in SEED_WALKTHROUGH]


def test_the_readmes_first_episode_answers_what_it_shows(live_server: str) -> None:
    reset, first, second, state_command = commands(WALKTHROUGH, "bash")
    started = answers(reset, live_server)
    assert started["observation"]["task_id"] == "order_status_lookup"
    assert started["done"] is False
    stepped = answers(first, live_server)
    assert stepped["episode_id"] == started["episode_id"]
    assert stepped["observation"]["success"] is True
    reward = float(re.search(r"The first step earns (\d\.\d+)", FIRST_EPISODE)[1])
    assert stepped["reward"] == pytest.approx(reward)
    finished = answers(second, live_server)
    assert finished["episode_id"] == started["episode_id"]
    shown_in(json.loads(SHOWN), finished)
    state = answers(state_command, live_server)
    said = dict(re.findall(r'`"(\w+)": ([\w.]+)`', FIRST_EPISODE.split("`/state` then shows")[1]))
    assert said, "the text says what /state shows"
    for key, value in said.items():
        shown_in(json.loads(value), state[key], key)
    assert state["episode_id"] == started["episode_id"]


def test_several_episodes_at_once_play_their_own_episode(live_server: str) -> None:
    done = run_as_written(SEVERAL, live_server, timeout=60)
    assert done.returncode == 0, done.stderr
    decoder, text, printed = json.JSONDecoder(), done.stdout.strip(), []
    while text:  # curl prints each answer with no newline after it
        value, end = decoder.raw_decode(text)
        printed.append(value)
        text = text[end:].lstrip()
    step_answer, state = printed
    assert step_answer["episode_id"] == state["episode_id"]
    assert state["task"]["id"] == "easy_inbox_cleanup" and state["step_count"] == 1
    assert step_answer["observation"]["current_index"] == 1, "the step triaged the first ticket"


@pytest.mark.parametrize("index", range(len(commands(SPLITS, "bash"))))
def test_each_splits_command_answers(live_server: str, index: int) -> None:
    command = commands(SPLITS, "bash")[index]
    done = run_as_written(command + " --fail-with-body", live_server, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    if "/reset" in command:
        assert answer["observation"]["task_id"] and answer["done"] is False
    else:
        assert answer
