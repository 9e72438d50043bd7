"""The run's configuration: command-line flags plus environment variables.

Defaults suit a slow local endpoint (a small model on a CPU can take a minute
per call) while keeping the default six-task run bounded in wall time. A
sweep (`--seeds 0-49 --repeats 4`) is the same run over more episodes: every
selected task on every seed, k times.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from .. import __version__

DEFAULT_API_BASE_URL = "https://router.huggingface.co/v1"
DEFAULT_MODEL_NAME = "Qwen/Qwen2.5-72B-Instruct"
DEFAULT_ENV_BASE_URL = "http://localhost:8000"
ENV_NAMES = ("servicebench", "support_queue")
TOOL_MODES = ("auto", "on", "off")
MAX_SEEDS = 100_000
MAX_REPEATS = 100
MAX_CONCURRENCY = 64


class ConfigError(ValueError):
    """A flag or environment variable with an unusable value."""


@dataclass(frozen=True)
class Config:
    api_base_url: str = DEFAULT_API_BASE_URL
    model_name: str = DEFAULT_MODEL_NAME
    api_key: str = field(default="", repr=False)  # never printed, never logged
    env_base_url: str = DEFAULT_ENV_BASE_URL
    env_base_url_given: bool = False
    local_image_name: str = ""
    env: str | None = None
    task: str | None = None
    seed: int | None = None
    """--seed: the one seed of a single-seed run (None: the canonical task)."""
    seeds: tuple[int | None, ...] = (None,)
    """Every seed the run plays, in order: --seeds, else (--seed,), else the canonical task."""
    seed_spec: str | None = None
    """--seeds as given, for the report."""
    repeats: int = 1
    """--repeats: episodes per (task, seed); pass^1..pass^repeats are reported."""
    concurrency: int = 1
    """--concurrency: episodes played at once (each with its own HTTP client)."""
    fallback: bool = False
    max_steps: int | None = None
    output: str = "inference_results.json"
    trajectories: str = "inference_trajectories.jsonl"
    report: str = "inference_report.md"
    progress: bool = True
    """False with --no-progress; the bar is drawn only when stderr is a terminal anyway."""
    model_timeout_s: float = 120.0
    """MODEL_TIMEOUT_S: one model call's timeout."""
    model_max_retries: int = 2
    """MODEL_MAX_RETRIES: retries after a timeout, rate limit, connection or 5xx error."""
    model_backoff_s: float = 2.0
    """MODEL_BACKOFF_S: first retry delay; it doubles per retry."""
    model_backoff_max_s: float = 20.0
    """MODEL_BACKOFF_MAX_S: cap of one retry delay (also caps a server's Retry-After)."""
    model_max_tokens: int = 512
    """MODEL_MAX_TOKENS: completion budget of one call."""
    model_temperature: float = 0.0
    """MODEL_TEMPERATURE: 0 keeps runs as repeatable as the endpoint allows."""
    model_tools: str = "auto"
    """MODEL_TOOLS: auto (tools, else JSON in text when the endpoint refuses tools), on, off."""
    time_budget_s: float = 900.0
    """INFERENCE_TIME_BUDGET_S: wall-time budget of one pass over the selected tasks, shared out among
    them; a sweep gets it once per (seed, repeat) round, so that its bound grows with its size."""
    max_failed_turns: int = 2
    """AGENT_MAX_FAILED_TURNS: consecutive ServiceBench turns without a usable action before the episode ends."""
    env_timeout_s: float = 30.0
    """ENV_TIMEOUT_S: timeout of one request to the environment server."""

    @property
    def secrets(self) -> tuple[str, ...]:
        return (self.api_key,) if self.api_key else ()


def _number(
    environ: Mapping[str, str], name: str, default: float, kind: type, minimum: float
) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(
            f"{name} must be a{'n integer' if kind is int else ' number'}, got {raw!r}"
        ) from None
    if value < minimum:
        raise ConfigError(f"{name} must be >= {minimum}, got {raw!r}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    value = _non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected an integer >= 1")
    return value


def parse_seeds(text: str) -> tuple[int, ...]:
    """The seeds of a spec like `0-49` or `1,5,9-12`, in the order written; no seed twice."""
    seeds: list[int] = []
    for item in (part.strip() for part in text.split(",")):
        low, dash, high = item.partition("-")
        try:
            first = int(low)
            last = int(high) if dash else first
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected seeds like 0-49 or 1,5,9-12, got {text!r}"
            ) from None
        if first < 0 or last < first:
            raise argparse.ArgumentTypeError(
                f"bad seed range {item!r}: expected 0 <= first <= last"
            )
        if len(seeds) + last - first + 1 > MAX_SEEDS:
            raise argparse.ArgumentTypeError(f"at most {MAX_SEEDS} seeds per run")
        seeds.extend(range(first, last + 1))
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"a seed appears twice in {text!r}")
    return tuple(seeds)


