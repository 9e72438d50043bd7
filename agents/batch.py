"""A whole run: pick the tasks, play every planned episode with its agent, write the run's files.

Imported by `inference.py` only once the configuration is known to be good, so
that a bad flag is reported at once, before the heavy imports.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..client import EnvClientError, EnvHttpClient
from ..models import TaskCard
from ..report import write_html_report
from .base import Agent
from .config import Config, ConfigError
from .evaluation import evaluate
from .model import ChatModel
from .output import Redactor, StructuredLog
from .progress import Progress
from .report import write_report
from .results import TrajectoryLog, results_document, seeds_label, write_results
from .runner import TaskRun
from .split_plan import split_tasks
from .sweep import PlannedEpisode, TimeBudget, plan_episodes, plan_split_episodes, play_all

FALLBACK_LABEL = "fallback"
ENV_SERVER_STATUS = 1
MODEL_FAILED_STATUS = 3
INTERRUPTED_STATUS = 130


def select_tasks(cards: Sequence[TaskCard], config: Config) -> list[TaskCard]:
    """The tasks `--env` and `--task` ask for, in the server's order; all of them by default."""
    chosen = [card for card in cards if config.env in (None, card.env)]
    if config.task is not None:
        wanted = config.task.strip()
        chosen = [
            c for c in chosen if wanted == c.id or (c.alias is not None and wanted == str(c.alias))
        ]
    if not chosen:
        known = ", ".join(card.id for card in cards)
        raise ConfigError(
            f"no task matches --env={config.env} --task={config.task}; known tasks: {known}"
        )
    return chosen


def plan_run(client: EnvHttpClient, config: Config) -> tuple[list[PlannedEpisode], int]:
    """The run's episodes, and its number of rounds (one pass over the tasks, each sharing the
    time budget once): the selected tasks on every seed, or the tasks of `--split`."""
    cards = select_tasks(client.tasks(), config)
    if config.split is None:
        return plan_episodes(cards, config.seeds, config.repeats), len(
            config.seeds
        ) * config.repeats
    tasks = split_tasks(client, list(dict.fromkeys(card.env for card in cards)), config)
    rounds = max(len(specs) for specs in tasks.values()) * config.repeats
    return plan_split_episodes(tasks, config.repeats), rounds


def make_agent(card: TaskCard, config: Config, model: ChatModel | None, deadline: float) -> Agent:
    """The agent for one task: the fallback policy without a model, else the env's LLM agent."""
    if model is None:
        from .fallback import fallback_agent

        return fallback_agent(card.env)
    if card.env == "servicebench":
        from .servicebench_llm import ServiceBenchLLMAgent

        return ServiceBenchLLMAgent(model, config.model_tools, deadline, config.faults)
    from .support_queue_llm import SupportQueueLLMAgent

    return SupportQueueLLMAgent(model, deadline)


@contextlib.contextmanager
def environment_server(config: Config, log: logging.Logger) -> Iterator[str]:
    """The server's base URL: ENV_BASE_URL, or a container of LOCAL_IMAGE_NAME started for the run."""
    if not config.local_image_name or config.env_base_url_given:
        yield config.env_base_url
        return
    from openenv.core.containers.runtime import LocalDockerProvider

    provider = LocalDockerProvider()
    log.info("starting a container of %s", config.local_image_name)
    base_url = provider.start_container(config.local_image_name)
    try:
        provider.wait_for_ready(base_url, timeout_s=120.0)
        yield base_url
    finally:
        provider.stop_container()


def fault_note(plan: Sequence[PlannedEpisode], config: Config, log: logging.Logger) -> None:
    """--faults fails ServiceBench's services only: refuse a run with none of its tasks, and
    say so when Support Queue's tasks are in the run too (they play as usual)."""
    if config.faults == "off":
        return
    envs = {item.card.env for item in plan}
    if "servicebench" not in envs:
        raise ConfigError(
            f"--faults {config.faults} fails ServiceBench's services, and the run has no "
            "ServiceBench task: leave out --faults"
        )
    if "support_queue" in envs:
        log.info(
            "--faults %s applies to ServiceBench's tasks; Support Queue's play as usual",
            config.faults,
        )


class EarlyStop:
    """Stops a run that can measure nothing: once an episode has ended with every model call
    of the run so far failed, no further episode starts (those under way end on their own)."""

    def __init__(self, model: ChatModel | None) -> None:
        self.model = model
        self.reason: str | None = None

    def episode_ended(self) -> None:
        if self.model is not None and self.model.health.failed:
            self.reason = self.reason or self.model.health.failure(self.model.config.api_base_url)


