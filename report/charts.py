"""The report's charts, drawn by matplotlib (Agg, no display) and returned as inline SVG text.

Inline SVG keeps the report one file that opens offline. The text stays text (`svg.fonttype`
none: the viewer's sans-serif draws it, and it can be searched and copied), and the
element ids are salted per chart and dated nowhere, so the same results give the same bytes
and two charts of one page never share an id.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")  # before pyplot: never a GUI backend, whatever the environment says

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from ..agents.evaluation import Row  # noqa: E402

WIDTH_IN = 7.5
BAR_HEIGHT_IN = 0.32
COLOURS = {"servicebench": "#2563eb", "support_queue": "#d97706", "all": "#111827"}
OTHER_COLOUR = "#6b7280"
HISTOGRAM_BINS = 20
METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
"""matplotlib's RDF block (creator, links to vocabularies): nothing a reader sees."""


def _svg(figure: Figure, salt: str) -> str:
    """`figure` as an <svg> element (no XML prolog), then closed."""
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    text = buffer.getvalue()
    return METADATA.sub("", text[text.index("<svg") :]).strip()


def _colour(env: str) -> str:
    return COLOURS.get(env, OTHER_COLOUR)


def score_bars(rows: Sequence[Row], salt: str) -> str:
    """Mean score per row, with ±1 standard error bars where the error is defined."""
    height = max(1.6, 0.6 + BAR_HEIGHT_IN * len(rows))
    figure, axes = plt.subplots(figsize=(WIDTH_IN, height))
    positions = list(range(len(rows)))[::-1]  # the first row on top
    errors = [row.stderr or 0.0 for row in rows]
    axes.barh(
        positions,
        [row.mean_score for row in rows],
        xerr=errors,
        color=[_colour(row.env) for row in rows],
        error_kw={"ecolor": "#111827", "capsize": 3, "elinewidth": 1},
        height=0.6,
    )
    axes.set_yticks(positions, [row.label for row in rows])
    axes.set_xlim(0, 1.05)
    axes.set_xlabel("mean score")
    for position, row in zip(positions, rows, strict=True):
        axes.text(
            min(row.mean_score + (row.stderr or 0.0), 1.0) + 0.01,
            position,
            f"{row.mean_score:.3f}",
            va="center",
            fontsize=8,
        )
    axes.grid(axis="x", alpha=0.3)
    axes.set_axisbelow(True)
    return _svg(figure, salt)


def pass_hat_curves(rows: Sequence[Row], max_k: int, salt: str) -> str:
    """pass^k against k, one line per row (the `all` row drawn thicker)."""
    figure, axes = plt.subplots(figsize=(WIDTH_IN - 1.5, 3.6))  # the legend takes the rest
    ks = list(range(1, max_k + 1))
    for row in rows:
        points = [(k, row.pass_hat.get(k)) for k in ks]
        xs = [k for k, v in points if v is not None]
        ys = [v for _, v in points if v is not None]
        overall = row.env == "all"
        axes.plot(
            xs,
            ys,
            marker="o",
            linewidth=2.5 if overall else 1.2,
            color=_colour(row.env) if overall else None,
            label=row.label,
        )
    axes.set_xticks(ks)
    axes.set_xlim(0.5, max_k + 0.5)
    axes.set_ylim(-0.02, 1.02)
    axes.set_xlabel("k (tries of one instance that must all succeed)")
    axes.set_ylabel("pass^k")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return _svg(figure, salt)


def score_histogram(scores_by_env: dict[str, list[float]], salt: str) -> str:
    """Episode scores in [0, 1], stacked by environment."""
    figure, axes = plt.subplots(figsize=(WIDTH_IN, 3.0))
    envs = list(scores_by_env)
    axes.hist(
        [scores_by_env[env] for env in envs],
        bins=HISTOGRAM_BINS,
        range=(0.0, 1.0),
        stacked=True,
        color=[_colour(env) for env in envs],
        label=envs,
        edgecolor="white",
    )
    axes.set_xlim(0, 1)
    axes.set_xlabel("episode score")
    axes.set_ylabel("episodes")
    axes.yaxis.get_major_locator().set_params(integer=True)
    if envs:
        axes.legend(fontsize=8, loc="upper left")
    axes.grid(axis="y", alpha=0.3)
    return _svg(figure, salt)
