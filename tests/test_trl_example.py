"""examples/trl_environment.py: TRL's environment_factory contract, and whole episodes against a live server.

Most tests need no TRL and no model: they call the classes the way GRPOTrainer does
(no-argument constructor, `reset(**row)`, public methods as tools, `get_reward()` after the
episode). The last ones run tests/trl_rollouts.py in the TRL venv that .ci/run builds: TRL's
own GRPOTrainer plays whole episodes of both environments, and its rewards are compared with
the server's scores of the same episodes.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import httpx
import pytest
from server_process import CHILD_TIMEOUT, free_port
from side_venvs import side_python

from servicebench_support_queue.action_tools import TOOLS, TOOLS_BY_NAME
from servicebench_support_queue.agents.servicebench_llm import FAULTS_RULES
from servicebench_support_queue.client import EnvHttpClient
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.support_queue.heuristic import triage

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "trl_environment", REPO / "examples" / "trl_environment.py"
)
trl_environment = importlib.util.module_from_spec(_spec)
sys.modules["trl_environment"] = trl_environment
_spec.loader.exec_module(trl_environment)

ServiceBenchToolEnv = trl_environment.ServiceBenchToolEnv
SupportQueueToolEnv = trl_environment.SupportQueueToolEnv
JSON_SCALARS = {str, int, float, bool, type(None)}


@pytest.fixture(autouse=True)
def server_url(live_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ENV_BASE_URL", live_server)
    return live_server


def tools_of(env: object) -> dict[str, Any]:
    """What TRL 1.16 exposes as tools: the class's public functions but reset and get_reward."""
    return {
        name: getattr(env, name)
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if not name.startswith("_") and name not in ("reset", "get_reward")
    }


def json_schema_able(hint: Any) -> bool:
    origin, args = get_origin(hint), get_args(hint)
    if origin is None:
        return hint in JSON_SCALARS
    if origin is Literal:
        return all(type(arg) in JSON_SCALARS for arg in args)
    if origin in (Union, types.UnionType, list):
        return all(json_schema_able(arg) for arg in args)
    if origin is dict:
        return args[0] is str and json_schema_able(args[1])
    return False


@pytest.mark.parametrize("factory", [ServiceBenchToolEnv, SupportQueueToolEnv])
def test_classes_have_the_shape_trl_expects(factory: type) -> None:
    env = factory()
    assert env.get_reward() == 0.0
    assert inspect.signature(env.reset).parameters["kwargs"].kind is inspect.Parameter.VAR_KEYWORD
    tools = tools_of(env)
    assert tools
    for name, method in tools.items():
        doc = inspect.getdoc(method) or ""
        description, _, args_block = doc.partition("Args:")
        assert description.strip(), f"{name} needs a description"
        hints = get_type_hints(method)
        for parameter in inspect.signature(method).parameters.values():
            assert parameter.name in hints, f"{name}({parameter.name}) needs a type hint"
            assert json_schema_able(hints[parameter.name]), (
                f"{name}({parameter.name}): {hints[parameter.name]}"
            )
            assert re.search(rf"^\s+{parameter.name}: \S", args_block, re.M), (
                f"{name}: document {parameter.name}"
            )


