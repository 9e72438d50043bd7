"""inference.py end to end: subprocesses against the live server and scripted fake models.

Each scenario is one `python inference.py ...` run with its own fake model; all
scenarios start together (the interpreter's imports dominate a run's time) and
the tests below read their stdout, stderr, results file and model requests.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any, Callable, Iterator, Optional

import pytest

from client import EnvHttpClient
from fake_openai import Delay, FakeOpenAI, RawBody, Recorded, Reply, Status, Text, ToolCalls
from models import ServiceBenchAction, SupportQueueObservation, TaskCard, Ticket
from policies.servicebench_oracle import next_action
from policies.support_queue_heuristic import triage

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
TIME_BUDGET_S = 3
START = re.compile(r"^\[START\] task=(?P<task>\S+) env=(?P<env>servicebench|support_queue) model=(?P<model>\S+)$")
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
    current: Optional[Episode] = None
    for line in stdout.splitlines():
        if match := START.match(line):
            assert current is None, "[START] before the previous task's [END]"
            current = Episode(match["task"], match["env"], match["model"])
        elif match := STEP.match(line):
            assert current is not None, "[STEP] outside a task"
            assert int(match["step"]) == len(current.steps) + 1
            action = None if match["action"] == "null" else json.loads(match["action"])
            error = None if match["error"] == "null" else match["error"]
            current.steps.append({"action": action, "reward": match["reward"],
                                  "done": match["done"] == "true", "error": error})
        elif match := END.match(line):
            assert current is not None, "[END] without [START]"
            assert int(match["steps"]) == len(current.steps)
            assert (match["rewards"].split(",") if match["rewards"] else []) == [s["reward"] for s in current.steps]
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
    results_text: str
    requests: list[Recorded]

    @property
    def episodes(self) -> list[Episode]:
        return parse_episodes(self.stdout)

    @property
    def results(self) -> dict[str, Any]:
        return json.loads(self.results_text)

    def steps(self) -> list[dict[str, Any]]:
        return [s for e in self.episodes for s in e.steps]


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


class OracleBrain:
    """A fake model that plays ServiceBench's optimal policy from what the agent tells it."""

    def __init__(self, cards: list[TaskCard], style: str) -> None:
        self.cards, self.style = cards, style

    def __call__(self, body: dict[str, Any]) -> Reply:
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        card = next(c for c in self.cards if c.description in prompt)
        history = [{"task_id": card.id, "task_description": card.description, "done": False}]
        action = next_action(history + _results_told(body["messages"]))
        assert action is not None, "the fake model was asked for a move after the task was done"
        if self.style == "tools":
            return ToolCalls(((tool_for(body["tools"], action), action.params),))
        wire = action.model_dump(exclude={"metadata"})
        return Text(f"I will call the next endpoint.\n```json\n{json.dumps(wire)}\n```")


def heuristic_brain(body: dict[str, Any]) -> Reply:
    """A fake model that answers like Support Queue's heuristic, from the ticket in the prompt."""
    prompt = body["messages"][1]["content"]
    ticket, _ = json.JSONDecoder().raw_decode(prompt, prompt.index("{"))
    action = triage(SupportQueueObservation(ticket=Ticket.model_validate(ticket)))
    return Text(json.dumps(action.model_dump(exclude={"metadata"})))


INVALID_TRIAGE = Text('{"priority": "URGENT", "queue": "billing", "disposition": "respond"}')


def refuse_tools(brain: Callable[[dict[str, Any]], Reply]) -> Callable[[dict[str, Any]], Reply]:
    return lambda body: Status(400, "tools are not supported") if "tools" in body else brain(body)


def invalid_first(body: dict[str, Any]) -> Reply:
    return INVALID_TRIAGE if len(body["messages"]) == 2 else heuristic_brain(body)


