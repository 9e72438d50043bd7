"""Shared by the inference.py tests: running scenarios, reading their stdout, fake model brains.

A scenario is one `inference.py` run with its own scripted fake model
(tests/fake_openai.py). Most run in this process through `inference.main`
(the same code path, without paying the interpreter's multi-second import of
openenv/gradio again); a scenario marked `subprocess` goes through the real
entry point in a child process and works while the others run here.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Recorded, Reply, Text, ToolCalls
from server_process import CHILD_TIMEOUT
from tool_calls import strict_arguments

from servicebench_support_queue.client import EnvHttpClient
from servicebench_support_queue.models import (
    ServiceBenchAction,
    SupportQueueObservation,
    TaskCard,
    Ticket,
)
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.support_queue.heuristic import triage

REPO = Path(__file__).resolve().parent.parent
TOKEN = "hf_TESTSECRET_never_print_7c41e9"
MODEL = "fake/test-model"
FAST = {
    "MODEL_NAME": MODEL,
    "MODEL_TIMEOUT_S": "10",
    "MODEL_MAX_RETRIES": "2",
    "MODEL_BACKOFF_S": "0.01",
    "MODEL_BACKOFF_MAX_S": "0.05",
    "INFERENCE_TIME_BUDGET_S": "300",
}
START = re.compile(
    r"^\[START\] task=(?P<task>\S+) env=(?P<env>servicebench|support_queue) model=(?P<model>\S+)$"
)
STEP = re.compile(
    r"^\[STEP\] step=(?P<step>\d+) action=(?P<action>\{.*\}|null) reward=(?P<reward>-?\d+\.\d{2}) "
    r"done=(?P<done>true|false) error=(?P<error>.+)$"
)
END = re.compile(
    r"^\[END\] success=(?P<success>true|false) steps=(?P<steps>\d+) score=(?P<score>\d\.\d{3}) "
    r"rewards=(?P<rewards>(?:-?\d+\.\d{2}(?:,-?\d+\.\d{2})*)?)$"
)

# ----------------------------------------------------------------------------- reading a run


@dataclass
class Episode:
    task: str
    env: str
    model: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    success: bool = False
    score: float = 0.0


def parse_episodes(stdout: str) -> list[Episode]:
    """The episodes of a run's stdout; fails on any line that is not a well-formed log line."""
    episodes: list[Episode] = []
    current: Episode | None = None
    for line in stdout.splitlines():
        if match := START.match(line):
            assert current is None, "[START] before the previous task's [END]"
            current = Episode(match["task"], match["env"], match["model"])
        elif match := STEP.match(line):
            assert current is not None, "[STEP] outside a task"
            assert int(match["step"]) == len(current.steps) + 1
            action = None if match["action"] == "null" else json.loads(match["action"])
            error = None if match["error"] == "null" else match["error"]
            current.steps.append(
                {
                    "action": action,
                    "reward": match["reward"],
                    "done": match["done"] == "true",
                    "error": error,
                }
            )
        elif match := END.match(line):
            assert current is not None, "[END] without [START]"
            assert int(match["steps"]) == len(current.steps)
            assert (match["rewards"].split(",") if match["rewards"] else []) == [
                s["reward"] for s in current.steps
            ]
            current.success, current.score = match["success"] == "true", float(match["score"])
            episodes.append(current)
            current = None
        else:
            pytest.fail(f"unexpected stdout line: {line!r}")
    assert current is None, "a task without [END]"
    return episodes


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    cwd: Path
    output: str
    requests: list[Recorded] = field(default_factory=list)

    @property
    def episodes(self) -> list[Episode]:
        return parse_episodes(self.stdout)

    @property
    def results_text(self) -> str:
        path = self.cwd / self.output
        return path.read_text() if path.exists() else ""

    @property
    def results(self) -> dict[str, Any]:
        return json.loads(self.results_text)

    def steps(self) -> list[dict[str, Any]]:
        return [s for e in self.episodes for s in e.steps]


def completed(run: Run) -> Run:
    assert run.returncode == 0, run.stderr
    return run


def ids(cards: list[TaskCard], env: str | None = None) -> list[str]:
    return [c.id for c in cards if env in (None, c.env)]


def assert_clean(runs: Mapping[str, Run]) -> None:
    """Every run: only structured stdout lines, the token nowhere, the token sent to the model."""
    for name, run in runs.items():
        for text in (run.stdout, run.stderr, run.results_text):
            assert TOKEN not in text, name
        if run.returncode == 0:
            assert run.episodes, name  # parse_episodes rejects any other stdout line
        assert all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in run.requests), name


# ----------------------------------------------------------------------------- fake model brains


