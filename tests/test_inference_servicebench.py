"""inference.py's ServiceBench LLM agent against scripted fake models: tools, JSON in text, corrections."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from fake_openai import Reply, Status, Text, ToolCalls
from inference_support import (
    MODEL,
    OracleBrain,
    Run,
    Scenario,
    assert_clean,
    completed,
    ids,
)

from servicebench_support_queue.client import EnvHttpClient
from servicebench_support_queue.models import TaskCard


def refuse_tools(brain: Any) -> Any:
    def answer(body: dict[str, Any]) -> Reply:
        return Status(400, "tools are not supported") if "tools" in body else brain(body)

    return answer


SCENARIOS: dict[str, Scenario] = {
    "sb_tools": Scenario(("--env", "servicebench"), lambda c: ([], OracleBrain(c, "tools"))),
    "sb_text": Scenario(
        ("--env", "servicebench"),
        lambda c: ([], OracleBrain(c, "text")),
        env=(("MODEL_TOOLS", "off"),),
    ),
    "sb_refused_tools": Scenario(
        ("--task", "return_and_refund"), lambda c: ([], refuse_tools(OracleBrain(c, "text")))
    ),
    "sb_correction": Scenario(
        ("--task", "1"),
        lambda c: (
            [ToolCalls((("no_such_function", {}),)), Text("Let me think about it.")],
            OracleBrain(c, "tools"),
        ),
    ),
}


def test_every_run_logs_only_structured_lines_and_hides_the_token(runs: dict[str, Run]) -> None:
    assert_clean(runs)


def test_servicebench_through_tool_calls(
    runs: dict[str, Run], cards: list[TaskCard], live_server: str
) -> None:
    run = completed(runs["sb_tools"])
    assert [e.task for e in run.episodes] == ids(cards, "servicebench")
    assert all(e.success and e.score == 1.0 and e.model == MODEL for e in run.episodes)
    assert len(run.requests) == len(run.steps()), "one model call per step"

    served = {
        tool["function"]["name"]: tool
        for tool in httpx.get(f"{live_server}/servicebench/tools").json()
    }
    for request in run.requests:  # the server's own strict tools, those of the episode's services
        names = [tool["function"]["name"] for tool in request.body["tools"]]
        assert request.body["tools"] == [served[name] for name in names]
        assert len(names) in (11, len(served)), "the seed's eleven endpoints, or all of them"
    tools = {name: tool["function"] for name, tool in served.items()}
    assert len(tools) == len(served) and all(f["strict"] is True for f in tools.values())
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name) for name in tools)
    refund = tools["process_refund"]
    assert set(refund["parameters"]["required"]) == {
        "order_id",
        "amount",
        "reason",
        "idempotency_key",  # strict mode lists every parameter; the key is optional: nullable
    }
    assert refund["parameters"]["properties"]["idempotency_key"]["type"] == ["string", "null"]
    assert refund["parameters"]["properties"]["amount"]["type"] == "number"
    lookup = tools["lookup_user"]["parameters"]
    assert all(  # email or user_id: neither is required alone, so each may be null
        lookup["properties"][name]["type"] == ["string", "null"] for name in ("email", "user_id")
    )
    calls = [
        json.loads(m["tool_calls"][0]["function"]["arguments"])
        for r in run.requests
        for m in r.body["messages"]
        if m.get("tool_calls")
    ]
    assert any(None in call.values() for call in calls), "the model sent nulls, as strict mode does"

    answered = 0
    for request in run.requests:
        messages = request.body["messages"]
        if messages[-1]["role"] == "tool":  # the result of the call the model made before
            assert messages[-1]["tool_call_id"] == messages[-2]["tool_calls"][0]["id"]
            assert "api_response" in json.loads(messages[-1]["content"])
            answered += 1
    assert answered == len(run.steps()) - len(run.episodes)
    assert all(set(s["action"]) == {"service", "endpoint", "method", "params"} for s in run.steps())


def test_servicebench_through_json_in_text(runs: dict[str, Run], cards: list[TaskCard]) -> None:
    run = completed(runs["sb_text"])
    assert [e.task for e in run.episodes] == ids(cards, "servicebench")
    assert all(e.success and e.score == 1.0 for e in run.episodes)
    assert all("tools" not in r.body for r in run.requests)
    assert "/inventory/price-history" in run.requests[0].body["messages"][0]["content"], (
        "without tools the catalogue is in the prompt"
    )
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


# ----------------------------------------------------------------------------- pieces, in process


def test_catalogue_tools_follow_the_endpoint_specs(live_server: str) -> None:
    from servicebench_support_queue.agents.catalogue import Catalogue

    with EnvHttpClient(live_server) as client:
        specs = client.reset(task_id="billing_discrepancy").observation.available_endpoints
    catalogue = Catalogue(specs)
    tools = catalogue.tools()
    assert len(tools) == len(specs) == len({t["function"]["name"] for t in tools})
    for spec, tool in zip(specs, tools, strict=True):
        function = tool["function"]
        assert function["name"] == spec["tool"]
        assert catalogue.by_name[function["name"]].route == (
            spec["service"],
            spec["endpoint"],
            spec["method"],
        )
        parameters = function["parameters"]
        # every write's tool takes an idempotency_key, which the served catalogue declares only
        # with faults on (with faults off it is as it was before the key existed)
        key = {"idempotency_key"} if spec["method"] != "GET" else set()
        declared = set(spec["params"]) | key
        assert set(parameters["properties"]) == set(parameters["required"]) == declared
        optional = {name for name, p in spec["params"].items() if not p["required"]} | key
        nullable = {
            name
            for name, p in parameters["properties"].items()
            if "null" in str(p.get("type")) or {"type": "null"} in p.get("anyOf", [])
        }
        assert nullable == optional
        assert spec["endpoint"] in catalogue.as_text()
    arguments = {"page": None, "per_page": 2}  # a strict model's null means "absent"
    assert catalogue.action("list_users", arguments) == {
        "service": "user",
        "endpoint": "/users/list",
        "method": "GET",
        "params": {"per_page": 2},
    }


def test_servicebench_conversation_stays_bounded(live_server: str) -> None:
    from servicebench_support_queue.agents.model import ModelReply, ToolCall
    from servicebench_support_queue.agents.servicebench_llm import (
        HISTORY_EXCHANGES,
        RESULT_CHARS,
        ServiceBenchLLMAgent,
    )

    class ListingModel:
        """Always asks for the next page of users, and remembers what it was sent."""

        def __init__(self) -> None:
            self.sent: list[list[dict[str, Any]]] = []

        def complete(self, messages: list[dict[str, Any]], tools: Any, deadline: Any) -> ModelReply:
            self.sent.append(messages)
            call = ToolCall(
                f"call_{len(self.sent)}", "list_users", json.dumps({"page": len(self.sent)})
            )
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
    assert (
        last[2]["role"] == "assistant" and last[3]["tool_call_id"] == last[2]["tool_calls"][0]["id"]
    )
    assert all(len(m["content"]) <= RESULT_CHARS for m in last if m["role"] == "tool")