# ----------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class Scenario:
    """One run of inference.py: flags, extra environment, and what its fake model answers.

    `subprocess` runs go through the real entry point in a child process; the others
    call `inference.main` in this process (same code path, without paying the
    interpreter's multi-second import of openenv/gradio once more).
    """

    args: tuple[str, ...]
    script: Callable[[list[TaskCard]], tuple[list[Reply], Any]]  # cards -> (script, default)
    env: tuple[tuple[str, str], ...] = ()
    subprocess: bool = False
    default_output: bool = False


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SCENARIOS: dict[str, Scenario] = {
    "fallback": Scenario(("--fallback",), lambda c: ([], Status(500)), subprocess=True, default_output=True),
    "model_down": Scenario((), lambda c: ([], Status(503, "overloaded", echo_auth=True)),
                           env=(("MODEL_MAX_RETRIES", "1"), ("AGENT_MAX_FAILED_TURNS", "2")), subprocess=True),
    "sb_tools": Scenario(("--env", "servicebench"), lambda c: ([], OracleBrain(c, "tools")), subprocess=True),
    "sq_retry_once": Scenario(("--env", "support_queue"), lambda c: ([], invalid_first)),
    "sb_text": Scenario(("--env", "servicebench"), lambda c: ([], OracleBrain(c, "text")),
                        env=(("MODEL_TOOLS", "off"),)),
    "sb_refused_tools": Scenario(("--task", "return_and_refund"),
                                 lambda c: ([], refuse_tools(OracleBrain(c, "text")))),
    "sb_correction": Scenario(("--task", "1"), lambda c: (
        [ToolCalls((("no_such_function", {}),)), Text("Let me think about it.")], OracleBrain(c, "tools"))),
    "sb_flaky_model": Scenario(("--task", "order_status_lookup"), lambda c: (
        [Status(500), Status(429, headers=(("Retry-After", "0.01"),)), Delay(6.0, Text("too late")),
         RawBody(b'{"choices": []}'), RawBody(b"<html>bad gateway</html>")], OracleBrain(c, "tools")),
        env=(("MODEL_TIMEOUT_S", "1.5"), ("MODEL_MAX_RETRIES", "5"))),
    "sq_garbage": Scenario(("--env", "support_queue"),
                           lambda c: ([], Text("This ticket looks urgent, route it to security."))),
    "flags": Scenario(("--task", "3", "--seed", "0", "--max-steps", "2"), lambda c: ([], OracleBrain(c, "tools"))),
    "time_budget": Scenario((), lambda c: ([], Delay(1.0, Text("still thinking..."))),
                            env=(("INFERENCE_TIME_BUDGET_S", str(TIME_BUDGET_S)),)),
    "no_server": Scenario(("--fallback",), lambda c: ([], Status(500)),
                          env=(("ENV_BASE_URL", f"http://127.0.0.1:{closed_port()}"),)),
}


def scenario_environ(live_server: str, fake: FakeOpenAI, scenario: Scenario) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "API_KEY", "MODEL_TOOLS")}
    environ.update(FAST, ENV_BASE_URL=live_server, HF_TOKEN=TOKEN, API_BASE_URL=fake.url)
    environ.update(dict(scenario.env))
    return environ


def scenario_args(cwd: Path, scenario: Scenario) -> list[str]:
    return list(scenario.args) + ([] if scenario.default_output else ["--output", str(cwd / "results.json")])


def start_subprocess(cwd: Path, environ: dict[str, str], args: list[str]) -> subprocess.Popen:
    with open(cwd / "stdout.txt", "w") as out, open(cwd / "stderr.txt", "w") as err:
        return subprocess.Popen([sys.executable, str(REPO / "inference.py"), *args],
                                cwd=cwd, env=environ, stdout=out, stderr=err, text=True)


