"""RL training entry point: both environments in the shape TRL's `GRPOTrainer(environment_factory=...)` expects.

What TRL (1.16) does with an environment, and what these classes answer:

* it builds instances with no arguments, from one class or from a dict of classes
  (`{"servicebench": ..., "support_queue": ...}`: each dataset row's `environment`
  column picks its class, and only that class's tools are shown in its prompt);
* it calls `reset(**row)` with the row's other columns (`task_id` and `seed` are used
  here, and ServiceBench's `faults`: off, light or heavy, default $SERVICEBENCH_FAULTS, else
  off; the rest ignored) and appends the returned text to the prompt's last message;
* every other public function of the class is a tool: transformers' `get_json_schema`
  reads its type hints and its docstring's Args: (so helpers here are private);
* `get_reward()`, called once per finished rollout, is the episode's score in [0, 1]:
  ServiceBench's running score, Support Queue's graded rewards summed over the whole
  queue's length (a ticket left untriaged counts 0: stopping early earns nothing
  for the tickets it skips).
  TRL adds it as a reward source by itself: `reward_funcs` may be left out.

* `ServiceBenchToolEnv`: one tool per endpoint of the catalogue (`lookup_user`,
  `lookup_order`, `process_refund`, ...): TRL's guidance is one descriptively named,
  typed tool per action rather than a generic `step(action)`.
* `SupportQueueToolEnv`: one `triage(...)` tool, the whole decision for the current ticket.

Both use the project's OpenEnv clients (client.py): one WebSocket per instance, opened on
the first reset and reused, to $ENV_BASE_URL (default http://localhost:8000).

    uv run --frozen python examples/trl_environment.py --dry-run   # the dataset rows; needs only the server
    uv run --frozen --with trl --with datasets python examples/trl_environment.py   # trains (a GPU)
    uv run --frozen python examples/trl_environment.py --dry-run --faults light   # rows with faults
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from openenv.core.client_types import StepResult
from websockets.exceptions import ConnectionClosed

from servicebench_support_queue.action_tools import TOOLS, TOOLS_BY_NAME, ActionTool
from servicebench_support_queue.agents.config import FAULT_LEVELS
from servicebench_support_queue.agents.servicebench_llm import FAULTS_RULES
from servicebench_support_queue.client import (
    EnvClientError,
    EnvHttpClient,
    ServiceBenchEnv,
    SupportQueueEnv,
)
from servicebench_support_queue.models import (
    Disposition,
    Priority,
    Queue,
    ServiceBenchAction,
    ServiceBenchObservation,
    SupportQueueAction,
    SupportQueueObservation,
    TaskCard,
)

DEFAULT_ENV_BASE_URL = "http://localhost:8000"
DEFAULT_MODEL = "Qwen/Qwen3-0.6B"
GRPO_SETTINGS: dict[str, Any] = {
    "max_completion_length": 4096,
    "log_completions": True,
    "chat_template_kwargs": {"enable_thinking": False},
}
"""The `GRPOConfig` arguments of a training run (tests/trl_rollouts.py builds its config from them)."""
BOTH = "both"
ALL_TASKS = "all"
FAULTS_VARIABLE = "SERVICEBENCH_FAULTS"
"""The environment variable of ServiceBench's fault level (a row's `faults` column wins)."""
INSTRUCTION = "You are an operations agent. Use the tools to finish the task you are given."


def env_base_url() -> str:
    """The server the environments talk to: $ENV_BASE_URL, as inference.py reads it."""
    return os.environ.get("ENV_BASE_URL", "").strip().rstrip("/") or DEFAULT_ENV_BASE_URL


def _reset_options(
    row: dict[str, Any], keys: Sequence[str] = ("task_id", "seed")
) -> dict[str, Any]:
    """The reset parameters a dataset row carries; other columns are the trainer's."""
    return {key: row[key] for key in keys if row.get(key) is not None}


def default_faults() -> str:
    """ServiceBench's fault level when a row names none: $SERVICEBENCH_FAULTS, else off."""
    level = os.environ.get(FAULTS_VARIABLE, "").strip().lower() or "off"
    if level not in FAULT_LEVELS:
        raise ValueError(
            f"{FAULTS_VARIABLE} must be one of {', '.join(FAULT_LEVELS)}, got {level!r}"
        )
    return level


