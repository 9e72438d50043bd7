"""Playing one task with one agent over HTTP, and the record of it.

`TaskRun.run` prints [START], one [STEP] per agent turn and, whatever happens,
[END]; it returns the task's entry of the results file.

What the run credits to the policy under test (the model, or `--fallback`'s):
* `env_score`: the environment's own episode score, read from the episode state;
* `score`: that score less what stand-in actions earned (a Support Queue ticket
  the agent moved on with the neutral action counts 0), so it is the model's alone;
* `success`: the environment says the task is done (ServiceBench's completion,
  every Support Queue ticket triaged) and no action of the episode was a stand-in.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import fsum
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
from .fault_blame import failure_cause, fault_counts
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
            "reward_signals": observation.info.get("reward_signals", []),
            # the end-state check, served only once the episode is done (the report shows it)
            **({"outcome": observation.info["outcome"]} if "outcome" in observation.info else {}),
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


def _unit(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


@dataclass(frozen=True)
class EpisodeResult:
    env_score: float
    """The environment's episode score in [0, 1]."""
    score: float
    """The score credited to the policy under test: stand-in actions' rewards taken out."""
    completed: bool
    """The environment's verdict: the task is done."""
    state: dict[str, Any] | None = None
    """A ServiceBench episode's final state as JSON (its calls and faults), for the blame."""


def episode_result(client: EnvHttpClient, stand_in_rewards: Sequence[float] = ()) -> EpisodeResult:
    """The episode's scores and completion, read from its state.

    Support Queue's score is the mean over graded tickets, so a stand-in ticket's reward
    comes out of that mean; ServiceBench has no stand-ins (only the model acts there).
    """
    state = client.state()
    if isinstance(state, SupportQueueState):
        env_score = state.average_reward
        graded = len(state.processed_ticket_ids)
        score = env_score - fsum(stand_in_rewards) / graded if graded else 0.0
        completed = state.total_tickets > 0 and graded >= state.total_tickets
    elif isinstance(state, ServiceBenchState):
        env_score = score = state.cumulative_reward
        completed = state.task_completed
        return EpisodeResult(
            _unit(env_score), _unit(score), bool(completed), state.model_dump(mode="json")
        )
    else:
        env_score = score = state.cumulative_reward
        completed = False
    return EpisodeResult(_unit(env_score), _unit(score), bool(completed))


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
        split_task: Mapping[str, Any] | None = None,
    ) -> None:
        self.card, self.client, self.agent, self.config = card, client, agent, config
        self.out, self.model_label = out, model_label
        self.seed, self.repeat, self.split_task = seed, repeat, split_task
        self.rewards: list[float] = []
        self.stand_in_rewards: list[float] = []
        self.trajectory: list[dict[str, Any]] = []
        self.error: str | None = None
        self.fault_summary: dict[str, Any] | None = None
        """ServiceBench's `info["faults"]` of the last observation (the final one at the end)."""

    def _record(
        self,
        action: Any,
        reward: float,
        done: bool,
        error: str | None,
        observation: Any,
        stand_in: bool = False,
    ) -> None:
        step = len(self.rewards) + 1
        self.rewards.append(reward)
        if stand_in:
            self.stand_in_rewards.append(reward)
        self.out.step(step, action, reward, done, error)
        self.trajectory.append(
            {
                "step": step,
                "action": action,
                "reward": reward,
                "done": done,
                "error": error,
                "stand_in": stand_in,
                "observation": observation_summary(observation),
            }
        )

    def _reset(self) -> Any:
        """The episode's start: its split task by split and index, else its task and seed."""
        servicebench_faults = self.card.env == "servicebench" and self.config.faults != "off"
        faults = {"faults": self.config.faults} if servicebench_faults else {}  # off: the default
        if self.split_task is not None:
            return self.client.reset(
                env=self.card.env,
                split=self.split_task["split"],
                index=self.split_task["index"],
                **faults,
            )
        return self.client.reset(env=self.card.env, task_id=self.card.id, seed=self.seed, **faults)

    @property
    def label(self) -> str:
        """How the [START] line and the log name the task: a split task's id, else the task's."""
        return self.split_task["id"] if self.split_task is not None else self.card.id

    def _budget(self, observation: Any) -> int:
        """The episode's step budget as the server states it now (ServiceBench's grows with the
        faults it answers), else the task's; --max-steps caps it."""
        stated = getattr(observation, "info", {}).get("max_steps")
        budget = stated if isinstance(stated, int) and stated > 0 else self.card.max_steps
        return min(budget, self.config.max_steps or budget)

    def _play(self) -> None:
        result = self._reset()
        observation, done, failed_turns = result.observation, result.done, 0
        while not done and len(self.rewards) < self._budget(observation):
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
                        decision.stand_in,
                    )
                    if exc.status_code in EPISODE_GONE_STATUS:
                        self.error = f"episode ended by the server: {exc}"
                        return
                    failed_turns += 1
                else:
                    observation, done, failed_turns = result.observation, result.done, 0
                    if isinstance(observation, ServiceBenchObservation):
                        self.fault_summary = observation.info.get("faults")
                    error = _join(decision.error, observation_error(observation))
                    reward = float(result.reward or 0.0)
                    self._record(
                        decision.action, reward, done, error, observation, decision.stand_in
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

    def _fault_fields(self, result: EpisodeResult, success: bool) -> dict[str, Any]:
        """A ServiceBench episode's fault level, the faults it was served and, if it failed,
        whose fault that was (agents/fault_blame.py)."""
        if self.card.env != "servicebench":
            return {}
        state = result.state or {}
        return {
            "faults": self.config.faults,
            "faults_served": fault_counts(state),
            "failure_cause": failure_cause(state, success, self.fault_summary),
        }

    def run(self) -> dict[str, Any]:
        started = time.monotonic()
        result = EpisodeResult(0.0, 0.0, False)
        self.client.episode_id = None  # never read a previous task's episode
        self.out.start(self.label, self.card.env, self.model_label)
        try:
            try:
                self._play()
            except Exception as exc:  # the run goes on with the next task
                self.error = one_line(f"{type(exc).__name__}: {exc}")
                log.exception("task %s (seed %s) failed", self.label, self.seed)
            if self.client.episode_id is not None:
                result = episode_result(self.client, self.stand_in_rewards)
        except Exception as exc:
            self.error = _join(self.error, one_line(f"could not read the episode score: {exc}"))
        finally:
            success = result.completed and not self.stand_in_rewards
            self.out.end(success, len(self.rewards), result.score, self.rewards)
        if self.error:
            log.warning("task %s (seed %s): %s", self.label, self.seed, self.error)
        split = self.split_task or {}
        return {
            "env": self.card.env,
            "task_id": self.card.id,
            "seed": self.seed,
            **{key: split[key] for key in ("split", "index", "family") if key in split},
            "repeat": self.repeat,
            "model": self.model_label,
            "score": round(result.score, 6),
            "env_score": round(result.env_score, 6),
            "success": success,
            "completed": result.completed,
            "steps": len(self.rewards),
            "stand_in_steps": len(self.stand_in_rewards),
            **self._fault_fields(result, success),
            "rewards": self.rewards,
            "error": self.error,
            "duration_s": round(time.monotonic() - started, 3),
            "trajectory": self.trajectory,
        }
