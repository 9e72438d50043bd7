"""The HTML report of a run: one self-contained file (inline CSS and SVG, no script, no link).

It opens from disk, offline, in any browser, and can be mailed or attached to a pull
request: nothing in it is fetched. Sections: the run's facts; a chart and a table per
grouping (task, family and split when the run has them, environment) with mean score
± standard error, success rate and pass^k; the pass^k curves; the distribution of
episode scores; and the trajectory viewer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..agents.evaluation import Row
from ..agents.fault_blame import failure_counts
from ..agents.output import Redactor
from ..agents.report import CAUSE_LABELS
from ..agents.results import write_atomically
from .aggregate import ReportData, Table, build
from .charts import pass_hat_curves, score_bars, score_histogram
from .trajectory import episode_section, text

NOT_AVAILABLE = "n/a"
ERROR_BARS = (
    "Bars: ±1 standard error over instances (a task and seed); none with a single instance."
)
SEEDS_SHOWN = 8
FAILURE_RULE = (
    "A failed ServiceBench episode is the faults' when a write answered 504 had been applied and "
    "was sent again without its idempotency_key (a double write), else when a call answered 503, "
    "429 or 504 never got a real answer from that endpoint afterwards; any other is the agent's."
)
STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#111827;background:#f9fafb}
main{max-width:1100px;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #d1d5db}
section.card{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:.5rem 1rem 1rem;margin:1rem 0}
section.card{overflow-x:auto}
table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}
th,td{border-bottom:1px solid #e5e7eb;padding:.25rem .5rem;text-align:left;vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.chart svg{max-width:100%;height:auto}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dl.facts dt{font-weight:600}
details.episode{background:#fff;border:1px solid #e5e7eb;border-radius:6px;margin:.35rem 0;padding:.3rem .6rem}
details.episode summary{cursor:pointer}
.badge{display:inline-block;border-radius:4px;padding:0 .4rem;font-size:.8rem;color:#fff}
.badge.ok{background:#15803d}.badge.ko{background:#b91c1c}
.error{color:#b91c1c}.hint{color:#4b5563}.tag{background:#fde68a;border-radius:4px;padding:0 .3rem}
code{font-size:.85em;word-break:break-word}.response code{color:#374151}
table.steps{width:100%}table.grading caption{text-align:left;font-weight:600}
"""


def _number(value: float | None) -> str:
    return NOT_AVAILABLE if value is None else f"{value:.3f}"


def _table(table: Table, max_k: int) -> str:
    ks = range(1, max_k + 1)
    split = any(row.split is not None for row in table.rows) and table.label != "Split"
    head = (
        f"<tr><th>{text(table.label)}</th>{'<th>Env</th>' if table.show_env else ''}"
        f"{'<th>Split</th>' if split else ''}"
        "<th class='num'>Instances</th>"
        "<th class='num'>Episodes</th><th class='num'>Mean score</th><th class='num'>± s.e.</th>"
        "<th class='num'>Success rate</th>"
        + "".join(f"<th class='num'>pass^{k}</th>" for k in ks)
        + "</tr>"
    )
    body = "".join(_row(row, ks, table.show_env, split) for row in table.rows)
    return f"<table class='scores'><thead>{head}</thead><tbody>{body}</tbody></table>"


def _row(row: Row, ks: range, show_env: bool, split: bool) -> str:
    cells = [
        _number(row.mean_score),
        _number(row.stderr),
        _number(row.success_rate),
        *(_number(row.pass_hat.get(k)) for k in ks),
    ]
    return (
        f"<tr><th>{text(row.label)}</th>{f'<td>{text(row.env)}</td>' if show_env else ''}"
        f"{f'<td>{text(row.split)}</td>' if split else ''}"
        f"<td class='num'>{row.instances}</td><td class='num'>{row.episodes}</td>"
        + "".join(f"<td class='num'>{cell}</td>" for cell in cells)
        + "</tr>"
    )


def seeds_label(seeds: Any) -> Any:
    """The run's seeds in a few words: a long list by its count and ends."""
    if seeds in (None, [None]):
        return "canonical tasks"
    if isinstance(seeds, list) and len(seeds) > SEEDS_SHOWN:
        return f"{len(seeds)} seeds, {seeds[0]} to {seeds[-1]}"
    return seeds