def run_in_process(environ: dict[str, str], args: list[str]) -> tuple[int, str, str]:
    import inference

    out, err = io.StringIO(), io.StringIO()
    code = inference.main(args, environ, out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def cards(live_server: str) -> list[TaskCard]:
    with EnvHttpClient(live_server) as client:
        return client.tasks()


@pytest.fixture(scope="module")
def runs(live_server: str, cards: list[TaskCard], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """Every scenario's run: the subprocesses start first and work while the rest run here."""
    finished: dict[str, Run] = {}
    with ExitStack() as stack:
        fakes, cwds, children = {}, {}, {}
        for name, scenario in SCENARIOS.items():
            fakes[name] = stack.enter_context(FakeOpenAI())
            script, default = scenario.script(cards)
            fakes[name].program(*script, default=default)
            cwds[name] = tmp_path_factory.mktemp(name)
        for name, scenario in SCENARIOS.items():
            environ, args = scenario_environ(live_server, fakes[name], scenario), scenario_args(cwds[name], scenario)
            if scenario.subprocess:
                children[name] = start_subprocess(cwds[name], environ, args)
            else:
                code, stdout, stderr = run_in_process(environ, args)
                finished[name] = Run(code, stdout, stderr, "", [])
        for name, child in children.items():
            code = child.wait(timeout=180)
            stdout, stderr = ((cwds[name] / f).read_text() for f in ("stdout.txt", "stderr.txt"))
            finished[name] = Run(code, stdout, stderr, "", [])
        for name, scenario in SCENARIOS.items():
            results = cwds[name] / ("inference_results.json" if scenario.default_output else "results.json")
            finished[name].results_text = results.read_text() if results.exists() else ""
            finished[name].requests = fakes[name].completions()
    return finished


@pytest.fixture(scope="module")
def heuristic_scores(live_server: str, cards: list[TaskCard]) -> dict[str, float]:
    """What the heuristic scores on each Support Queue task, measured here over HTTP."""
    scores = {}
    with EnvHttpClient(live_server) as client:
        for card in (c for c in cards if c.env == "support_queue"):
            result = client.reset(env=card.env, task_id=card.id)
            while not result.done:
                result = client.step(triage(result.observation))
            scores[card.id] = client.state().average_reward
    return scores


def ids(cards: list[TaskCard], env: Optional[str] = None) -> list[str]:
    return [c.id for c in cards if env in (None, c.env)]


def completed(run: Run) -> Run:
    assert run.returncode == 0, run.stderr
    return run


# ----------------------------------------------------------------------------- every run


def test_every_run_logs_only_structured_lines_and_hides_the_token(runs: dict[str, Run]) -> None:
    for name, run in runs.items():
        for text in (run.stdout, run.stderr, run.results_text):
            assert TOKEN not in text, name
        if run.returncode == 0:
            assert run.episodes, name  # parse_episodes rejects any other stdout line
        assert all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in run.requests), name


# ----------------------------------------------------------------------------- fallback


def test_fallback_solves_servicebench_and_runs_the_heuristic(
    runs: dict[str, Run], cards: list[TaskCard], heuristic_scores: dict[str, float]
) -> None:
    run = completed(runs["fallback"])
    assert not run.requests, "--fallback needs no model"
    assert [e.task for e in run.episodes] == ids(cards)
    for episode in run.episodes:
        assert episode.model == "fallback" and episode.success
        assert all(s["error"] is None and s["action"] is not None for s in episode.steps)
        if episode.env == "servicebench":
            assert episode.score == 1.0
        else:
            assert episode.score == pytest.approx(heuristic_scores[episode.task], abs=5e-4)


def test_results_file_records_every_task_and_the_means(runs: dict[str, Run], cards: list[TaskCard]) -> None:
    run = completed(runs["fallback"])
    results = run.results  # written to the working directory by default
    assert results["model"] == "fallback" and results["fallback"] is True
    assert [t["task_id"] for t in results["tasks"]] == ids(cards)
    for task, episode in zip(results["tasks"], run.episodes):
        assert task["env"] == episode.env and task["model"] == "fallback" and task["seed"] is None
        assert task["success"] is episode.success and task["steps"] == len(episode.steps)
        assert f"{task['score']:.3f}" == f"{episode.score:.3f}"
        assert [f"{r:.2f}" for r in task["rewards"]] == [s["reward"] for s in episode.steps]
        assert [t["action"] for t in task["trajectory"]] == [s["action"] for s in episode.steps]
        assert all(t["observation"] and "error" in t for t in task["trajectory"])
        assert task["duration_s"] >= 0
    summary = results["summary"]
    for env in ("servicebench", "support_queue"):
        expected = fmean(t["score"] for t in results["tasks"] if t["env"] == env)
        assert summary["mean_score"][env] == pytest.approx(expected)
    assert summary["mean_score"]["overall"] == pytest.approx(fmean(t["score"] for t in results["tasks"]))
    assert summary["tasks"] == len(cards) and summary["successes"] == len(cards)


# ----------------------------------------------------------------------------- ServiceBench LLM path


def test_servicebench_through_tool_calls(runs: dict[str, Run], cards: list[TaskCard]) -> None:
    run = completed(runs["sb_tools"])
    assert [e.task for e in run.episodes] == ids(cards, "servicebench")
    assert all(e.success and e.score == 1.0 and e.model == MODEL for e in run.episodes)
    assert len(run.requests) == len(run.steps()), "one model call per step"

    tools = {t["function"]["name"]: t["function"] for t in run.requests[0].body["tools"]}
    assert len(tools) == len(run.requests[0].body["tools"])
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name) for name in tools)
    refund = next(f for f in tools.values() if " /orders/process-refund:" in f["description"])
    assert set(refund["parameters"]["required"]) == {"order_id", "amount", "reason"}
    assert refund["parameters"]["properties"]["amount"]["type"] == "number"
    lookup = next(f for f in tools.values() if " /users/lookup:" in f["description"])
    assert "required" not in lookup["parameters"], "email or user_id: neither is required alone"

    answered = 0
    for request in run.requests:
        messages = request.body["messages"]
        if messages[-1]["role"] == "tool":  # the result of the call the model made before
            assert messages[-1]["tool_call_id"] == messages[-2]["tool_calls"][0]["id"]
            assert "api_response" in json.loads(messages[-1]["content"])
            answered += 1
    assert answered == len(run.steps()) - len(run.episodes)
    assert all(set(s["action"]) == {"service", "endpoint", "method", "params"} for s in run.steps())


