"""The one interface every agent of `inference.py` implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Decision:
    """An agent's move: the action to send (None: no usable action this turn) and what went wrong.

    `stop` means the agent has nothing more to do in this episode (a policy that
    would rather stop than guess); the episode then ends without another step.
    """

    action: dict[str, Any] | None
    error: str | None = None
    stop: bool = False


class Agent(Protocol):
    def act(self, observation: Any) -> Decision:
        """The next move, given the latest observation (which also reports the last move's result)."""
        ...