def _results_told(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The API results the agent reported to the model, oldest first."""
    told = []
    for message in messages[2:]:
        if message["role"] not in ("tool", "user"):
            continue
        try:
            content = json.loads(message["content"])
        except (TypeError, json.JSONDecodeError):
            continue  # a complaint about an unusable reply, not a result
        if isinstance(content, dict) and "api_response" in content:
            told.append(content)
    return told


def tool_for(tools: list[dict[str, Any]], action: ServiceBenchAction) -> str:
    """The name of the tool whose description names the action's method and path."""
    for tool in tools:
        description = tool["function"]["description"]
        if description.startswith(action.method) and f" {action.endpoint}:" in description:
            return tool["function"]["name"]
    raise AssertionError(f"no tool for {action.method} {action.endpoint}")


def _states(card: TaskCard, description: str) -> bool:
    """Whether a prompt is the card's: its canonical text, or its template (a request task's
    card shows its blanks as <blank>)."""
    pattern = re.sub(r"<\w+>", ".+?", re.escape(card.description))
    return description == card.description or re.fullmatch(pattern, description) is not None


class OracleBrain:
    """A fake model that plays ServiceBench's optimal policy from what the agent tells it.

    It recognises the task by its canonical description in the prompt, or is told
    `task_id` (a seeded variant's prompt is its own text).
    """

    def __init__(self, cards: list[TaskCard], style: str, task_id: str | None = None) -> None:
        self.cards, self.style, self.task_id = cards, style, task_id

    def __call__(self, body: dict[str, Any]) -> Reply:
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        description, _, policy = prompt.removeprefix("Task: ").partition("\n\n")
        task_id = self.task_id or next(c.id for c in self.cards if _states(c, description))
        history = [
            {"task_id": task_id, "task_description": description, "policy": policy, "done": False}
        ]
        action = next_action(history + _results_told(body["messages"]))
        assert action is not None, "the fake model was asked for a move after the task was done"
        if self.style == "tools":  # every parameter, null where not given, as strict mode sends
            name = tool_for(body["tools"], action)
            [schema] = [
                t["function"]["parameters"] for t in body["tools"] if t["function"]["name"] == name
            ]
            return ToolCalls(((name, strict_arguments(action.params, schema)),))
        wire = action.model_dump(exclude={"metadata"})
        return Text(f"I will call the next endpoint.\n```json\n{json.dumps(wire)}\n```")


def heuristic_brain(body: dict[str, Any]) -> Reply:
    """A fake model that answers like Support Queue's heuristic, from the ticket in the prompt."""
    prompt = body["messages"][1]["content"]
    ticket, _ = json.JSONDecoder().raw_decode(prompt, prompt.index("{"))
    action = triage(SupportQueueObservation(ticket=Ticket.model_validate(ticket)))
    return Text(json.dumps(action.model_dump(exclude={"metadata"})))


def measure_heuristic_scores(live_server: str, cards: list[TaskCard]) -> dict[str, float]:
    """What the heuristic scores on each canonical Support Queue task, measured over HTTP."""
    scores = {}
    with EnvHttpClient(live_server) as client:
        for card in (c for c in cards if c.env == "support_queue"):
            result = client.reset(env=card.env, task_id=card.id)
            while not result.done:
                result = client.step(triage(result.observation))
            scores[card.id] = client.state().average_reward
    return scores


# ----------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class Scenario:
    """One run of inference.py: flags, extra environment, and what its fake model answers."""

    args: tuple[str, ...]
    script: Callable[[list[TaskCard]], tuple[list[Reply], Any]]  # cards -> (script, default)
    env: tuple[tuple[str, str], ...] = ()
    subprocess: bool = False
    default_output: bool = (
        False  # files in the working directory: only with subprocess (its own cwd)
    )

    def __post_init__(self) -> None:
        assert self.subprocess or not self.default_output, "an in-process run's cwd is the repo"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scenario_environ(live_server: str, fake: FakeOpenAI, scenario: Scenario) -> dict[str, str]:
    environ = {
        k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "API_KEY", "MODEL_TOOLS")
    }
    environ.update(FAST, ENV_BASE_URL=live_server, HF_TOKEN=TOKEN, API_BASE_URL=fake.url)
    environ.update(dict(scenario.env))
    return environ


def scenario_args(cwd: Path, scenario: Scenario) -> list[str]:
    """The scenario's flags; its files go to `cwd` (by default, or through the flags)."""
    if scenario.default_output:
        return list(scenario.args)
    files = (
        "--output",
        "results.json",
        "--trajectories",
        "trajectories.jsonl",
        "--report",
        "report.md",
        "--html-report",
        "report.html",
    )
    return list(scenario.args) + [
        part if part.startswith("--") else str(cwd / part) for part in files
    ]


def run_in_process(environ: dict[str, str], args: list[str]) -> tuple[int, str, str]:
    from servicebench_support_queue import inference

    out, err = io.StringIO(), io.StringIO()
    code = inference.main(args, environ, out, err)
    return code, out.getvalue(), err.getvalue()


def play_scenarios(
    scenarios: Mapping[str, Scenario],
    live_server: str,
    cards: list[TaskCard],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Run]:
    """Every scenario's run: the subprocesses start first and work while the rest run here."""
    finished: dict[str, Run] = {}
    with ExitStack() as stack:
        fakes, cwds, children = {}, {}, {}
        for name, scenario in scenarios.items():
            fakes[name] = stack.enter_context(FakeOpenAI())
            script, default = scenario.script(cards)
            fakes[name].program(*script, default=default)
            cwds[name] = tmp_path_factory.mktemp(name)
        for name, scenario in scenarios.items():
            environ, args = (
                scenario_environ(live_server, fakes[name], scenario),
                scenario_args(cwds[name], scenario),
            )
            output = "inference_results.json" if scenario.default_output else "results.json"
            if scenario.subprocess:
                with (
                    open(cwds[name] / "stdout.txt", "w") as out,
                    open(cwds[name] / "stderr.txt", "w") as err,
                ):
                    children[name] = subprocess.Popen(
                        [sys.executable, str(REPO / "inference.py"), *args],
                        cwd=cwds[name],
                        env=environ,
                        stdout=out,
                        stderr=err,
                    )
                finished[name] = Run(0, "", "", cwds[name], output)
            else:
                code, stdout, stderr = run_in_process(environ, args)
                finished[name] = Run(code, stdout, stderr, cwds[name], output)
        for name, child in children.items():
            finished[name].returncode = child.wait(timeout=CHILD_TIMEOUT)
            finished[name].stdout, finished[name].stderr = (
                (cwds[name] / f).read_text() for f in ("stdout.txt", "stderr.txt")
            )
        for name in scenarios:
            finished[name].requests = fakes[name].completions()
    return finished