def _bounded_int(maximum: int) -> Callable[[str], int]:
    """An argparse type: an integer in 1..maximum."""

    def parse(text: str) -> int:
        value = _positive_int(text)
        if value > maximum:
            raise argparse.ArgumentTypeError(f"expected an integer <= {maximum}, got {text!r}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="inference.py",
        description="Run an LLM agent (or the no-model fallback policies) on the tasks of both "
        "environments; structured [START]/[STEP]/[END] lines on stdout, results in a JSON file.",
    )
    parser.add_argument("--env", choices=ENV_NAMES, help="only this environment's tasks")
    parser.add_argument("--task", help="only this task (id, or ServiceBench's integer alias)")
    seeds = parser.add_mutually_exclusive_group()
    seeds.add_argument(
        "--seed", type=_non_negative_int, help="task variant seed (default: canonical task)"
    )
    seeds.add_argument(
        "--seeds",
        type=str,
        metavar="SPEC",
        help="sweep these seeds, e.g. 0-49 or 1,5,9-12 (0 is the canonical task)",
    )
    parser.add_argument(
        "--repeats",
        type=_bounded_int(MAX_REPEATS),
        default=1,
        metavar="K",
        help="episodes per (task, seed); reports pass^1..pass^K (default 1)",
    )
    parser.add_argument(
        "--concurrency",
        type=_bounded_int(MAX_CONCURRENCY),
        default=1,
        metavar="N",
        help="episodes played in parallel (default 1); stdout stays one block per episode",
    )
    parser.add_argument(
        "--fallback",
        action="store_true",
        help="no model: ServiceBench's optimal policy and Support Queue's heuristic",
    )
    parser.add_argument(
        "--max-steps", type=_positive_int, help="cap on steps per task (default: task budget)"
    )
    parser.add_argument("--output", default="inference_results.json", help="results file path")
    parser.add_argument(
        "--trajectories",
        default="inference_trajectories.jsonl",
        help="JSONL file of every episode's trajectory, one line per episode",
    )
    parser.add_argument("--report", default="inference_report.md", help="markdown report path")
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar or lines on stderr"
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def load_config(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] = os.environ
) -> Config:
    """Flags from `argv`, the rest from `environ`; raises ConfigError on a bad value."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        seeds = parse_seeds(args.seeds) if args.seeds is not None else (args.seed,)
    except argparse.ArgumentTypeError as exc:
        parser.error(f"argument --seeds: {exc}")
    tools = environ.get("MODEL_TOOLS", "auto").strip().lower() or "auto"
    if tools not in TOOL_MODES:
        raise ConfigError(f"MODEL_TOOLS must be one of {', '.join(TOOL_MODES)}, got {tools!r}")
    env_base_url = environ.get("ENV_BASE_URL", "").strip()
    return Config(
        api_base_url=environ.get("API_BASE_URL", "").strip() or DEFAULT_API_BASE_URL,
        model_name=environ.get("MODEL_NAME", "").strip() or DEFAULT_MODEL_NAME,
        api_key=(environ.get("HF_TOKEN", "") or environ.get("API_KEY", "")).strip(),
        env_base_url=(env_base_url or DEFAULT_ENV_BASE_URL).rstrip("/"),
        env_base_url_given=bool(env_base_url),
        local_image_name=environ.get("LOCAL_IMAGE_NAME", "").strip(),
        env=args.env,
        task=args.task,
        seed=args.seed,
        seeds=seeds,
        seed_spec=args.seeds,
        repeats=args.repeats,
        concurrency=args.concurrency,
        fallback=args.fallback,
        max_steps=args.max_steps,
        output=args.output,
        trajectories=args.trajectories,
        report=args.report,
        progress=not args.no_progress,
        model_timeout_s=_number(environ, "MODEL_TIMEOUT_S", 120.0, float, 0.001),
        model_max_retries=int(_number(environ, "MODEL_MAX_RETRIES", 2, int, 0)),
        model_backoff_s=_number(environ, "MODEL_BACKOFF_S", 2.0, float, 0.0),
        model_backoff_max_s=_number(environ, "MODEL_BACKOFF_MAX_S", 20.0, float, 0.0),
        model_max_tokens=int(_number(environ, "MODEL_MAX_TOKENS", 512, int, 16)),
        model_temperature=_number(environ, "MODEL_TEMPERATURE", 0.0, float, 0.0),
        model_tools=tools,
        time_budget_s=_number(environ, "INFERENCE_TIME_BUDGET_S", 900.0, float, 1.0),
        max_failed_turns=int(_number(environ, "AGENT_MAX_FAILED_TURNS", 2, int, 1)),
        env_timeout_s=_number(environ, "ENV_TIMEOUT_S", 30.0, float, 0.001),
    )