def _unit(value: float) -> float:
    return min(1.0, max(0.0, float(value)))


class _EpisodeTools:
    """Shared bookkeeping: the client, the episode score and the done guard (all private or data)."""

    _client_type: type = ServiceBenchEnv
    _reset_keys: tuple[str, ...] = ("task_id", "seed")
    """The row's columns this environment's reset takes."""

    def __init__(self) -> None:
        self.reward = 0.0
        self.done = False
        self.task_id = ""
        self._client: Any = None
        self._running = False

    def get_reward(self) -> float:
        """The episode's score in [0, 1]: what TRL asks once per finished rollout."""
        return self.reward

    @staticmethod
    def _score(observation: Any) -> float:
        raise NotImplementedError

    def _reset(self, row: dict[str, Any]) -> Any:
        """Start an episode over this instance's connection (reconnecting once if it dropped)."""
        self.reward, self.done, self._running = 0.0, False, False
        for attempt in (1, 2):
            if self._client is None:
                self._client = self._client_type(base_url=env_base_url()).sync()
            try:
                result = self._client.reset(**self._reset_row(row))
                break
            except (ConnectionError, ConnectionClosed, OSError):  # e.g. the server restarted
                self._close()
                if attempt == 2:
                    raise
        self.task_id, self._running = result.observation.task_id, True
        return result.observation

    def _reset_row(self, row: dict[str, Any]) -> dict[str, Any]:
        return _reset_options(row, self._reset_keys)

    def _step(self, action: Any) -> Any:
        if not self._running:
            raise ValueError("No episode is running: the trainer calls reset() first.")
        if self.done:
            raise ValueError("The episode is over: stop calling tools.")
        try:
            result: StepResult[Any] = self._client.step(action)
        except RuntimeError as exc:  # the server refused the action (e.g. a value out of range)
            raise ValueError(str(exc)) from None
        self.reward, self.done = self._score(result.observation), result.done
        return result.observation

    def _close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            finally:
                self._client = None


# ----------------------------------------------------------------------------- ServiceBench


POLICY_HEADING = "Support policy (the resolution must follow it):"
"""Introduces the policy every ServiceBench observation serves, in the prompt after the task."""


class ServiceBenchToolEnv(_EpisodeTools):
    """ServiceBench for TRL: resolve a customer request by calling user, order and inventory APIs."""

    _client_type = ServiceBenchEnv
    _reset_keys = ("task_id", "seed", "faults")

    def __init__(self) -> None:
        super().__init__()
        self.faults = "off"
        """The fault level of the running episode."""

    @staticmethod
    def _score(observation: ServiceBenchObservation) -> float:
        return _unit(observation.cumulative_reward)

    def _reset_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """The row's task, seed and fault level (its `faults` column, else $SERVICEBENCH_FAULTS)."""
        options = _reset_options(row, self._reset_keys)
        self.faults = options.pop("faults", None) or default_faults()
        return {**options, "faults": self.faults} if self.faults != "off" else options

    def reset(self, **kwargs: Any) -> str:
        """Start the row's task (`task_id`, `seed`, `faults`; default: the first task, no faults)
        and return its text."""
        observation: ServiceBenchObservation = self._reset(kwargs)
        budget = observation.info.get("max_steps")
        faults = f"\n\n{FAULTS_RULES}" if self.faults != "off" else ""
        return (
            f"\n\n{observation.task_description}\n\n{POLICY_HEADING}\n{observation.policy}"
            f"\n\nUse the service tools; every call is one step "
            f"(at most {budget}). The episode ends when the task is complete.{faults}"
        )

    def _call(self, tool: str, **params: Any) -> str:
        """Play the endpoint whose tool is `tool` (its `@endpoint` declaration: action_tools.py)."""
        action = ServiceBenchAction(**TOOLS_BY_NAME[tool].action(params))  # a None: left out
        observation: ServiceBenchObservation = self._step(action)
        return json.dumps(
            {
                "call": f"{action.method} {action.service} {action.endpoint}",
                "status_code": observation.api_response.get("status_code"),
                **{  # a rate limit says how long to wait
                    k: v for k, v in observation.api_response.items() if k == "retry_after_steps"
                },
                "response": observation.api_response.get("data"),
                "error": observation.error_message,
                "task_completed": observation.task_completed,
                "episode_done": observation.done,
            }
        )


