"""The no-model agents of `--fallback`: the projects' own reference policies behind the Agent interface.

ServiceBench: `server.servicebench.oracle`, which derives each call from the
observations so far and scores 1.0. Support Queue: the baseline heuristic
`server.support_queue.heuristic.triage`, which reads only the ticket.
"""

from __future__ import annotations

from typing import Any

from .base import Agent, Decision


class OracleAgent:
    """ServiceBench's optimal policy; it sees every observation of the episode."""

    def __init__(self) -> None:
        self.history: list[Any] = []

    def act(self, observation: Any) -> Decision:
        from ..server.servicebench.oracle import next_action

        self.history.append(observation)
        action = next_action(self.history)
        if action is None:
            return Decision(
                None, "the optimal policy has no further call for this episode", stop=True
            )
        return Decision(action.model_dump(mode="json", exclude={"metadata"}))


class HeuristicAgent:
    """Support Queue's baseline: one triage decision per ticket."""

    def act(self, observation: Any) -> Decision:
        from ..server.support_queue.heuristic import triage

        action = triage(observation)
        return Decision(action.model_dump(mode="json", exclude={"metadata"}))


def fallback_agent(env: str) -> Agent:
    return OracleAgent() if env == "servicebench" else HeuristicAgent()
