"""No answer before the end (issue 20, item 6): nothing served shows a graded value early.

Every task of both environments is played over HTTP on the canonical seed, training
seeds 1-50 and held-out seeds 100,000-100,050 (some policies on a subset), by policies
that reach the states an agent reaches: the reference policy; one that refunds a cent
over or under the answer and then plays on to the end of its budget; the gold triage;
the heuristic triage; and a probe that writes every fact of the task's tickets into each
ticket's texts (it would see which are other tickets' facts if the feedback named them).
Each observation and state before the episode is done is searched for the graded values
(tests/answer_leaks.py); the state and the final observation after it must show them.
A subset plays over the WebSocket and as MCP tools, and the listings (tasks, tools,
metadata, schema, MCP prompts) are searched too.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import pytest
from answer_leaks import Secrets, amounts_in, leaks, text_leaks
from fastapi.testclient import TestClient
from mcp_support import Session

from servicebench_support_queue.mock_services import ENDPOINT_CATALOGUE, ENDPOINTS, to_cents
from servicebench_support_queue.mock_services.paths import ORDERS_PROCESS_REFUND
from servicebench_support_queue.models import DISPOSITIONS, PRIORITIES, QUEUES
from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.servicebench.environment import ServiceBenchEnvironment
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.servicebench.proof import play_oracle
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.heuristic import triage
from servicebench_support_queue.server.support_queue.proof import gold_action

SEEDS = (None, 0, *range(1, 51), *range(100_000, 100_051))
SOME_SEEDS = (None, 0, *range(1, 11), *range(100_000, 100_011))
FEW_SEEDS = (None, 1, 2, 100_000, 100_001)
SERVICEBENCH_TASKS = tuple(card.id for card in ServiceBenchEnvironment.tasks)
REFUND_SEED_TASKS = ("return_and_refund", "billing_discrepancy")
"""The seed's tasks whose every variant ends in a refund (the request tasks' families vary)."""
SUPPORT_QUEUE_TASKS = tuple(card.id for card in SupportQueueEnvironment.tasks)
PADDING = {"service": "user", "endpoint": "/users/list", "method": "GET", "params": {}}
TOOL_OF = {(entry.service, entry.path): entry.tool for entry in ENDPOINTS}
Json = dict[str, Any]
Policy = Callable[[list[Json]], Json]


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(Settings()))


# ------------------------------------------------------------------ transports


class Http:
    """Reset, step and state over HTTP; each answer whole, as the agent receives it."""

    def __init__(self, client: TestClient) -> None:
        self.client, self.episode_id = client, ""

    def reset(self, task_id: str, seed: int | None) -> tuple[Json, Json, bool]:
        body = {"task_id": task_id} | ({} if seed is None else {"seed": seed})
        answer = self.client.post("/reset", json=body).json()
        self.episode_id = answer["episode_id"]
        return answer, answer["observation"], answer["done"]

    def step(self, action: Json) -> tuple[Json, Json, bool]:
        answer = self.client.post("/step", json={"episode_id": self.episode_id, "action": action})
        assert answer.status_code == 200, answer.text
        return answer.json(), answer.json()["observation"], answer.json()["done"]

    def state(self) -> Json:
        return self.client.get("/state", params={"episode_id": self.episode_id}).json()


class WebSocket(Http):
    """The same over OpenEnv's WebSocket protocol (state included)."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket

    def _exchange(self, message: Json) -> Json:
        self.socket.send_json(message)
        answer = self.socket.receive_json()
        assert answer["type"] != "error", answer
        return answer

    def reset(self, task_id: str, seed: int | None) -> tuple[Json, Json, bool]:
        body = {"task_id": task_id} | ({} if seed is None else {"seed": seed})
        answer = self._exchange({"type": "reset", "data": body})
        return answer, answer["data"]["observation"], answer["data"]["done"]

    def step(self, action: Json) -> tuple[Json, Json, bool]:
        answer = self._exchange({"type": "step", "data": action})
        return answer, answer["data"]["observation"], answer["data"]["done"]

    def state(self) -> Json:
        return self._exchange({"type": "state"})["data"]


class Mcp(Http):
    """The same as MCP tools: prompts/get starts the task, tools/call steps it."""

    def __init__(self, client: TestClient) -> None:
        self.client, self.session = client, Session(client)
        self.episode_id = self.session.id

    def reset(self, task_id: str, seed: int | None) -> tuple[Json, Json, bool]:
        arguments = {} if seed is None else {"seed": str(seed)}
        got = self.session.result("prompts/get", {"name": task_id, "arguments": arguments})
        text = got["messages"][0]["content"]["text"]
        first = json.loads(text.split("The episode's first observation:\n", 1)[1])
        return {"text": text}, first, False

    def step(self, action: Json) -> tuple[Json, Json, bool]:
        if "service" in action:
            name, arguments = TOOL_OF[(action["service"], action["endpoint"])], action["params"]
        else:
            name, arguments = "triage", action
        result = self.session.call(name, **arguments)
        assert result["isError"] is False, result
        content = result["structuredContent"]
        assert json.loads(result["content"][0]["text"]) == content == result["data"]
        return content, content["observation"], content["done"]


