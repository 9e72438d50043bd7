"""The LLM agent of ServiceBench: endpoint catalogue as tools, API results as tool messages.

One model turn yields one API call. With tools, the first tool call of the
reply is executed and its result goes back as a `tool` message; a reply with
JSON in its text instead (or an endpoint that refuses tools, under
MODEL_TOOLS=auto) is read as a text action and its result goes back as a
user message. An unusable reply gets one correction round with the problem
shown to the model. The conversation is bounded: the system prompt and task,
then only the latest exchanges, each API result truncated.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from pydantic import ValidationError

from ..models import ServiceBenchAction, ServiceBenchObservation
from .base import Decision
from .catalogue import Catalogue
from .model import TIME_SPENT, ChatModel, ModelCallError, ModelReply
from .parsing import ParseError, extract_json_object, parse_arguments, validation_message

log = logging.getLogger("inference.servicebench")

HISTORY_EXCHANGES = 8
RESULT_CHARS = 2000
ASSISTANT_TEXT_CHARS = 1500
TOOL_REFUSAL_STATUS = frozenset({400, 422})
ACTION_KEYS = ("service", "endpoint", "method", "params")
NOT_EXECUTED = "The server rejected this call before executing it; nothing changed."

SYSTEM_PROMPT = """You are a backend operations agent. You complete a customer-service task by \
calling the APIs of the services you are given (user, order, inventory, ...), one call per reply.
- Use only values you read in the task or in earlier API responses (ids, skus, amounts); never invent them.
- Look records up and verify them before any refund or update; derive amounts from the data.
- Follow the support policy you are given: it decides what the right resolution is.
- Never repeat a call you already made, and do not call endpoints the task does not need.
- The episode ends by itself once the task is complete."""
FAULTS_RULES = """The services fail like real ones; a failure comes back in the API response, never \
as an error of yours, and costs you nothing when you handle it well:
- status_code 503 (service unavailable): send the same call again.
- status_code 429 (rate limited): that service answers again once retry_after_steps more steps \
have passed; meanwhile make other calls the task needs, or repeat the call after that many steps \
(a call to it before then is answered 429 again).
- status_code 504 (timeout): a read is simply retried. A write may or may not have been applied, \
and the answer does not say which: look the record up before writing again, and if you write \
again reuse the same idempotency_key.
- Always send an idempotency_key (a new unique string per intended write, e.g. "refund-ORD-1-1") \
with every write, and reuse it unchanged when you retry that write: the service applies a write \
at most once per key. A write applied twice (a second refund) fails the task.
- A lookup just after a write may show the old value once: look again before writing anything \
to fix it.
- Retrying after one of these failures is not a repeated call."""
TOOLS_RULE = "Answer every time with exactly one function call."
TEXT_RULE = """Answer every time with exactly one JSON object and nothing else:
{"service": "<service>", "endpoint": "<path>", "method": "<GET|POST|PUT>", "params": {...}}
The endpoints:
"""


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 15] + " ...(truncated)"


def result_text(observation: ServiceBenchObservation) -> str:
    """What the model is told about its last call: the API answer, truncated."""
    body = {
        "success": observation.success,
        "error_message": observation.error_message,
        "api_response": observation.api_response,
        "task_completed": observation.task_completed,
    }
    return _truncate(json.dumps(body, ensure_ascii=False, default=str), RESULT_CHARS)


class ServiceBenchLLMAgent:
    def __init__(
        self, model: ChatModel, tool_mode: str, deadline: float, faults: str = "off"
    ) -> None:
        self.model = model
        self.faults = faults
        """The episode's fault level: above off, the system prompt says how to handle faults."""
        self.tool_mode = tool_mode
        self.use_tools = tool_mode != "off"
        self.deadline = deadline
        self.catalogue = Catalogue([])
        self.task = ""
        self.policy = ""
        """The support policy, as the task message shows it (empty if none was served)."""
        self.exchanges: list[list[dict[str, Any]]] = []
        self.awaiting_result: dict[str, Any] | None = None  # the message the next result goes in
        self.step_at_call: Any = None  # the episode's step count when the pending call was made

    # ------------------------------------------------------------------ conversation

    def _messages(self) -> list[dict[str, Any]]:
        rule = TOOLS_RULE if self.use_tools else TEXT_RULE + self.catalogue.as_text()
        faults = f"\n{FAULTS_RULES}" if self.faults != "off" else ""
        head = [
            {"role": "system", "content": f"{SYSTEM_PROMPT}{faults}\n{rule}"},
            {"role": "user", "content": f"Task: {self.task}{self.policy}"},
        ]
        return head + [m for exchange in self.exchanges[-HISTORY_EXCHANGES:] for m in exchange]

    def _answer(self, reply: ModelReply, content: str, call_id: str | None) -> dict[str, Any]:
        """Record the assistant's reply; return the message a result or complaint goes back in."""
        text = _truncate(reply.content, ASSISTANT_TEXT_CHARS)
        if call_id is not None:
            call = next(c for c in reply.tool_calls if c.id == call_id)
            assistant = {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }
                ],
            }
            feedback = {"role": "tool", "tool_call_id": call_id, "content": content}
        else:
            assistant = {"role": "assistant", "content": text or "(empty reply)"}
            feedback = {"role": "user", "content": content}
        self.exchanges.append([assistant, feedback])
        return feedback

    def _flatten_tool_history(self) -> None:
        """Rewrite tool-call history as plain text, for an endpoint that refuses tools."""
        for exchange in self.exchanges:
            for message in exchange:
                if message.get("tool_calls"):
                    function = message.pop("tool_calls")[0]["function"]
                    message["content"] = json.dumps(
                        {"function": function["name"], "arguments": function["arguments"]}
                    )
                elif message["role"] == "tool":
                    message.pop("tool_call_id", None)
                    message["role"] = "user"

    # ------------------------------------------------------------------ turns

    def act(self, observation: ServiceBenchObservation) -> Decision:
        if time.monotonic() >= self.deadline:
            return Decision(None, f"{TIME_SPENT}; episode ended", stop=True)
        if not self.task:
            self.task = observation.task_description
            self.policy = f"\n\n{observation.policy}" if observation.policy else ""
            self.catalogue = Catalogue(observation.available_endpoints)
        elif self.awaiting_result is not None:
            executed = observation.info.get("step") != self.step_at_call
            self.awaiting_result["content"] = result_text(observation) if executed else NOT_EXECUTED
            self.awaiting_result = None
        self.step_at_call = observation.info.get("step")
        problem = ""
        for _attempt in range(2):
            try:
                reply = self._ask()
            except ModelCallError as exc:
                return Decision(None, str(exc))
            try:
                action, call_id = self._interpret(reply)
            except (ParseError, ValidationError) as exc:
                problem = exc.args[0] if isinstance(exc, ParseError) else validation_message(exc)
                call_id = reply.tool_calls[0].id if reply.tool_calls else None
                self._answer(reply, self._complaint(problem), call_id)
                continue
            self.awaiting_result = self._answer(reply, "(pending)", call_id)
            return Decision(action)
        return Decision(None, f"invalid model output: {problem}")

    def _complaint(self, problem: str) -> str:
        how = (
            "exactly one function call"
            if self.use_tools
            else "exactly one JSON object as described"
        )
        return f"Your reply could not be used: {problem}. Reply again with {how}."

    def _ask(self) -> ModelReply:
        tools = self.catalogue.tools() if self.use_tools else None
        try:
            return self.model.complete(self._messages(), tools, self.deadline)
        except ModelCallError as exc:
            if not (
                self.use_tools
                and self.tool_mode == "auto"
                and exc.status_code in TOOL_REFUSAL_STATUS
            ):
                raise
            log.warning(
                "the endpoint refused the request with tools (%s); asking for JSON in text from now on",
                exc,
            )
            self.use_tools = False
            self._flatten_tool_history()
            return self.model.complete(self._messages(), None, self.deadline)

    def _interpret(self, reply: ModelReply) -> tuple[dict[str, Any], str | None]:
        """The wire action of a reply, and the id of the tool call it came from (None: from text)."""
        if reply.tool_calls:
            call = reply.tool_calls[0]
            if len(reply.tool_calls) > 1:
                log.info(
                    "the model made %d tool calls; executing only the first", len(reply.tool_calls)
                )
            data = self.catalogue.action(call.name, parse_arguments(call.arguments))
            if data is None:
                raise ParseError(f"unknown function {call.name!r}")
            return self._validated(data), call.id
        return self._validated(self._text_action(extract_json_object(reply.content))), None

    def _text_action(self, data: dict[str, Any]) -> dict[str, Any]:
        """A text reply's action; also accepts a function call written out as JSON."""
        name = data.get("name") or data.get("function")
        if isinstance(name, str) and name in self.catalogue.by_name:
            arguments = data.get("arguments", data.get("parameters", {}))
            if isinstance(arguments, str):
                arguments = parse_arguments(arguments)
            if not isinstance(arguments, dict):
                raise ParseError(f"the arguments of {name!r} must be a JSON object")
            action = self.catalogue.action(name, arguments)
            assert action is not None, "a tool of the catalogue"
            return action
        if isinstance(data.get("action"), dict):
            data = data["action"]
        if "endpoint" not in data:
            raise ParseError('the JSON object has no "endpoint"')
        action = {key: data[key] for key in ACTION_KEYS if key in data}
        known = self.catalogue.find(str(action["endpoint"]), str(action.get("service", "")))
        if known is not None and known.route is not None:
            action.setdefault("service", known.route[0])
            action.setdefault("method", known.route[2])
        return action

    @staticmethod
    def _validated(data: dict[str, Any]) -> dict[str, Any]:
        action = ServiceBenchAction.model_validate(data)
        return action.model_dump(mode="json", exclude={"metadata"})
