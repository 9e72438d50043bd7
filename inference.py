"""Measure an LLM agent on every task of both environments, or watch them solved without a model.

    python inference.py                # the model at API_BASE_URL / MODEL_NAME, all six tasks
    python inference.py --fallback     # no model: ServiceBench's optimal policy, Support Queue's heuristic
    python inference.py --env support_queue --task medium_sla_defense --seed 3 --max-steps 5
    python inference.py --seeds 0-49 --repeats 4 --concurrency 4   # a sweep: mean ± s.e. and pass^1..pass^4
    python inference.py --split test_families --limit 40           # a Task API split; per family and split

Environment: API_BASE_URL, MODEL_NAME, HF_TOKEN (or API_KEY), ENV_BASE_URL
(default http://localhost:8000), optional LOCAL_IMAGE_NAME (a Docker image of
the server to start when ENV_BASE_URL is not set), and the MODEL_* /
INFERENCE_TIME_BUDGET_S knobs of agents/config.py.

stdout carries only the [START] / [STEP] / [END] lines (one uninterrupted block
per episode, in plan order, whatever the concurrency); diagnostics and the
progress bar go to stderr. Files, all in --output-dir (default: the working
directory): inference_results.json (--output), inference_trajectories.jsonl
(--trajectories, one line per episode), inference_report.md (--report, the
per-task and per-environment tables) and inference_report.html (--html-report: the
same tables with charts, pass^k curves and every trajectory, in one offline file;
`python -m servicebench_support_queue.report RESULTS -o HTML` renders any results file).

Exit status: 0 after a run (whatever the scores); 1 if the environment server
cannot be reached (or the run failed unexpectedly); 2 on bad usage, before
anything runs; 3 if no model call of the run succeeded (the endpoint is
unreachable, or every call failed): the run then stops after the first episode
that shows it, and stderr says why in one line naming the endpoint; 130 if
interrupted.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TextIO

PACKAGE = "servicebench_support_queue"


def main(
    argv: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run inference.py; the exit status is documented at the top of this file."""
    from .agents.config import ConfigError, load_config
    from .agents.output import Redactor, StructuredLog, diagnostics

    try:
        config = load_config(argv, os.environ if environ is None else environ)
    except ConfigError as exc:
        print(f"inference.py: {exc}", file=stderr or sys.stderr)
        return 2
    redactor = Redactor(config.secrets)
    with diagnostics(redactor, stderr) as log:
        try:
            from .agents.batch import run  # the heavy imports, once the flags are known to be good

            return run(config, StructuredLog(redactor, stdout), redactor, log)
        except ConfigError as exc:
            log.error("%s", exc)
            return 2
        except Exception:  # never an unredacted traceback
            log.exception("inference run failed")
            return 1


def checkout_package() -> ModuleType:
    """This checkout as the package, for `python inference.py` (a script has no package).

    The installed package when it is this directory (`uv sync` installs it editable);
    otherwise this directory, registered under the package's name, so a clone runs its
    own code whether or not (or whatever else) is installed.
    """
    here = Path(__file__).resolve().parent
    installed = importlib.util.find_spec(PACKAGE)
    locations = list(installed.submodule_search_locations or ()) if installed else []
    if locations and Path(locations[0]).resolve() == here:
        return importlib.import_module(PACKAGE)
    spec = importlib.util.spec_from_file_location(
        PACKAGE, here / "__init__.py", submodule_search_locations=[str(here)]
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    return package


if __name__ == "__main__":
    checkout_package()
    sys.exit(importlib.import_module(f"{PACKAGE}.inference").main())