def test_servicebench_has_one_tool_per_catalogue_endpoint() -> None:
    env = ServiceBenchToolEnv()
    samples = {
        "email": "jane.doe@example.com",
        "user_id": "USR-001",
        "page": 1,
        "per_page": 5,
        "updates": {"notes": "called about a late parcel"},
        "order_id": "ORD-1005",
        "new_status": "returned",
        "amount": 1.0,
        "reason": "goodwill",
        "sku": "SKU-445",
        "adjustment": 1,
        "idempotency_key": "trl-sample-1",  # every write's optional key
    }
    tools = tools_of(env)
    assert sorted(tools) == sorted(tool.name for tool in TOOLS["servicebench"])
    reset = httpx.post(f"{trl_environment.env_base_url()}/reset", json={}, timeout=120)
    catalogue = reset.json()["observation"]
    shown = sorted(
        f"{e['method']} {e['service']} {e['endpoint']}" for e in catalogue["available_endpoints"]
    )
    called = []
    for name, tool in sorted(tools.items()):
        if TOOLS_BY_NAME[name].route not in routes_of(catalogue):  # another task's service
            continue
        env.reset(task_id="billing_discrepancy")  # a fresh episode each: writes must not interfere
        answer = json.loads(tool(**{p: samples[p] for p in inspect.signature(tool).parameters}))
        assert answer["status_code"] == 200, (name, answer)
        called.append(answer["call"])
    assert sorted(called) == shown


def routes_of(observation: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(e["service"], e["endpoint"], e["method"]) for e in observation["available_endpoints"]}


def _field(text: str, pattern: str) -> str:
    return re.search(pattern, text).group(0)


def test_whole_servicebench_episode_through_the_tools(server_url: str) -> None:
    card = next(
        c
        for c in httpx.get(f"{server_url}/tasks").json()["tasks"]
        if c["id"] == "return_and_refund"
    )
    env = ServiceBenchToolEnv()
    text = env.reset(task_id="return_and_refund", prompt=[{"role": "user", "content": "ignored"}])
    assert text.startswith("\n\n" + card["description"]) and str(card["max_steps"]) in text
    email, order_id, sku = (
        _field(text, r"[\w.]+@[\w.]+\w"),
        _field(text, r"ORD-\d+"),
        _field(text, r"SKU-\d+"),
    )
    user = json.loads(env.lookup_user(email=email))["response"]
    order = json.loads(env.lookup_order(order_id=order_id))["response"]
    assert order["user_id"] == user["user_id"] and order["return_eligible"] is True
    json.loads(env.lookup_product(sku=sku))
    price = next(item["unit_price"] for item in order["items"] if item["sku"] == sku)
    refund = json.loads(
        env.process_refund(order_id=order_id, amount=price, reason="arrived damaged")
    )
    assert refund["status_code"] == 200 and not env.done
    final = json.loads(env.update_order_status(order_id=order_id, new_status="returned"))
    assert final["task_completed"] and final["episode_done"] and env.done
    assert env.get_reward() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="over"):
        env.lookup_order(order_id=order_id)
    env.reset()  # the next rollout reuses the instance (and its connection)
    assert (env.get_reward(), env.done, env.task_id) == (0.0, False, "order_status_lookup")
    assert json.loads(env.lookup_order(order_id="ORD-0000"))["status_code"] == 404
    assert env.get_reward() == 0.0 and not env.done


def shown_ticket(text: str, position: int) -> dict[str, Any]:
    """The ticket a reset or triage answer shows, announced as `Ticket <position> of <n>:`."""
    start = _field(text, rf"Ticket {position} of \d+:\n")
    return json.JSONDecoder().raw_decode(text, text.index(start) + len(start))[0]


def test_whole_support_queue_episode_through_triage(server_url: str) -> None:
    card = next(
        c
        for c in httpx.get(f"{server_url}/tasks").json()["tasks"]
        if c["id"] == "easy_inbox_cleanup"
    )
    env = SupportQueueToolEnv()
    text = env.reset(task_id="easy_inbox_cleanup")
    assert text.startswith("\n\n"), "TRL appends it to the prompt's last message as it is"
    assert f"Ticket 1 of {card['max_steps']}:" in text
    with pytest.raises(ValueError):
        env.triage(priority="P9", queue="billing", disposition="respond", summary="", response="")
    seen, rewards = [shown_ticket(text, 1)["ticket_id"]], []
    while not env.done:
        answer = env.triage(
            priority="P3",
            queue="technical",
            disposition="request_info",
            summary="Customer reports a problem; details needed.",
            response="Thanks for reaching out. Could you share the exact error and when it started?",
            confidence=0.4,
        )
        feedback = json.loads(_field(answer, r"(?<=Feedback on that ticket: ).*"))
        assert feedback, "each triage is graded"
        rewards.append(feedback["reward"])
        assert env.get_reward() == pytest.approx(sum(rewards) / card["max_steps"], abs=1e-4), (
            "an unfinished queue counts its untriaged tickets as 0"
        )
        if not env.done:
            seen.append(shown_ticket(answer, len(seen) + 1)["ticket_id"])
    assert len(rewards) == card["max_steps"] == len(seen) == len(set(seen))
    assert 0.0 <= env.get_reward() <= 1.0
    assert "The queue is done." in answer
    with pytest.raises(ValueError, match="over"):
        env.triage(
            priority="P1", queue="security", disposition="escalate", summary="x", response="y"
        )


