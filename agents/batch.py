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
from .base import Agent
from .config import Config, ConfigError
from .evaluation import evaluate
from .model import ChatModel
from .output import Redactor, StructuredLog
from .progress import Progress
from .report import write_report
from .results import TrajectoryLog, results_document, seeds_label, write_results
from .runner import TaskRun
from .sweep import PlannedEpisode, TimeBudget, plan_episodes, play_all

FALLBACK_LABEL = "fallback"
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


def make_agent(card: TaskCard, config: Config, model: ChatModel | None, deadline: float) -> Agent:
    """The agent for one task: the fallback policy without a model, else the env's LLM agent."""
    if model is None:
        from .fallback import fallback_agent

        return fallback_agent(card.env)
    if card.env == "servicebench":
        from .servicebench_llm import ServiceBenchLLMAgent

        return ServiceBenchLLMAgent(model, config.model_tools, deadline)
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


def run(config: Config, out: StructuredLog, redactor: Redactor, log: logging.Logger) -> int:
    """Play the plan, then write the results, the report and (as it goes) the trajectories."""
    started = time.monotonic()
    model_label = FALLBACK_LABEL if config.fallback else config.model_name
    model = None if config.fallback else ChatModel(config)
    if model is not None and not config.api_key:
        log.warning(
            "neither HF_TOKEN nor API_KEY is set: calling %s without a key", config.api_base_url
        )
    records: list[dict[str, Any]] = []
    interrupted = False
    with environment_server(config, log) as base_url, contextlib.ExitStack() as stack:
        clients = [
            stack.enter_context(EnvHttpClient(base_url, config.env_timeout_s))
            for _ in range(config.concurrency)
        ]
        try:
            cards = select_tasks(clients[0].tasks(), config)
        except EnvClientError as exc:
            log.error("cannot list the tasks of the environment server: %s", exc)
            return 1
        plan = plan_episodes(cards, config.seeds, config.repeats)
        rounds = len(config.seeds) * config.repeats
        budget = TimeBudget(config.time_budget_s * rounds, len(plan), config.concurrency)

        def play(
            item: PlannedEpisode, episode_out: StructuredLog, client: EnvHttpClient
        ) -> dict[str, Any]:
            agent = make_agent(item.card, config, model, budget.next_deadline())
            return TaskRun(
                item.card, client, agent, config, episode_out, model_label, item.seed, item.repeat
            ).run()

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
    write_outputs(config, model_label, records, time.monotonic() - started, redactor, log)
    return INTERRUPTED_STATUS if interrupted else 0


def write_outputs(
    config: Config,
    model_label: str,
    records: list[dict[str, Any]],
    duration_s: float,
    redactor: Redactor,
    log: logging.Logger,
) -> None:
    """The results file and the markdown report (the trajectories are already written)."""
    evaluation = evaluate(records, config.repeats)
    document = results_document(config, model_label, records, duration_s, evaluation.as_json())
    results_path = write_results(config.output, document, redactor)
    run_facts = {"model": model_label, "seeds": seeds_label(config), "duration_s": duration_s}
    report_path = write_report(config.report, evaluation, run_facts, redactor)
    summary, overall = document["summary"], evaluation.overall
    log.info(
        "mean scores %s (%d/%d episodes completed); pass^k %s",
        summary["mean_score"],
        summary["successes"],
        summary["tasks"],
        {k: None if v is None else round(v, 3) for k, v in overall.pass_hat.items()},
    )
    log.info(
        "results in %s, report in %s, trajectories in %s",
        results_path,
        report_path,
        Path(config.trajectories).resolve(),
    )
