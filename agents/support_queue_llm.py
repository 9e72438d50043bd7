"""The LLM agent of Support Queue: one ticket, one JSON triage decision.

The model is asked for the action as a JSON object, which is validated
against `SupportQueueAction`. Invalid output gets one retry with the
validation error shown to the model; after that (or when the model cannot be
reached) the agent submits `neutral_action`, a fixed, ticket-independent
decision, and reports the error. It never borrows the heuristic baseline's
answer: the score measures the model alone.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import ValidationError

from ..models import SupportQueueAction, SupportQueueObservation
from .base import Decision
from .model import TIME_SPENT, ChatModel, ModelCallError
from .parsing import ParseError, extract_json_object, validation_message

REPLY_CHARS = 1500

SYSTEM_PROMPT = """You are a senior support triage agent at a B2B SaaS company. For each ticket you \
decide its priority, route it to the right internal queue, choose the next action, write a short \
internal summary and draft a safe first reply to the customer (never promise refunds, credits or \
fixes you cannot guarantee, and never ask for passwords or secrets).
{instructions}
Allowed values: priority {priorities}; queue {queues}; disposition {dispositions}.
Scoring weights: {weights}.
Reply with only one JSON object, no prose:
{{"priority": "...", "queue": "...", "disposition": "...", "summary": "...", "response": "...",
"confidence": 0.0-1.0}}"""


def neutral_action() -> dict[str, Any]:
    """The decision submitted when the model gave none: the same for every ticket, on purpose.

    A middling priority, the first queue, a non-committal disposition, no text and zero
    confidence: it carries no information about the ticket, so a model whose output is
    unusable scores what a blind guess scores, never what the heuristic baseline would.
    """
    action = SupportQueueAction(
        priority="P3",
        queue="billing",
        disposition="request_info",
        summary="",
        response="",
        confidence=0.0,
    )
    return action.model_dump(mode="json", exclude={"metadata"})


def ticket_prompt(observation: SupportQueueObservation) -> str:
    ticket = observation.ticket.model_dump(mode="json") if observation.ticket else {}
    position = f"Ticket {observation.current_index + 1} of {observation.total_tickets}"
    return f"{position}:\n{json.dumps(ticket, ensure_ascii=False, indent=1)}"


def system_prompt(observation: SupportQueueObservation) -> str:
    return SYSTEM_PROMPT.format(
        instructions=observation.instructions.strip(),
        priorities=", ".join(observation.allowed_priorities),
        queues=", ".join(observation.allowed_queues),
        dispositions=", ".join(observation.allowed_dispositions),
        weights=json.dumps(observation.scoring_weights, sort_keys=True),
    )


def parse_action(text: str, observation: SupportQueueObservation) -> dict[str, Any]:
    """The validated wire action in a reply; raises ParseError or ValidationError."""
    data = extract_json_object(text)
    action = SupportQueueAction.model_validate(data)
    allowed = {
        "priority": observation.allowed_priorities,
        "queue": observation.allowed_queues,
        "disposition": observation.allowed_dispositions,
    }
    for field, values in allowed.items():
        if values and getattr(action, field) not in values:
            raise ParseError(
                f"{field} {getattr(action, field)!r} is not one of {', '.join(values)}"
            )
    return action.model_dump(mode="json", exclude={"metadata"})


class SupportQueueLLMAgent:
    def __init__(self, model: ChatModel, deadline: float) -> None:
        self.model = model
        self.deadline = deadline

    def act(self, observation: SupportQueueObservation) -> Decision:
        if (
            time.monotonic() >= self.deadline
        ):  # no more model calls; the queue is still worked through
            return Decision(neutral_action(), f"{TIME_SPENT}; submitted the neutral action")
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system_prompt(observation)},
            {"role": "user", "content": ticket_prompt(observation)},
        ]
        problem = ""
        for _attempt in range(2):
            try:
                reply = self.model.complete(messages, None, self.deadline)
            except ModelCallError as exc:
                return Decision(neutral_action(), f"{exc}; submitted the neutral action")
            try:
                return Decision(parse_action(reply.content, observation))
            except (ParseError, ValidationError) as exc:
                problem = exc.args[0] if isinstance(exc, ParseError) else validation_message(exc)
            messages += [
                {"role": "assistant", "content": reply.content[:REPLY_CHARS] or "(empty reply)"},
                {
                    "role": "user",
                    "content": f"That reply is invalid: {problem}. "
                    "Reply again with only the corrected JSON object.",
                },
            ]
        return Decision(
            neutral_action(),
            f"invalid model output after a retry: {problem}; submitted the neutral action",
        )