def run(config: Config, out: StructuredLog, redactor: Redactor, log: logging.Logger) -> int:
    """Play the plan, then write the results, the report and (as it goes) the trajectories.

    Exit status: 0 after a run, 1 if the environment server is unreachable, 3 if no model
    call succeeded (then the run stops after the first episode that proves it), 130 if
    interrupted; 2 (bad usage) comes from `ConfigError`, raised before anything runs.
    """
    started = time.monotonic()
    model_label = FALLBACK_LABEL if config.fallback else config.model_name
    model = None if config.fallback else ChatModel(config)
    if model is not None and not config.api_key:
        log.warning(
            "neither HF_TOKEN nor API_KEY is set: calling %s without a key", config.api_base_url
        )
    records: list[dict[str, Any]] = []
    interrupted, stop, planned = False, EarlyStop(model), 0
    with environment_server(config, log) as base_url, contextlib.ExitStack() as stack:
        clients = [
            stack.enter_context(EnvHttpClient(base_url, config.env_timeout_s))
            for _ in range(config.concurrency)
        ]
        try:
            plan, rounds = plan_run(clients[0], config)
        except EnvClientError as exc:
            log.error("cannot list the tasks of the environment server: %s", exc)
            return ENV_SERVER_STATUS
        planned = len(plan)
        fault_note(plan, config, log)
        budget = TimeBudget(config.time_budget_s * rounds, len(plan), config.concurrency)

        def play(
            item: PlannedEpisode, episode_out: StructuredLog, client: EnvHttpClient
        ) -> dict[str, Any] | None:
            if stop.reason is not None:
                return None
            agent = make_agent(item.card, config, model, budget.next_deadline())
            record = TaskRun(
                item.card,
                client,
                agent,
                config,
                episode_out,
                model_label,
                item.seed,
                item.repeat,
                item.split_task,
            ).run()
            stop.episode_ended()
            return record

        trajectories = stack.enter_context(TrajectoryLog(config.trajectories, redactor))
        progress = stack.enter_context(Progress(len(plan), sys.stderr, config.progress))

        def keep(record: dict[str, Any]) -> None:
            records.append(record)
            trajectories.write(record)

        try:
            play_all(
                plan, play, out, clients, keep, lambda r: progress.advance(r["score"], r["success"])
            )
        except KeyboardInterrupt:
            interrupted = True
            log.warning(
                "interrupted after %d of %d episodes: writing what was played",
                len(records),
                len(plan),
            )
    if stop.reason is not None and len(records) < planned:
        log.warning("stopped after %d of %d episodes: %s", len(records), planned, stop.reason)
    run_facts = {
        "episodes_planned": planned,
        "stopped_early": stop.reason if len(records) < planned else None,
        "model_calls": None if model is None else model.health.as_json(),
    }
    write_outputs(
        config, model_label, records, time.monotonic() - started, run_facts, redactor, log
    )
    if interrupted:
        return INTERRUPTED_STATUS
    failure = None if model is None else model.health.failure(config.api_base_url)
    if failure is not None:
        log.error(
            "%s; played %d of %d episodes (exit status %d)",
            failure,
            len(records),
            planned,
            MODEL_FAILED_STATUS,
        )
        return MODEL_FAILED_STATUS
    return 0


def write_outputs(
    config: Config,
    model_label: str,
    records: list[dict[str, Any]],
    duration_s: float,
    run_facts: dict[str, Any],
    redactor: Redactor,
    log: logging.Logger,
) -> None:
    """The results file and the two reports (the trajectories are already written)."""
    evaluation = evaluate(records, config.repeats)
    document = results_document(
        config, model_label, records, duration_s, evaluation.as_json(), run_facts
    )
    results_path = write_results(config.output, document, redactor)
    report_facts = {
        "model": model_label,
        "seeds": seeds_label(config),
        "duration_s": duration_s,
        "faults": config.faults,
        "failures": document["summary"]["failures"],
    }
    report_path = write_report(config.report, evaluation, report_facts, redactor)
    html_path = write_html_report(config.html_report, document, redactor)
    summary, overall = document["summary"], evaluation.overall
    log.info(
        "mean scores %s (%d of %d episodes successful); pass^k %s",
        summary["mean_score"],
        summary["successes"],
        summary["tasks"],
        {k: None if v is None else round(v, 3) for k, v in overall.pass_hat.items()},
    )
    log.info(
        "results in %s, reports in %s and %s, trajectories in %s",
        results_path,
        report_path,
        html_path,
        Path(config.trajectories).resolve(),
    )