# ------------------------------------------------------------------ policies


def oracle(history: list[Json]) -> Json:
    action = next_action(history)
    return PADDING if action is None else action.model_dump(exclude={"metadata"})


def near_miss(delta_cents: int) -> Policy:
    """The reference policy with its refund `delta_cents` off; then on to the end of its budget."""

    def choose(history: list[Json]) -> Json:
        refunded = any(o.get("api_response", {}).get("data", {}).get("refund") for o in history[1:])
        action = next_action(history)
        if action is None or (refunded and action.endpoint == ORDERS_PROCESS_REFUND):
            return PADDING
        chosen = action.model_dump(exclude={"metadata"})
        if action.endpoint == ORDERS_PROCESS_REFUND:
            cents = to_cents(float(action.params["amount"])) + delta_cents
            chosen["params"] = {**chosen["params"], "amount": cents / 100}
        return chosen

    return choose


def ticket_of(task_id: str, seed: int | None, observation: Json) -> Any:
    variant = SupportQueueEnvironment.variant_for(task_id, seed)
    shown = observation["ticket"]["ticket_id"]
    return next(t for t in variant.task.tickets if t.ticket_id == shown)


def support_policies(task_id: str, seed: int | None) -> dict[str, Policy]:
    tickets = SupportQueueEnvironment.variant_for(task_id, seed).task.tickets
    every_fact = ". ".join(f[0] for t in tickets for f in t.summary_facts + t.response_facts)
    probe = {"priority": "P2", "queue": "technical", "disposition": "respond"}
    return {
        "gold": lambda h: gold_action(ticket_of(task_id, seed, h[-1])).model_dump(
            exclude={"metadata"}
        ),
        "heuristic": lambda h: triage(h[-1]).model_dump(exclude={"metadata"}),
        "probe": lambda h: probe | {"summary": every_fact[:4000], "response": every_fact[:4000]},
    }


# ------------------------------------------------------------------ what is secret when


def servicebench_secrets(task_id: str, seed: int | None) -> Secrets:
    variant = ServiceBenchEnvironment.variant_for(task_id, seed)
    spec = variant.spec
    cents = {to_cents(spec.refund_amount)} if spec.refund_amount is not None else set()
    texts = {spec.target_status.casefold()} if spec.target_status else set()
    return Secrets(cents | set(variant.hidden_cents), texts).unless_public([spec.card.description])


def support_secrets(task_id: str, seed: int | None, graded: int) -> Secrets:
    """With `graded` tickets graded: every ticket's gold texts, and the facts of those to come."""
    task = SupportQueueEnvironment.variant_for(task_id, seed).task
    texts = set()
    for ticket in task.tickets:
        texts |= {ticket.gold.rationale, ticket.gold_summary, ticket.gold_response}
        texts |= {note.note for note in ticket.unsafe}
    for ticket in task.tickets[graded:]:
        texts |= {p for fact in ticket.summary_facts + ticket.response_facts for p in fact}
    shown = task.tickets[: graded + 1]
    public = [task.instructions, task.card.title, task.card.description]
    public += [*PRIORITIES, *QUEUES, *DISPOSITIONS]
    public += [f"{t.public_text}\n{t.customer_tier}\n{t.product_area}" for t in shown]
    return Secrets(set(), {text.casefold() for text in texts}).unless_public(public)


@functools.lru_cache(maxsize=64)
def secrets_for(task_id: str, seed: int | None, graded: int) -> Secrets:
    if task_id in SERVICEBENCH_TASKS:
        return servicebench_secrets(task_id, seed)
    return support_secrets(task_id, seed, graded)


# ------------------------------------------------------------------ playing and searching


def play(transport: Http, task_id: str, seed: int | None, policy: Policy) -> tuple[Json, Json]:
    """Play one episode, searching everything served before it is done; the final (state,
    observation). An amount the agent already has (a call's answer stated it, or it sent
    it) is no longer secret: an error may quote the balance left, which can be the answer."""
    found: list[str] = []
    known: set[int] = set()
    payload, observation, done = transport.reset(task_id, seed)
    history = [observation]
    found += leaks(payload, secrets_for(task_id, seed, 0))
    while not done:
        secrets = secrets_for(task_id, seed, len(history) - 1).unless_known(known)
        found += leaks(transport.state(), secrets)
        action = policy(history)
        known |= amounts_in(action.get("params", {}))
        payload, observation, done = transport.step(action)
        history.append(observation)
        known |= amounts_in(observation.get("api_response", {}).get("data", {}))
        if not done:
            secrets = secrets_for(task_id, seed, len(history) - 1).unless_known(known)
            found += leaks(payload, secrets)
    assert not found, f"{task_id} seed {seed}: {found[:5]}"
    return transport.state(), observation