def test_servicebench_through_json_in_text(runs: dict[str, Run]) -> None:
    run = completed(runs["sb_text"])
    assert len(run.episodes) == 3 and all(e.success and e.score == 1.0 for e in run.episodes)
    assert all("tools" not in r.body for r in run.requests)
    assert "/inventory/price-history" in run.requests[0].body["messages"][0]["content"], \
        "without tools the catalogue is in the prompt"
    assert all(m["role"] != "tool" for r in run.requests for m in r.body["messages"])


def test_endpoint_refusing_tools_gets_json_in_text(runs: dict[str, Run]) -> None:
    run = completed(runs["sb_refused_tools"])
    [episode] = run.episodes
    assert episode.task == "return_and_refund" and episode.success and episode.score == 1.0
    with_tools = ["tools" in r.body for r in run.requests]
    assert with_tools[0] and not any(with_tools[1:])
    assert "JSON in text" in run.stderr


def test_unusable_reply_gets_one_correction_then_a_failed_turn(runs: dict[str, Run]) -> None:
    run = completed(runs["sb_correction"])
    [episode] = run.episodes
    failed, *played = episode.steps
    assert failed["action"] is None and failed["reward"] == "0.00" and failed["done"] is False
    assert "invalid model output" in failed["error"] and "no JSON object" in failed["error"]
    assert played and all(s["error"] is None for s in played)
    assert episode.success and episode.score == 1.0, "a turn without an action costs no reward"
    correction = run.requests[1].body["messages"][-1]
    assert correction["role"] == "tool" and "no_such_function" in correction["content"]


def test_model_errors_timeouts_and_malformed_bodies_are_retried(runs: dict[str, Run]) -> None:
    run = completed(runs["sb_flaky_model"])
    [episode] = run.episodes
    assert episode.success and episode.score == 1.0
    assert all(s["error"] is None for s in episode.steps)
    assert len(run.requests) == 5 + len(episode.steps)
    assert run.stderr.count("retrying") == 5
    for symptom in ("HTTP 500", "HTTP 429", "APITimeoutError", "no message", "unusable response"):
        assert symptom in run.stderr


def test_model_down_is_bounded_and_logged(runs: dict[str, Run], cards: list[TaskCard]) -> None:
    run = completed(runs["model_down"])
    assert [e.task for e in run.episodes] == ids(cards)
    for episode in run.episodes:
        assert episode.steps
        assert all("HTTP 503" in s["error"] and "Bearer ***" in s["error"] for s in episode.steps)
        if episode.env == "servicebench":
            assert not episode.success and episode.score == 0.0
            assert [s["action"] for s in episode.steps] == [None, None]
        else:
            assert all(s["action"] is not None for s in episode.steps), "the queue goes on, neutrally"
    tickets = sum(len(e.steps) for e in run.episodes if e.env == "support_queue")
    assert len(run.requests) == 2 * (2 * len(ids(cards, "servicebench")) + tickets), "2 attempts per turn"
    assert all(t["error"] for t in run.results["tasks"] if t["env"] == "servicebench")


