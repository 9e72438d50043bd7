"""The no-model agents of `--fallback`: the projects' own reference policies behind the Agent interface.

ServiceBench: `policies.servicebench_oracle`, which derives each call from the
observations so far and scores 1.0. Support Queue: the baseline heuristic
`policies.support_queue_heuristic.triage`, which reads only the ticket.
"""

from __future__ import annotations

from typing import Any

from agents.base import Agent, Decision


class OracleAgent:
    """ServiceBench's optimal policy; it sees every observation of the episode."""

    def __init__(self) -> None:
        self.history: list[Any] = []

    def act(self, observation: Any) -> Decision:
        from policies.servicebench_oracle import next_action

        self.history.append(observation)
        action = next_action(self.history)
        if action is None:
            return Decision(None, "the optimal policy has no further call for this episode", stop=True)
        return Decision(action.model_dump(mode="json", exclude={"metadata"}))


class HeuristicAgent:
    """Support Queue's baseline: one triage decision per ticket."""

    def act(self, observation: Any) -> Decision:
        from policies.support_queue_heuristic import triage

        action = triage(observation)
        return Decision(action.model_dump(mode="json", exclude={"metadata"}))


def fallback_agent(env: str) -> Agent:
    return OracleAgent() if env == "servicebench" else HeuristicAgent()