def test_an_unreachable_server_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENV_BASE_URL", f"http://127.0.0.1:{free_port()}")
    with pytest.raises(ConnectionError, match="127.0.0.1"):
        ServiceBenchToolEnv().reset()


def test_the_server_url_defaults_to_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENV_BASE_URL")
    assert trl_environment.env_base_url() == "http://localhost:8000"
    monkeypatch.setenv("ENV_BASE_URL", "http://example.test:9000/")
    assert trl_environment.env_base_url() == "http://example.test:9000"


# ----------------------------------------------------------------------------- the command line


def example_cli(*args: str, server: str) -> subprocess.CompletedProcess[str]:
    """examples/trl_environment.py as a user runs it, in this project's environment (no trl, no datasets)."""
    return subprocess.run(
        [sys.executable, str(REPO / "examples" / "trl_environment.py"), *args],
        env={**os.environ, "ENV_BASE_URL": server},
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
    )


def test_help_needs_neither_trl_nor_datasets(server_url: str) -> None:
    for missing in ("trl", "datasets"):
        assert importlib.util.find_spec(missing) is None, f"{missing} is installed here"
    done = example_cli("--help", server=server_url)
    assert done.returncode == 0, done.stderr
    assert "--task-id" in done.stdout and "every task of --env" in " ".join(done.stdout.split())


def test_without_a_server_or_without_trl_the_command_says_what_is_missing(server_url: str) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    done = example_cli("--dry-run", server=closed)
    assert (done.returncode, done.stdout) == (1, "")
    assert f"cannot list the tasks: environment server {closed} unreachable" in done.stderr
    assert "Traceback" not in done.stderr
    done = example_cli("--rows", "2", server=server_url)  # training, in an environment without trl
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "training needs trl and datasets" in done.stderr


