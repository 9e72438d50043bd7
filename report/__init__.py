"""The HTML report of an evaluation: `inference.py` writes it beside its results, and
`python -m servicebench_support_queue.report results.json -o report.html` renders any
results file (an old one too)."""

from .aggregate import ResultsError, build, load_results
from .html import render_html, write_html_report

__all__ = ["ResultsError", "build", "load_results", "render_html", "write_html_report"]