PYTHON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict[str, str],
}
"""The Python type of each JSON schema kind of a tool parameter (action_tools.py)."""


def _endpoint_method(tool: ActionTool) -> Any:
    """One endpoint's tool as a method TRL reads: its signature, type hints and docstring
    (`Args:`) are made from the endpoint's declaration, so no tool is written twice."""

    def call(self: ServiceBenchToolEnv, **params: Any) -> str:
        return self._call(tool.name, **params)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    hints: dict[str, Any] = {"return": str}
    for param in sorted(tool.params, key=lambda param: not param.required):
        hint = PYTHON_TYPES[param.kind]
        hints[param.name] = hint = hint if param.required else hint | None
        default = inspect.Parameter.empty if param.required else param.default
        kind = inspect.Parameter.KEYWORD_ONLY
        parameters.append(inspect.Parameter(param.name, kind, default=default, annotation=hint))
    call.__name__ = call.__qualname__ = tool.name
    call.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    call.__annotations__ = hints
    args = "".join(f"\n    {param.name}: {param.description}" for param in tool.params)
    call.__doc__ = f"{tool.description}\n\nArgs:{args}" if args else tool.description
    return call


for _tool in TOOLS["servicebench"]:  # one tool per endpoint of the catalogue
    setattr(ServiceBenchToolEnv, _tool.name, _endpoint_method(_tool))


# ----------------------------------------------------------------------------- Support Queue


def _ticket_text(observation: SupportQueueObservation) -> str:
    """The current ticket as the model reads it: its place in the queue, then its fields as JSON."""
    if observation.ticket is None:
        return "No ticket left."
    ticket = json.dumps(observation.ticket.model_dump(mode="json"), ensure_ascii=False, indent=1)
    return f"Ticket {observation.current_index + 1} of {observation.total_tickets}:\n{ticket}"


class SupportQueueToolEnv(_EpisodeTools):
    """Support Queue for TRL: triage each ticket of the queue with one `triage` call."""

    _client_type = SupportQueueEnv

    @staticmethod
    def _score(observation: SupportQueueObservation) -> float:
        """The rewards so far over the whole queue: the episode score once every ticket is graded."""
        if not observation.total_tickets:
            return 0.0
        return _unit(observation.cumulative_reward / observation.total_tickets)

    def reset(self, **kwargs: Any) -> str:
        """Start the row's task (`task_id`, `seed`; default: the first task) and return the first ticket."""
        observation: SupportQueueObservation = self._reset(kwargs)
        return (
            f"\n\n{observation.instructions}\n\nCall triage once per ticket.\n\n"
            f"{_ticket_text(observation)}"
        )

    def triage(
        self,
        priority: Priority,
        queue: Queue,
        disposition: Disposition,
        summary: str,
        response: str,
        confidence: float = 0.5,
    ) -> str:
        """Submit the triage decision for the current ticket; the next ticket follows.

        Args:
            priority: Urgency, P1 (most urgent) to P4.
            queue: The team that owns the ticket.
            disposition: The next action: respond, request_info, escalate or close.
            summary: A short internal triage note naming the key facts.
            response: The first reply to the customer: accurate, safe, no promises you cannot keep.
            confidence: How sure you are of this decision, 0 to 1.
        """
        action = SupportQueueAction(
            priority=priority,
            queue=queue,
            disposition=disposition,
            summary=summary,
            response=response,
            confidence=confidence,
        )
        observation: SupportQueueObservation = self._step(action)
        feedback = json.dumps(observation.last_feedback or {})
        upcoming = "The queue is done." if observation.done else _ticket_text(observation)
        return f"Feedback on that ticket: {feedback}\n\n{upcoming}"


# ----------------------------------------------------------------------------- training

ENVIRONMENTS: dict[str, type[_EpisodeTools]] = {
    "servicebench": ServiceBenchToolEnv,
    "support_queue": SupportQueueToolEnv,
}


def environment_factory(env: str) -> type[_EpisodeTools] | dict[str, type[_EpisodeTools]]:
    """What `GRPOTrainer(environment_factory=...)` takes: one class, or both by name."""
    return dict(ENVIRONMENTS) if env == BOTH else ENVIRONMENTS[env]