def check_servicebench_end(task_id: str, seed: int | None, state: Json, final: Json) -> None:
    """After the end, the outcome shows the expected values against the actual ones."""
    spec = ServiceBenchEnvironment.variant_for(task_id, seed).spec
    outcome = state["outcome"]
    assert outcome is not None and final["info"]["outcome"] == outcome
    expected = {check["name"]: check["expected"] for check in outcome["checks"]}
    if spec.refund_amount is not None:
        assert to_cents(expected["refunded_in_episode"]) == to_cents(spec.refund_amount)
    if spec.target_status is not None:
        assert expected["status"] == spec.target_status


def check_support_end(task_id: str, seed: int | None, state: Json) -> None:
    """After the end, every ticket's grading names all of its facts, nothing withheld."""
    tickets = SupportQueueEnvironment.variant_for(task_id, seed).task.tickets
    for ticket, graded in zip(tickets, state["grading_history"], strict=True):
        for component, facts in (
            ("summary", ticket.summary_facts),
            ("response", ticket.response_facts),
        ):
            named = graded[component]["matched"] + graded[component]["missing"]
            assert sorted(named) == sorted(fact[0] for fact in facts), (ticket.ticket_id, named)


SERVICEBENCH_POLICIES = {"oracle": oracle, "cent_over": near_miss(1), "cent_under": near_miss(-1)}


@pytest.mark.parametrize("policy", SERVICEBENCH_POLICIES)
@pytest.mark.parametrize("task_id", SERVICEBENCH_TASKS)
def test_servicebench_shows_no_answer_before_the_end_over_http(
    client: TestClient, task_id: str, policy: str
) -> None:
    """The near misses play on to the end of their budget, through states alike from seed to
    seed (the proof checks every served variant's near misses): they play some seeds."""
    near_misses = 0
    for seed in SEEDS if policy == "oracle" else SOME_SEEDS:
        state, final = play(Http(client), task_id, seed, SERVICEBENCH_POLICIES[policy])
        check_servicebench_end(task_id, seed, state, final)
        refunded = any(
            record["endpoint"] == ORDERS_PROCESS_REFUND and record["status_code"] == 200
            for record in state["call_history"]
        )
        if policy != "oracle" and refunded:  # a refund a cent off is wrong
            near_misses += 1
            assert not state["outcome"]["end_state_matches"] and state["cumulative_reward"] < 1.0
            assert not state["task_completed"]
    if policy != "oracle" and task_id in REFUND_SEED_TASKS:  # the check is not vacuous
        assert near_misses == len(SOME_SEEDS), f"{task_id}: {near_misses} near misses played"


@pytest.mark.parametrize("policy", ["probe", "gold", "heuristic"])
@pytest.mark.parametrize("task_id", SUPPORT_QUEUE_TASKS)
def test_support_queue_shows_no_answer_before_the_end_over_http(
    client: TestClient, task_id: str, policy: str
) -> None:
    """The probe names every fact of the task in every text, so its grades would name every
    fact a grade can name (the gold and heuristic texts name a subset): it plays every seed."""
    for seed in SEEDS if policy == "probe" else SOME_SEEDS:
        state, _ = play(Http(client), task_id, seed, support_policies(task_id, seed)[policy])
        check_support_end(task_id, seed, state)


@pytest.mark.parametrize("task_id", SERVICEBENCH_TASKS + SUPPORT_QUEUE_TASKS)
def test_no_answer_before_the_end_over_the_websocket_and_mcp(
    client: TestClient, task_id: str
) -> None:
    for seed in FEW_SEEDS:
        if task_id in SERVICEBENCH_TASKS:
            policies = [oracle, near_miss(-1)]
        else:
            policies = [support_policies(task_id, seed)[name] for name in ("heuristic", "probe")]
        for policy in policies:
            with client.websocket_connect("/ws") as socket:
                play(WebSocket(socket), task_id, seed, policy)
            play(Mcp(client), task_id, seed, policy)
        query = f"?task_id={task_id}" + ("" if seed is None else f"&seed={seed}")
        started = Session(client, query=query).initialized  # the endpoint URL names the task
        assert not leaks(started, secrets_for(task_id, seed, 0)), (task_id, seed)


