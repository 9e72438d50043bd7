"""Playing one task with one agent over HTTP, and the record of it.

`run_task` prints [START], one [STEP] per agent turn and, whatever happens,
[END]; it returns the task's entry of the results file. The score is the
environment's own episode score, read from the episode state at the end.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from ..client import EnvHttpClient, EnvServerError
from ..models import (
    ServiceBenchObservation,
    ServiceBenchState,
    SupportQueueObservation,
    SupportQueueState,
    TaskCard,
)
from .base import Agent
from .config import Config
from .output import StructuredLog, one_line

log = logging.getLogger("inference.runner")

SUMMARY_CHARS = 300
EPISODE_GONE_STATUS = frozenset({404, 409})


def observation_summary(observation: Any) -> dict[str, Any]:
    """The few fields of an observation worth keeping in the trajectory."""
    if isinstance(observation, ServiceBenchObservation):
        response = json.dumps(observation.api_response, ensure_ascii=False, default=str)
        return {
            "success": observation.success,
            "error_message": observation.error_message,
            "api_response": response
            if len(response) <= SUMMARY_CHARS
            else response[:SUMMARY_CHARS] + "...",
            "task_completed": observation.task_completed,
            "cumulative_reward": observation.cumulative_reward,
        }
    if isinstance(observation, SupportQueueObservation):
        return {
            "next_ticket_id": observation.ticket.ticket_id if observation.ticket else None,
            "current_index": observation.current_index,
            "total_tickets": observation.total_tickets,
            "last_feedback": observation.last_feedback,
            "average_reward": observation.info.get("average_reward"),
        }
    return {}


def observation_error(observation: Any) -> str | None:
    """The environment's complaint about the last action, if it made one."""
    if isinstance(observation, ServiceBenchObservation) and not observation.success:
        return observation.error_message or "the API call failed"
    return None


def episode_result(client: EnvHttpClient) -> tuple[float, bool]:
    """The environment's episode score in [0, 1] and whether the task was completed."""
    state = client.state()
    if isinstance(state, SupportQueueState):
        score = state.average_reward
        success = state.total_tickets > 0 and len(state.processed_ticket_ids) >= state.total_tickets
    elif isinstance(state, ServiceBenchState):
        score, success = state.cumulative_reward, state.task_completed
    else:
        score, success = state.cumulative_reward, False
    return min(1.0, max(0.0, float(score))), bool(success)


def _join(*errors: str | None) -> str | None:
    present = [e for e in errors if e]
    return "; ".join(present) if present else None


class TaskRun:
    """One task's episode: the loop, the structured lines and the trajectory."""

    def __init__(
        self,
        card: TaskCard,
        client: EnvHttpClient,
        agent: Agent,
        config: Config,
        out: StructuredLog,
        model_label: str,
        seed: int | None = None,
        repeat: int = 0,
    ) -> None:
        self.card, self.client, self.agent, self.config = card, client, agent, config
        self.out, self.model_label = out, model_label
        self.seed, self.repeat = seed, repeat
        self.rewards: list[float] = []
        self.trajectory: list[dict[str, Any]] = []
        self.error: str | None = None

    def _record(
        self, action: Any, reward: float, done: bool, error: str | None, observation: Any
    ) -> None:
        step = len(self.rewards) + 1
        self.rewards.append(reward)
        self.out.step(step, action, reward, done, error)
        self.trajectory.append(
            {
                "step": step,
                "action": action,
                "reward": reward,
                "done": done,
                "error": error,
                "observation": observation_summary(observation),
            }
        )

    def _play(self) -> None:
        result = self.client.reset(env=self.card.env, task_id=self.card.id, seed=self.seed)
        observation, done, failed_turns = result.observation, result.done, 0
        budget = min(self.card.max_steps, self.config.max_steps or self.card.max_steps)
        while not done and len(self.rewards) < budget:
            decision = self.agent.act(observation)
            if decision.stop:
                self.error = decision.error or "the agent stopped"
                return
            if decision.action is not None:
                try:
                    result = self.client.step(decision.action)
                except EnvServerError as exc:
                    self._record(
                        decision.action,
                        0.0,
                        False,
                        _join(decision.error, f"rejected: {exc}"),
                        observation,
                    )
                    if exc.status_code in EPISODE_GONE_STATUS:
                        self.error = f"episode ended by the server: {exc}"
                        return
                    failed_turns += 1
                else:
                    observation, done, failed_turns = result.observation, result.done, 0
                    error = _join(decision.error, observation_error(observation))
                    self._record(
                        decision.action, float(result.reward or 0.0), done, error, observation
                    )
                    continue
            else:
                failed_turns += 1
                self._record(None, 0.0, False, decision.error or "no action", observation)
            if failed_turns >= self.config.max_failed_turns:
                self.error = (
                    f"{failed_turns} turns in a row without a usable action; episode abandoned"
                )
                return

    def run(self) -> dict[str, Any]:
        started = time.monotonic()
        score, success = 0.0, False
        self.client.episode_id = None  # never read a previous task's episode
        self.out.start(self.card.id, self.card.env, self.model_label)
        try:
            try:
                self._play()
            except Exception as exc:  # the run goes on with the next task
                self.error = one_line(f"{type(exc).__name__}: {exc}")
                log.exception("task %s (seed %s) failed", self.card.id, self.seed)
            if self.client.episode_id is not None:
                score, success = episode_result(self.client)
        except Exception as exc:
            self.error = _join(self.error, one_line(f"could not read the episode score: {exc}"))
        finally:
            self.out.end(success, len(self.rewards), score, self.rewards)
        if self.error:
            log.warning("task %s (seed %s): %s", self.card.id, self.seed, self.error)
        return {
            "env": self.card.env,
            "task_id": self.card.id,
            "seed": self.seed,
            "repeat": self.repeat,
            "model": self.model_label,
            "score": round(score, 6),
            "success": success,
            "steps": len(self.rewards),
            "rewards": self.rewards,
            "error": self.error,
            "duration_s": round(time.monotonic() - started, 3),
            "trajectory": self.trajectory,
        }
