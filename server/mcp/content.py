"""What MCP messages carry back: tool results, tool errors, prompts and session instructions.

A tool result is the step's observation with its reward, the running score and
whether the episode is done, as `structuredContent` and, as MCP asks for
compatibility, the same JSON as a text block. The endpoint catalogue that every
ServiceBench observation carries is left out: over MCP the tools are the catalogue.
OpenEnv's `MCPToolClient.call_tool` returns a result's `data`, so that holds it too.
"""

from __future__ import annotations

import json
from typing import Any

from ...models import EpisodeObservation, TaskCard
from ..lifecycle.episode import EpisodeEnvironment

OMITTED_FIELDS = frozenset({"reward", "done", "metadata", "available_endpoints", "policy"})
"""Observation fields a tool result leaves out: the first two stand beside the
observation, OpenEnv's metadata is unused, the tools describe the endpoints, and
ServiceBench's support policy, the same all episode, is in the session's instructions."""


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def step_content(
    env: EpisodeEnvironment, observation: EpisodeObservation, first: bool = False
) -> dict[str, Any]:
    """The step as a tool call reports it: observation, reward, done, score and session
    (`first`: the episode's first observation, which keeps the support policy)."""
    omitted = OMITTED_FIELDS - {"policy"} if first else OMITTED_FIELDS
    return {
        "observation": observation.model_dump(mode="json", exclude=set(omitted)),
        "reward": observation.reward,
        "done": observation.done,
        "score": env.score,
        "session_id": env.episode_id,
    }


def tool_result(content: dict[str, Any], is_error: bool = False) -> dict[str, Any]:
    """An MCP `CallToolResult` carrying `content` (structured, as text, and as OpenEnv's `data`)."""
    return {
        "content": [{"type": "text", "text": _text(content)}],
        "structuredContent": content,
        "isError": is_error,
        "data": content,
    }


def tool_error(message: str, status: int, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A call that did not happen (MCP's tool error): the episode is as it was."""
    return tool_result({"error": message, "status": status, **(details or {})}, is_error=True)


def prompt(card: TaskCard) -> dict[str, Any]:
    """The MCP prompt that starts `card`'s task in the session (prompts/list)."""
    return {
        "name": card.id,
        "title": card.title,
        "description": f"Start {card.env}'s {card.difficulty} task in this session "
        f"(it replaces the session's episode): {card.description}",
        "arguments": [
            {
                "name": "seed",
                "description": "A seeded variant of the task (digits; leave out for the "
                "canonical task)",
                "required": False,
            }
        ],
    }


def session_instructions(env: EpisodeEnvironment, observation: EpisodeObservation) -> str:
    """How to play the session's episode, and its first observation: what a person or a
    model needs to start (initialize's `instructions`, the text of prompts/get)."""
    task = env.task
    assert task is not None, "a session's episode has been reset"
    seed = "canonical" if env.seed is None else f"seed {env.seed}"
    if env.split is not None:
        seed = f"task {env.index} of split {env.split}"
    first = step_content(env, observation, first=True)
    return (  # the observation states the task: a seeded variant's is not the card's
        f"Task {task.id}: {task.title} ({task.env}, {task.difficulty}, {seed}).\n\n"
        "Play it with this server's tools: every call is one step of the episode (at most "
        f"{task.max_steps}), and its result is the observation with the step's reward, the "
        "running score (0 to 1) and whether the episode is done. To play another task, "
        "get its prompt (one per task; a seed argument picks a variant).\n\n"
        f"The episode's first observation:\n{_text(first['observation'])}"
    )
