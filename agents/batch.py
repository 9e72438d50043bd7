"""A whole run: pick the tasks, play each with its agent, write the results file.

Imported by `inference.py` only once the configuration is known to be good, so
that a bad flag is reported at once, before the heavy imports.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Iterator, Optional, Sequence

from agents.base import Agent
from agents.config import Config, ConfigError
from agents.model import ChatModel
from agents.output import Redactor, StructuredLog
from agents.results import results_document, write_results
from agents.runner import TaskRun
from client import EnvClientError, EnvHttpClient
from models import TaskCard

FALLBACK_LABEL = "fallback"


def select_tasks(cards: Sequence[TaskCard], config: Config) -> list[TaskCard]:
    """The tasks `--env` and `--task` ask for, in the server's order; all of them by default."""
    chosen = [card for card in cards if config.env in (None, card.env)]
    if config.task is not None:
        wanted = config.task.strip()
        chosen = [c for c in chosen if wanted == c.id or (c.alias is not None and wanted == str(c.alias))]
    if not chosen:
        known = ", ".join(card.id for card in cards)
        raise ConfigError(f"no task matches --env={config.env} --task={config.task}; known tasks: {known}")
    return chosen


def make_agent(card: TaskCard, config: Config, model: Optional[ChatModel], deadline: float) -> Agent:
    """The agent for one task: the fallback policy without a model, else the env's LLM agent."""
    if model is None:
        from agents.fallback import fallback_agent

        return fallback_agent(card.env)
    if card.env == "servicebench":
        from agents.servicebench_llm import ServiceBenchLLMAgent

        return ServiceBenchLLMAgent(model, config.model_tools, deadline)
    from agents.support_queue_llm import SupportQueueLLMAgent

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
    started = time.monotonic()
    model_label = FALLBACK_LABEL if config.fallback else config.model_name
    model = None if config.fallback else ChatModel(config)
    if model is not None and not config.api_key:
        log.warning("neither HF_TOKEN nor API_KEY is set: calling %s without a key", config.api_base_url)
    with environment_server(config, log) as base_url:
        with EnvHttpClient(base_url, config.env_timeout_s) as client:
            try:
                cards = select_tasks(client.tasks(), config)
            except EnvClientError as exc:
                log.error("cannot list the tasks of the environment server: %s", exc)
                return 1
            run_deadline = started + config.time_budget_s
            outcomes = []
            for index, card in enumerate(cards):
                share = max(0.0, run_deadline - time.monotonic()) / (len(cards) - index)
                deadline = time.monotonic() + share
                agent = make_agent(card, config, model, deadline)
                outcomes.append(TaskRun(card, client, agent, config, out, model_label).run())
    document = results_document(config, model_label, outcomes, time.monotonic() - started)
    path = write_results(config.output, document, redactor)
    summary = document["summary"]
    log.info("mean scores %s (%d/%d tasks completed); results in %s",
             summary["mean_score"], summary["successes"], summary["tasks"], path)
    return 0