def select_tasks(
    cards: Sequence[TaskCard], env: str, task_ids: Sequence[str] | None
) -> list[TaskCard]:
    """The tasks to train on: `task_ids` (ids or ServiceBench's integer aliases), else every task of `env`.

    No ids, or `all` among them, means every task of `env`.
    """
    playable = [card for card in cards if env in (BOTH, card.env)]
    if not task_ids or ALL_TASKS in task_ids:
        return playable
    chosen = []
    for wanted in task_ids:
        found = [c for c in playable if wanted in (c.id, None if c.alias is None else str(c.alias))]
        if not found:
            known = ", ".join(card.id for card in playable)
            raise ValueError(f"no task {wanted!r} in --env {env}; known: {known}")
        chosen.append(found[0])
    return chosen


def training_rows(
    tasks: Sequence[TaskCard], env: str, rows: int, first_seed: int, faults: str = "off"
) -> list[dict[str, Any]]:
    """The dataset: row i plays task i mod len(tasks) on seed first_seed + i // len(tasks).

    With both environments each row names its own in `environment`, which TRL reads to pick
    the class and does not pass on to `reset`. With `faults` above off, each ServiceBench row
    carries it in its `faults` column (Support Queue has no services to fail).
    """
    dataset = []
    for i in range(rows):
        card = tasks[i % len(tasks)]
        row: dict[str, Any] = {
            "prompt": [{"role": "user", "content": INSTRUCTION}],
            "task_id": card.id,
            "seed": first_seed + i // len(tasks),
        }
        if env == BOTH:
            row["environment"] = card.env
        if card.env == "servicebench" and faults != "off":
            row["faults"] = faults
        dataset.append(row)
    return dataset


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trl_environment.py",
        description="Train a model with TRL's GRPO on the tasks of ServiceBench, Support Queue or "
        "both, played on the server at $ENV_BASE_URL (default " + DEFAULT_ENV_BASE_URL + "). "
        "Training needs trl, datasets and a GPU; --dry-run needs only the server.",
    )
    parser.add_argument(
        "--env",
        choices=(*ENVIRONMENTS, BOTH),
        default=BOTH,
        help="the environment to train on (default: both, one class per dataset row)",
    )
    parser.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"the model to train (default: {DEFAULT_MODEL})"
    )
    parser.add_argument(
        "--task-id",
        action="append",
        help="a task to train on: an id, a ServiceBench number, or 'all' (repeatable; "
        "default: every task of --env)",
    )
    parser.add_argument("--rows", type=int, default=256, help="dataset rows (default: 256)")
    parser.add_argument(
        "--first-seed",
        type=int,
        default=1,
        help="seed of the first row of each task (default: 1; seeds 1-99,999 are for training)",
    )
    parser.add_argument(
        "--faults",
        choices=FAULT_LEVELS,
        default=None,
        help="ServiceBench's seeded service faults for every row: off, light or heavy "
        f"(default: ${FAULTS_VARIABLE}, else off)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the dataset rows as JSON lines and exit"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    """Build the dataset from the server's task list, then train (or print it with --dry-run)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.rows < 1:
        parser.error("--rows must be at least 1")
    try:
        with EnvHttpClient(env_base_url()) as client:
            cards = client.tasks()
    except EnvClientError as exc:
        parser.exit(1, f"{parser.prog}: cannot list the tasks: {exc}\n")
    try:
        tasks = select_tasks(cards, args.env, args.task_id)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        faults = args.faults or default_faults()
    except ValueError as exc:
        parser.error(str(exc))
    if faults != "off" and args.env == "support_queue":
        parser.error(f"--faults {faults} fails ServiceBench's services; Support Queue has none")
    rows = training_rows(tasks, args.env, args.rows, args.first_seed, faults)
    if args.dry_run:
        for row in rows:
            sys.stdout.write(json.dumps(row) + "\n")
        return
    try:  # imported here: --help, --dry-run and the classes need neither
        from datasets import Dataset
        from trl import GRPOConfig, GRPOTrainer
    except ImportError as exc:
        parser.exit(
            1, f"{parser.prog}: training needs trl and datasets ({exc}); --dry-run does not\n"
        )

    trainer = GRPOTrainer(
        model=args.model,
        train_dataset=Dataset.from_list(rows),
        environment_factory=environment_factory(args.env),
        args=GRPOConfig(**GRPO_SETTINGS),
    )
    trainer.train()


if __name__ == "__main__":
    main()
