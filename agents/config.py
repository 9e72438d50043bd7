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
from pathlib import Path

from .. import __version__

DEFAULT_API_BASE_URL = "https://router.huggingface.co/v1"
DEFAULT_MODEL_NAME = "Qwen/Qwen2.5-72B-Instruct"
DEFAULT_ENV_BASE_URL = "http://localhost:8000"
ENV_NAMES = ("servicebench", "support_queue")
TOOL_MODES = ("auto", "on", "off")
FAULT_LEVELS = ("off", "light", "heavy")
"""ServiceBench's fault levels (`faults` at reset): how often its services fail."""
MAX_SEEDS = 100_000
MAX_REPEATS = 100
MAX_CONCURRENCY = 64
DEFAULT_OUTPUT = "inference_results.json"
DEFAULT_TRAJECTORIES = "inference_trajectories.jsonl"
DEFAULT_REPORT = "inference_report.md"
DEFAULT_HTML_REPORT = "inference_report.html"


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
    split: str | None = None
    """--split: play the tasks of this Task API split (GET /{env}/splits) instead of task x seed."""
    family: str | None = None
    """--family: only the split's tasks of this family."""
    limit: int | None = None
    """--limit: the first N tasks of the split (of the family); None: one per family."""
    repeats: int = 1
    """--repeats: episodes per (task, seed); pass^1..pass^repeats are reported."""
    concurrency: int = 1
    """--concurrency: episodes played at once (each with its own HTTP client)."""
    fallback: bool = False
    faults: str = "off"
    """--faults: ServiceBench's fault level, sent with every ServiceBench reset (Support Queue
    has no services to fail: a run of its tasks alone refuses a level other than off)."""
    max_steps: int | None = None
    output_dir: str = "."
    """--output-dir: where the run's files go (default: the working directory)."""
    output: str = DEFAULT_OUTPUT
    trajectories: str = DEFAULT_TRAJECTORIES
    report: str = DEFAULT_REPORT
    html_report: str = DEFAULT_HTML_REPORT
    """The four files the run writes, each resolved against `output_dir` (see `output_paths`)."""
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
        "--split",
        metavar="NAME",
        help="play the tasks of this split (train, validation, test, test_families; "
        "GET /{env}/splits), each environment's first --limit tasks",
    )
    parser.add_argument(
        "--family", metavar="NAME", help="with --split: only the split's tasks of this family"
    )
    parser.add_argument(
        "--limit",
        type=_bounded_int(MAX_SEEDS),
        metavar="N",
        help="with --split: the first N tasks of the split, or of --family "
        "(default: one task per family of the split)",
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
        "--faults",
        choices=FAULT_LEVELS,
        default="off",
        metavar="LEVEL",
        help="ServiceBench's seeded service faults (503, 429, 504, stale reads): off, light or "
        "heavy (default: off); Support Queue has none, so --env support_queue takes only off",
    )
    parser.add_argument(
        "--max-steps", type=_positive_int, help="cap on steps per task (default: task budget)"
    )
    parser.add_argument(
        "--output-dir",
        default=".",
        metavar="DIR",
        help="directory of every file the run writes, created if missing (default: the working "
        "directory); the four paths below are relative to it",
    )
    parser.add_argument(
        "--output",
        default=DEFAULT_OUTPUT,
        metavar="PATH",
        help="results JSON (default: %(default)s)",
    )
    parser.add_argument(
        "--trajectories",
        default=DEFAULT_TRAJECTORIES,
        metavar="PATH",
        help="JSONL of every episode's trajectory, one line per episode (default: %(default)s)",
    )
    parser.add_argument(
        "--report",
        default=DEFAULT_REPORT,
        metavar="PATH",
        help="markdown report (default: %(default)s)",
    )
    parser.add_argument(
        "--html-report",
        default=DEFAULT_HTML_REPORT,
        metavar="PATH",
        help="self-contained HTML report: charts, tables, trajectories (default: %(default)s)",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar or lines on stderr"
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser


def output_paths(output_dir: str, **files: str) -> dict[str, str]:
    """Each file's path resolved against `output_dir` (an absolute one stays as given).

    Raises ConfigError when `output_dir` is not a directory or two files are one, so that
    a bad layout is reported before anything runs or is written.
    """
    directory = Path(output_dir).expanduser()
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"--output-dir {output_dir!r} exists and is not a directory")
    resolved = {
        name: (directory / Path(path).expanduser()).resolve() for name, path in files.items()
    }
    seen: dict[Path, str] = {}
    for key, path in resolved.items():
        name = key.replace("_", "-")  # as the flag is spelt
        if path in seen:
            raise ConfigError(f"--{seen[path]} and --{name} name the same file: {path}")
        if path.is_dir():
            raise ConfigError(f"--{name} {path} is a directory")
        seen[path] = name
    return {name: str(path) for name, path in resolved.items()}


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
    if args.split is None and (args.family is not None or args.limit is not None):
        parser.error("--family and --limit choose tasks of a split: add --split NAME")
    if args.split is not None and (args.task, args.seed, args.seeds) != (None, None, None):
        parser.error("--split names its own tasks and seeds: leave out --task, --seed and --seeds")
    if args.faults != "off" and args.env == "support_queue":
        parser.error(
            f"--faults {args.faults} fails ServiceBench's services; Support Queue has none: "
            "leave out --faults, or add --env servicebench"
        )
    tools = environ.get("MODEL_TOOLS", "auto").strip().lower() or "auto"
    if tools not in TOOL_MODES:
        raise ConfigError(f"MODEL_TOOLS must be one of {', '.join(TOOL_MODES)}, got {tools!r}")
    env_base_url = environ.get("ENV_BASE_URL", "").strip()
    files = output_paths(
        args.output_dir,
        output=args.output,
        trajectories=args.trajectories,
        report=args.report,
        html_report=args.html_report,
    )
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
        split=args.split,
        family=args.family,
        limit=args.limit,
        repeats=args.repeats,
        concurrency=args.concurrency,
        fallback=args.fallback,
        faults=args.faults,
        max_steps=args.max_steps,
        output_dir=str(Path(args.output_dir).expanduser().resolve()),
        **files,
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