def _facts(document: Mapping[str, Any], data: ReportData) -> str:
    overall = data.evaluation.overall
    facts = {
        "Model": document.get("model", "?"),
        "Seeds": None if document.get("split") else seeds_label(document.get("seeds")),
        "Split": document.get("split"),
        "Repeats per instance": data.repeats,
        "Episodes": f"{overall.episodes} ({overall.successes} successful)",
        "Mean score (all)": f"{overall.mean_score:.3f} ± {_number(overall.stderr)}",
        "Wall time": f"{float(document.get('duration_s') or 0):.1f} s",
        "Stopped early": document.get("stopped_early"),
        "ServiceBench faults": document.get("faults"),
    }
    items = "".join(
        f"<dt>{name}</dt><dd>{text(value)}</dd>"
        for name, value in facts.items()
        if value is not None
    )
    return f"<dl class='facts'>{items}</dl>"


def _failures(episodes: Sequence[Mapping[str, Any]]) -> str:
    """The failed episodes by cause (recomputed from the records): the faults', or the agent's."""
    counts = failure_counts(episodes)
    if not sum(counts.values()):
        return ""
    rows = "".join(
        f"<tr><th>{text(CAUSE_LABELS.get(cause, cause))}</th><td class='num'>{count}</td></tr>"
        for cause, count in counts.items()
    )
    return (
        "<section class='card' id='failures'><h2>Failures by cause</h2>"
        "<table class='failures'><thead><tr><th>Cause</th><th class='num'>Episodes</th></tr>"
        f"</thead><tbody>{rows}</tbody></table><p class='hint'>{text(FAILURE_RULE)}</p></section>"
    )


def _chart(svg: str, caption: str) -> str:
    return (
        f"<figure class='chart'>{svg}<figcaption class='hint'>{text(caption)}</figcaption></figure>"
    )


def render_html(document: Mapping[str, Any]) -> str:
    """The report's HTML from a results document (ResultsError if it is not one)."""
    data = build(document)
    sections = []
    for number, table in enumerate(data.tables):
        chart = score_bars(table.rows, salt=f"scores-{number}") if table.rows else ""
        sections.append(
            f"<section class='card' id='table-{number}'><h2>{text(table.title)}</h2>"
            f"{_chart(chart, ERROR_BARS) if chart else ''}"
            f"{_table(table, data.repeats)}</section>"
        )
    curve_rows = (*data.evaluation.tasks, data.evaluation.overall)
    curves = pass_hat_curves(curve_rows, data.repeats, salt="pass-hat") if data.episodes else ""
    note = (
        "One try per instance: pass^1 only. Run with --repeats K for the curve up to k = K."
        if data.repeats == 1
        else f"pass^k = C(c, k) / C(n, k) per instance (n tries, c successes), k = 1..{data.repeats}."
    )
    by_env: dict[str, list[float]] = {}
    for episode in data.episodes:
        by_env.setdefault(str(episode["env"]), []).append(float(episode["score"]))
    histogram = score_histogram(by_env, salt="histogram")
    episodes = "".join(episode_section(i, e) for i, e in enumerate(data.episodes))
    title = f"Evaluation report: {document.get('model', 'results')}"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{text(title)}</title><style>{STYLE}</style></head>
<body><main>
<h1>{text(title)}</h1>
{_facts(document, data)}
{"".join(sections)}
{_failures(data.episodes)}
<section class='card' id='pass-hat'><h2>pass^k</h2>{_chart(curves, note) if curves else ""}</section>
<section class='card' id='distribution'><h2>Score distribution</h2>
{_chart(histogram, "Episode scores, 20 bins over [0, 1], stacked by environment.")}</section>
<section id='trajectories'><h2>Trajectories</h2>
<p class='hint'>Each episode folds out: its calls in order, each reward and its signals, and
ServiceBench's end-state check or each Support Queue ticket's grading.</p>
{episodes}</section>
</main></body></html>
"""


def write_html_report(path: str | Path, document: Mapping[str, Any], redactor: Redactor) -> Path:
    """Write the report of `document` to `path` (redacted, atomically)."""
    return write_atomically(str(path), redactor(render_html(redactor.data(document))))