def dry_run(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    """The rows `--dry-run` prints (main in this process, which has the module loaded)."""
    capsys.readouterr()
    trl_environment.main(["--dry-run", *args])
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_by_default_every_task_of_both_environments_is_trained_on(
    capsys: pytest.CaptureFixture[str], cards: list
) -> None:
    rows = dry_run(capsys, "--rows", str(2 * len(cards)))
    assert [(r["environment"], r["task_id"]) for r in rows] == [(c.env, c.id) for c in cards] * 2
    assert [r["seed"] for r in rows] == [1] * len(cards) + [2] * len(cards)
    assert all(r["prompt"][0]["role"] == "user" for r in rows)


def test_task_ids_and_one_environment_narrow_the_rows(
    capsys: pytest.CaptureFixture[str], cards: list
) -> None:
    servicebench = [c.id for c in cards if c.env == "servicebench"]
    rows = dry_run(capsys, "--env", "servicebench", "--rows", "4")
    assert [r["task_id"] for r in rows] == (servicebench * 2)[:4]
    assert all("environment" not in r for r in rows), "one class: no routing column"
    assert dry_run(capsys, "--env", "support_queue", "--task-id", "all", "--rows", "3") == dry_run(
        capsys, "--env", "support_queue", "--rows", "3"
    )
    assert len({r["task_id"] for r in dry_run(capsys, "--task-id", "all")}) == len(cards)
    rows = dry_run(capsys, "--task-id", "3", "--task-id", "hard_exec_escalations")
    assert {r["task_id"] for r in rows} == {"billing_discrepancy", "hard_exec_escalations"}
    assert {r["environment"] for r in rows} == {"servicebench", "support_queue"}
    refusals = {
        ("--env", "servicebench", "--task-id", "hard_exec_escalations"): "no task "
        "'hard_exec_escalations' in --env servicebench",
        ("--rows", "0"): "--rows must be at least 1",
    }
    for bad, complaint in refusals.items():
        with pytest.raises(SystemExit) as exit_info:
            dry_run(capsys, *bad)
        assert exit_info.value.code == 2 and complaint in capsys.readouterr().err


def test_faults_go_into_the_servicebench_rows_from_the_flag_or_the_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SERVICEBENCH_FAULTS", raising=False)
    assert all("faults" not in row for row in dry_run(capsys, "--rows", "20"))
    rows = dry_run(capsys, "--rows", "20", "--faults", "light")
    assert {r["environment"] for r in rows} == {"servicebench", "support_queue"}
    for row in rows:
        assert row.get("faults") == ("light" if row["environment"] == "servicebench" else None)
    monkeypatch.setenv("SERVICEBENCH_FAULTS", "heavy")
    rows = dry_run(capsys, "--env", "servicebench", "--rows", "3")
    assert [r["faults"] for r in rows] == ["heavy"] * 3
    assert all("faults" not in r for r in dry_run(capsys, "--rows", "3", "--faults", "off"))
    for bad, complaint in {
        ("--env", "support_queue", "--faults", "light"): "Support Queue has none",
        ("--faults", "loud"): "invalid choice: 'loud'",
    }.items():
        with pytest.raises(SystemExit) as exit_info:
            dry_run(capsys, *bad)
        assert exit_info.value.code == 2 and complaint in capsys.readouterr().err
    monkeypatch.setenv("SERVICEBENCH_FAULTS", "sometimes")
    with pytest.raises(SystemExit):
        dry_run(capsys, "--rows", "1")
    assert "SERVICEBENCH_FAULTS must be one of off, light, heavy" in capsys.readouterr().err


def test_a_servicebench_episode_with_faults_through_the_tools(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row's `faults` reaches the server; each answer shows a fault as the service gave it
    (a 429 with its retry_after_steps), and retrying every fault completes the task."""
    monkeypatch.delenv("SERVICEBENCH_FAULTS", raising=False)
    env = ServiceBenchToolEnv()
    assert FAULTS_RULES not in env.reset(task_id="order_status_lookup", seed=1)
    assert env._client.state().fault_level is None  # off: the state is as before faults
    statuses: list[int] = []
    for seed in range(1, 7):
        text = env.reset(task_id="order_status_lookup", seed=seed, faults="heavy")
        assert FAULTS_RULES in text and env._client.state().fault_level == "heavy"
        email, order_id = _field(text, r"[\w.]+@[\w.]+\w"), _field(text, r"ORD-\d+")
        for tool, params in (
            (env.lookup_user, {"email": email}),
            (env.lookup_order, {"order_id": order_id}),
        ):
            while True:  # the schedule never faults one route more than twice in a row
                answer = json.loads(tool(**params))
                statuses.append(answer["status_code"])
                if answer["status_code"] == 429:
                    assert answer["retry_after_steps"] >= 1 and answer["response"] is None
                if answer["status_code"] not in (503, 429, 504):
                    break
        assert env.done and env.get_reward() == pytest.approx(1.0), (seed, statuses)
    assert 429 in statuses, "six heavy episodes meet a rate limit"


def test_the_factory_is_one_class_or_both_by_name() -> None:
    assert trl_environment.environment_factory("servicebench") is ServiceBenchToolEnv
    assert trl_environment.environment_factory("both") == {
        "servicebench": ServiceBenchToolEnv,
        "support_queue": SupportQueueToolEnv,
    }


# ----------------------------------------------------------------------------- through TRL itself

STOP_EARLY = "[script: stop after one call]"  # the markers tests/trl_rollouts.py puts in prompts
BAD_CALL_FIRST = "[script: an invalid call first]"


def server_score(client: EnvHttpClient, env: str, task_id: str, seed: int, prompt: str) -> float:
    """What the server scores the rollout's policy on this task, played over plain HTTP.

    The oracle (ServiceBench) or the heuristic (Support Queue), as the script in the TRL
    run plays them; a rollout told to stop after one call triages only the first ticket.
    """
    result = client.reset(env=env, task_id=task_id, seed=seed)
    history = [result.observation]
    while not result.done:
        if env == "servicebench":
            action = next_action(history)
            if action is None:
                break
        else:
            action = triage(result.observation)
        result = client.step(action)
        history.append(result.observation)
        if STOP_EARLY in prompt:
            break
    state = client.state()
    if env == "servicebench":
        return state.cumulative_reward  # the server's running score, in [0, 1]
    if result.done:
        return state.average_reward  # a finished queue: the server's episode score
    return state.cumulative_reward / state.total_tickets  # unfinished: untriaged tickets count 0


@pytest.fixture(scope="module")
def trl_run(live_server: str) -> dict[str, Any]:
    trl_python = side_python(
        "TRL_VENV", "the example against TRL", "pip install -r .ci/trl-requirements.txt -e ."
    )
    done = subprocess.run(
        [str(trl_python), str(REPO / "tests" / "trl_rollouts.py")],
        env={**os.environ, "ENV_BASE_URL": live_server, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


def test_trl_finds_both_environments_tools_and_their_rewards(trl_run: dict[str, Any]) -> None:
    assert trl_run["reward_sources"] == ["ServiceBenchToolEnv", "SupportQueueToolEnv"], (
        "no reward_funcs passed: get_reward is each environment's reward source"
    )
    assert trl_run["tools"] == {
        "servicebench": sorted(tool.name for tool in TOOLS["servicebench"]),
        "support_queue": ["triage"],
    }


def test_every_rollout_is_rewarded_with_the_servers_score(
    trl_run: dict[str, Any], live_server: str
) -> None:
    rollouts = trl_run["rollouts"]
    assert {r["environment"] for r in rollouts} == {"servicebench", "support_queue"}
    with EnvHttpClient(live_server) as client:
        for rollout in rollouts:
            env = rollout["environment"]
            own, other = (0, 1) if env == "servicebench" else (1, 0)
            assert rollout["class"] == type(trl_environment.ENVIRONMENTS[env]()).__name__
            assert rollout["rewards"][other] is None, "the other environment's source abstains"
            expected = server_score(
                client, env, rollout["task_id"], rollout["seed"], rollout["prompt"]
            )
            assert rollout["rewards"][own] == pytest.approx(expected, abs=1e-6), rollout
    solved = [r for r in rollouts if r["environment"] == "servicebench"]
    assert solved and all(r["rewards"][0] == pytest.approx(1.0) and r["done"] for r in solved)


def test_stopping_early_and_a_bad_call_are_handled_as_trl_does(trl_run: dict[str, Any]) -> None:
    rollouts = trl_run["rollouts"]
    stopped = [r for r in rollouts if STOP_EARLY in r["prompt"]]
    assert stopped and all(not r["done"] and 0 < r["rewards"][1] < 1 for r in stopped)
    bad = [r for r in rollouts if BAD_CALL_FIRST in r["prompt"]]
    assert bad and all(r["done"] for r in bad)
    assert trl_run["metrics"]["tools/failure_frequency"] > 0, "TRL saw the invalid call fail"