# ----------------------------------------------------------------------------- Support Queue LLM path


def test_support_queue_invalid_output_is_retried_once(runs: dict[str, Run], cards: list[TaskCard],
                                                      heuristic_scores: dict[str, float]) -> None:
    run = completed(runs["sq_retry_once"])
    assert [e.task for e in run.episodes] == ids(cards, "support_queue")
    for episode in run.episodes:
        assert episode.success and all(s["error"] is None for s in episode.steps)
        assert episode.score == pytest.approx(heuristic_scores[episode.task], abs=5e-4)
    assert len(run.requests) == 2 * len(run.steps())
    first, retry = run.requests[0].body["messages"], run.requests[1].body["messages"]
    assert all(q in first[0]["content"] for q in ("billing", "trust_safety", "P4", "request_info"))
    assert retry[:2] == first
    assert retry[2] == {"role": "assistant", "content": INVALID_TRIAGE.content}
    assert retry[3]["role"] == "user" and "priority" in retry[3]["content"]


def test_support_queue_garbage_gets_the_neutral_action(runs: dict[str, Run], heuristic_scores: dict[str, float]) -> None:
    run = completed(runs["sq_garbage"])
    actions = {json.dumps(s["action"], sort_keys=True) for s in run.steps()}
    assert len(actions) == 1, "the neutral action does not depend on the ticket"
    assert all("invalid model output" in s["error"] for s in run.steps())
    assert len(run.requests) == 2 * len(run.steps()), "one retry per ticket, then the neutral action"
    for episode in run.episodes:
        assert episode.success, "every ticket was processed"
        assert episode.score < heuristic_scores[episode.task]
    assert fmean(e.score for e in run.episodes) < fmean(heuristic_scores.values()) - 0.25, \
        "a model emitting garbage must not score like the heuristic"


# ----------------------------------------------------------------------------- flags and configuration


def test_the_run_keeps_to_its_time_budget(runs: dict[str, Run], cards: list[TaskCard]) -> None:
    run = completed(runs["time_budget"])
    assert [e.task for e in run.episodes] == ids(cards), "every task still starts and ends"
    assert run.results["duration_s"] < TIME_BUDGET_S + 5
    assert len(run.requests) <= 2 * len(cards), "no model call once a task's share is spent"
    for episode, task in zip(run.episodes, run.results["tasks"]):
        if episode.env == "servicebench":
            assert not episode.success and "INFERENCE_TIME_BUDGET_S" in task["error"]
        else:
            assert episode.success and all("INFERENCE_TIME_BUDGET_S" in s["error"] for s in episode.steps)


def test_task_alias_seed_and_max_steps(runs: dict[str, Run]) -> None:
    run = completed(runs["flags"])
    [episode] = run.episodes
    assert episode.task == "billing_discrepancy" and len(episode.steps) == 2
    assert not episode.success and 0 < episode.score < 1
    [task] = run.results["tasks"]
    assert task["seed"] == 0 and task["steps"] == 2
    assert task["score"] == pytest.approx(sum(task["rewards"]))


