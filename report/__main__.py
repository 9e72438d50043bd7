"""Render a results file of inference.py as the HTML report.

    python -m servicebench_support_queue.report inference_results.json -o inference_report.html

Exit status: 0 when the report is written; 2 when the results file cannot be read (it is
missing, not JSON, or not inference.py's results), with one line on stderr naming the problem.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..agents.output import Redactor
from .aggregate import ResultsError, load_results
from .html import write_html_report


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m servicebench_support_queue.report",
        description="Render inference.py's results JSON as a self-contained HTML report.",
    )
    parser.add_argument("results", type=Path, help="the results file (inference_results.json)")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="PATH",
        help="the HTML file to write (default: the results file's name with .html)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    output: Path = args.output or args.results.with_suffix(".html")
    if output.resolve() == args.results.resolve():
        print(f"report: the output {output} is the results file itself", file=sys.stderr)
        return 2
    try:
        document = load_results(args.results)
        written = write_html_report(output, document, Redactor())
    except ResultsError as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"report: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(written)
    return 0


if __name__ == "__main__":
    sys.exit(main())