def test_the_listings_show_no_answer(client: TestClient) -> None:
    """Tasks, tools, metadata, schema, OpenAPI and MCP prompts and tools, at every scope, MCP's
    initialize (whose instructions carry the scope's first task's first observation) and the
    home and playground pages.

    Public: the task cards, ServiceBench's endpoint catalogue (a fact phrasing such as "list
    price" may be in its words) and the canonical tasks' first tickets. Every canonical
    answer is searched; of a variant, its amounts and gold texts (these listings are the
    same for every seed, so a variant's short fact phrasings could match only by chance)."""
    cards = [c for env in (ServiceBenchEnvironment, SupportQueueEnvironment) for c in env.tasks]
    public = [card.description for card in cards] + [json.dumps(ENDPOINT_CATALOGUE)]
    public += [
        SupportQueueEnvironment.variant_for(task_id, None).task.tickets[0].public_text
        for task_id in SUPPORT_QUEUE_TASKS
    ]
    pages = [client.get(path) for path in ("/", "/web")]  # served at the root only
    assert all(page.status_code == 200 for page in pages)
    for scope in ("", "/servicebench", "/support_queue"):
        listings = [client.get(f"{scope}/{name}").json() for name in ("tasks", "tools")]
        listings += [client.get(f"{scope}/{name}").json() for name in ("metadata", "schema")]
        session = Session(client, scope)
        listings += [session.result("prompts/list"), session.result("tools/list")]
        listings += [session.initialized, client.get("/openapi.json").json()]
        for task_id in SERVICEBENCH_TASKS + SUPPORT_QUEUE_TASKS:
            for seed in FEW_SEEDS:
                graded = 0 if seed is None else 99  # a variant: no fact phrasings
                secrets = secrets_for(task_id, seed, graded).unless_public(public)
                for listing in listings:
                    assert not leaks(listing, secrets, answer_keys=False), (scope, task_id, seed)
                    assert not text_leaks(json.dumps(listing), secrets), (scope, task_id, seed)
                for page in pages:
                    assert not text_leaks(page.text, secrets), (scope, task_id, seed)


@pytest.mark.parametrize(
    "payload",
    [
        {"reply": 49.99},
        {"reply": 4999},
        {"reply": 49.990},
        {"note": "refund 49.99 now"},
        {"note": "refund $49.99."},
        {"note": "the answer is 4999 cents"},
        {"note": "refund 49.990"},
        {"note": "refund 4.999e1"},
        {"note": "refund 4999e-2"},
        {"a": [{"b": "it was 'sla breached', sorry"}]},
        {"checks": [{"expected": 1}]},
        {"gold_labels": {}},
        {"outcome": {"end_state_matches": False}},
    ],
)
def test_the_search_finds_every_spelling(payload: Json) -> None:
    """The search this test relies on finds each spelling of an answer (so it can fail)."""
    assert leaks(payload, Secrets({4999}, {"sla breached"}))


@pytest.mark.parametrize(
    "payload",
    [
        {"note": "order ORD-4999 of 49.98 and 50.00", "outcome": None},
        {"api_response": {"data": {"unit_price": 49.99}}},  # the world's answer to a call
        {"call_history": [{"params": {"amount": 49.99}}]},  # the agent's own action
        {"cumulative_reward": 49.99, "episode_id": "x4999y"},
        {"note": "the sla was breached"},
    ],
)
def test_the_search_leaves_the_world_and_the_agent_alone(payload: Json) -> None:
    assert leaks(payload, Secrets({4999}, {"sla breached"})) == []


@pytest.mark.parametrize("task_id", ["return_and_refund", "billing_discrepancy"])
def test_a_wrong_refund_says_it_is_wrong_never_by_how_much(task_id: str) -> None:
    """From the point before the reference policy's refund, every wrong amount the services
    take (a cent over or under, half, a cent) earns the same reward, signals and score: no
    reply narrows the answer down beyond "not this one"."""
    for seed in SOME_SEEDS:
        variant = ServiceBenchEnvironment.variant_for(task_id, seed)
        run = play_oracle(variant, ServiceBenchEnvironment())
        assert run.before_refund is not None and run.refund is not None
        correct = to_cents(variant.spec.refund_amount)
        replies, taken = set(), 0
        for cents in {correct - 1, correct + 1, correct // 2, 1} - {correct}:
            wrong = run.refund.model_copy(
                update={"params": {**run.refund.params, "amount": cents / 100}}
            )
            episode = run.before_refund.fork()
            observation = episode.step(wrong)
            if observation.success:  # the services refuse more than the balance left
                signals = tuple(observation.info["reward_signals"])
                replies.add((observation.reward, signals, observation.cumulative_reward))
                taken += 1
                assert "wrong_refund_amount" in signals and episode.state.outcome is None
        assert taken >= 2 and len(replies) == 1, (seed, replies)