def test_unreachable_environment_server(runs: dict[str, Run]) -> None:
    run = runs["no_server"]
    assert run.returncode == 1 and run.stdout == ""
    assert "cannot list the tasks" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    "args, env, complaint",
    [
        ((), {"MODEL_TIMEOUT_S": "soon"}, "MODEL_TIMEOUT_S"),
        ((), {"MODEL_TOOLS": "maybe"}, "MODEL_TOOLS"),
        (("--seed", "-1"), {}, "--seed"),
        (("--env", "chess"), {}, "--env"),
    ],
)
def test_bad_configuration_fails_before_any_work(tmp_path: Path, args: tuple[str, ...],
                                                 env: dict[str, str], complaint: str) -> None:
    done = subprocess.run([sys.executable, str(REPO / "inference.py"), *args], cwd=tmp_path,
                          env={**os.environ, **env, "HF_TOKEN": TOKEN}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert complaint in done.stderr and TOKEN not in done.stderr


# ----------------------------------------------------------------------------- pieces, in process


def test_json_is_found_wherever_the_model_put_it() -> None:
    from agents.parsing import ParseError, extract_json_object

    assert extract_json_object('{"a": 1}') == {"a": 1}
    assert extract_json_object('Sure!\n```json\n{"a": {"b": [1, 2]}}\n```\nDone.') == {"a": {"b": [1, 2]}}
    assert extract_json_object('<think>maybe {"a": 0}</think>I pick {"a": 2} then {"a": 3}') == {"a": 2}
    assert extract_json_object('<tool_call>{"name": "x", "arguments": {}}</tool_call>')["name"] == "x"
    for bad in ("", "no json here", "[1, 2]", '{"unterminated": '):
        with pytest.raises(ParseError):
            extract_json_object(bad)


def test_catalogue_tools_follow_the_endpoint_specs(live_server: str) -> None:
    from agents.catalogue import Catalogue

    with EnvHttpClient(live_server) as client:
        specs = client.reset(task_id="billing_discrepancy").observation.available_endpoints
    catalogue = Catalogue(specs)
    tools = catalogue.tools()
    assert len(tools) == len(specs) == len({t["function"]["name"] for t in tools})
    for spec, tool in zip(specs, tools):
        function = tool["function"]
        endpoint = catalogue.by_name[function["name"]]
        assert (endpoint.service, endpoint.endpoint, endpoint.method) == (spec["service"], spec["endpoint"], spec["method"])
        assert set(function["parameters"]["properties"]) == set(spec["params"])
        required = {name for name, p in spec["params"].items() if p["required"]}
        assert set(function["parameters"].get("required", [])) == required
        assert spec["endpoint"] in catalogue.as_text()


def test_log_lines_and_redaction() -> None:
    from agents.output import Redactor, format_end, format_start, format_step

    assert START.match(format_start("t", "servicebench", "org/model"))
    line = format_step(3, {"reason": "two\nlines \u2028 here"}, -0.0001, True, "bad\nthing")
    assert STEP.match(line) and len(line.splitlines()) == 1 and " reward=0.00 " in line
    assert line.endswith("error=bad thing")
    assert END.match(format_end(False, 0, 0.0, []))
    assert format_end(True, 2, 1, [0.5, 0.5]).endswith("score=1.000 rewards=0.50,0.50")
    redact = Redactor([TOKEN, ""])
    assert redact(f"key {TOKEN}!") == "key ***!"
    assert redact.data({"a": [TOKEN, 1], TOKEN: None}) == {"a": ["***", 1], "***": None}


def test_servicebench_conversation_stays_bounded(live_server: str) -> None:
    from agents.model import ModelReply, ToolCall
    from agents.servicebench_llm import HISTORY_EXCHANGES, RESULT_CHARS, ServiceBenchLLMAgent

    class ListingModel:
        """Always asks for the next page of users, and remembers what it was sent."""

        def __init__(self) -> None:
            self.sent: list[list[dict[str, Any]]] = []

        def complete(self, messages: list[dict[str, Any]], tools: Any, deadline: Any) -> ModelReply:
            self.sent.append(messages)
            call = ToolCall(f"call_{len(self.sent)}", "users_list", json.dumps({"page": len(self.sent)}))
            return ModelReply("", (call,))

    model = ListingModel()
    agent = ServiceBenchLLMAgent(model, "on", deadline=float("inf"))  # type: ignore[arg-type]
    with EnvHttpClient(live_server) as client:
        result = client.reset(task_id="billing_discrepancy")
        assert result.observation.info["max_steps"] > HISTORY_EXCHANGES + 2
        for _ in range(HISTORY_EXCHANGES + 2):
            decision = agent.act(result.observation)
            assert decision.action and decision.action["endpoint"] == "/users/list"
            result = client.step(decision.action)
    last = model.sent[-1]
    assert len(last) == 2 + 2 * HISTORY_EXCHANGES
    assert last[0]["role"] == "system" and "Task:" in last[1]["content"]
    assert last[2]["role"] == "assistant" and last[3]["tool_call_id"] == last[2]["tool_calls"][0]["id"]
    assert all(len(m["content"]) <= RESULT_CHARS for m in last if m["role"] == "tool")
