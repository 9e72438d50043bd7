"""examples/trl_environment.py: TRL's environment_factory contract, and whole episodes against a live server.

No TRL, no model: the tests call the classes the way GRPOTrainer does (no-argument
constructor, `reset(**row)`, public methods as tools, `env.reward` read afterwards).
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import sys
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import httpx
import pytest
from server_process import free_port

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
    """What TRL exposes as tools: every public bound method except reset."""
    return {
        name: member
        for name, member in inspect.getmembers(env, predicate=inspect.ismethod)
        if not name.startswith("_") and name != "reset"
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
    assert env.reward == 0.0
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
    }
    called = []
    for name, tool in sorted(tools_of(env).items()):
        env.reset(task_id="billing_discrepancy")  # a fresh episode each: writes must not interfere
        answer = json.loads(tool(**{p: samples[p] for p in inspect.signature(tool).parameters}))
        assert answer["status_code"] == 200, (name, answer)
        called.append(answer["call"])
    catalogue = httpx.post(f"{trl_environment.env_base_url()}/reset", json={}).json()["observation"]
    expected = sorted(
        f"{e['method']} {e['service']} {e['endpoint']}" for e in catalogue["available_endpoints"]
    )
    assert sorted(called) == expected


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
    assert text.startswith(card["description"]) and str(card["max_steps"]) in text
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
    assert env.reward == pytest.approx(1.0)
    assert trl_environment.reward_from_env([env]) == [env.reward]
    with pytest.raises(ValueError, match="over"):
        env.lookup_order(order_id=order_id)
    env.reset()  # the next rollout reuses the instance (and its connection)
    assert (env.reward, env.done, env.task_id) == (0.0, False, "order_status_lookup")
    assert json.loads(env.lookup_order(order_id="ORD-0000"))["status_code"] == 404
    assert env.reward == 0.0 and not env.done


def test_whole_support_queue_episode_through_triage(server_url: str) -> None:
    card = next(
        c
        for c in httpx.get(f"{server_url}/tasks").json()["tasks"]
        if c["id"] == "easy_inbox_cleanup"
    )
    env = SupportQueueToolEnv()
    text = env.reset(task_id="easy_inbox_cleanup")
    assert f"Ticket 1 of {card['max_steps']}" in text
    with pytest.raises(ValueError):
        env.triage(priority="P9", queue="billing", disposition="respond", summary="", response="")
    seen, rewards = [_field(text, r"Ticket 1 of \d+: \S+")], []
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
        rewards.append(env.reward)
        if not env.done:
            seen.append(_field(answer, rf"Ticket {len(seen) + 1} of \d+: \S+"))
    assert len(rewards) == card["max_steps"] == len(seen) == len(set(seen))
    assert 0.0 <= env.reward <= 1.0
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
