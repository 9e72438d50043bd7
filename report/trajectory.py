"""The trajectory viewer: one folding section per episode, its calls, rewards and outcome.

Native <details> elements: the viewer needs no script. Every value from the results file
is escaped (a ticket's reply or an API response is anyone's text, never markup).
ServiceBench steps show the call, its reward and reward signals, and the end-state check
of the last step (checks, intended changes, collateral damage); Support Queue steps show
the triage and the grading of the ticket it settled, component by component.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

LABELS = ("priority", "queue", "disposition")
TEXTS = ("summary", "response")
NO_OUTCOME = (
    "No end-state check recorded: the episode did not end in the environment "
    "(or the results file predates the check)."
)


def text(value: Any) -> str:
    return escape("" if value is None else str(value))


def compact(value: Any) -> str:
    return escape(json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": ")))


def _words(items: Iterable[Any]) -> str:
    listed = [text(item) for item in items or ()]
    return ", ".join(listed) if listed else "none"


def _call(action: Any) -> str:
    if isinstance(action, Mapping) and "endpoint" in action:
        params = action.get("params") or {}
        return (
            f"<code>{text(action.get('method'))} {text(action.get('endpoint'))}</code> "
            f"<code class='params'>{compact(params)}</code>"
        )
    if isinstance(action, Mapping) and "priority" in action:
        labels = " · ".join(text(action.get(key)) for key in LABELS)
        return f"<code>{labels}</code>"
    return "<em>no action</em>" if action is None else f"<code>{compact(action)}</code>"


def grading(feedback: Mapping[str, Any]) -> str:
    """A Support Queue ticket's grading: each component, what it earned of its weight."""
    rows = []
    for key in LABELS:
        part = feedback.get(key) or {}
        verdict = "right" if part.get("correct") else "wrong"
        rows.append(
            f"<tr><th>{key}</th><td>{text(part.get('chosen'))} ({verdict})</td>"
            f"<td class='num'>{float(part.get('earned', 0)):.3f} / "
            f"{float(part.get('weight', 0)):.2f}</td></tr>"
        )
    for key in TEXTS:
        part = feedback.get(key) or {}
        detail = (
            f"coverage {float(part.get('coverage', 0)):.2f}; matched {_words(part.get('matched'))}; "
            f"missing {_words(part.get('missing'))}; flags {_words(part.get('flags'))}; "
            f"{text(part.get('word_count'))} of {text(part.get('word_cap'))} words"
        )
        rows.append(
            f"<tr><th>{key}</th><td>{detail}</td><td class='num'>"
            f"{float(part.get('earned', 0)):.3f} / {float(part.get('weight', 0)):.2f}</td></tr>"
        )
    unsafe = feedback.get("unsafe") or {}
    hits = [f"{h.get('rule')}: “{h.get('excerpt')}”" for h in unsafe.get("hits") or ()]
    rows.append(
        f"<tr><th>unsafe</th><td>{_words(hits)}</td>"
        f"<td class='num'>−{float(unsafe.get('penalty', 0)):.3f}</td></tr>"
    )
    return (
        f"<table class='grading'><caption>Ticket {text(feedback.get('ticket_id'))}: reward "
        f"{float(feedback.get('reward', 0)):.3f}</caption>{''.join(rows)}</table>"
    )


def _changes(title: str, changes: Sequence[Mapping[str, Any]]) -> str:
    if not changes:
        return f"<p><strong>{title}</strong>: none</p>"
    items = "".join(
        f"<li><code>{text(c.get('table'))} {text(c.get('key'))}.{text(c.get('field'))}</code>: "
        f"<code>{compact(c.get('before'))}</code> → <code>{compact(c.get('after'))}</code></li>"
        for c in changes
    )
    return f"<p><strong>{title}</strong></p><ul>{items}</ul>"


def outcome(report: Mapping[str, Any]) -> str:
    """ServiceBench's end-state check: the world against the task's expected end state."""
    matches = "yes" if report.get("end_state_matches") else "no"
    checks = "".join(
        f"<li>{'✔ met' if check.get('met') else '✘ not met'}: <code>{text(check.get('name'))}"
        f"</code> of <code>{text(check.get('record'))}</code>, expected "
        f"<code>{compact(check.get('expected'))}</code>, actual "
        f"<code>{compact(check.get('actual'))}</code></li>"
        for check in report.get("checks") or ()
    )
    return (
        f"<div class='outcome'><p><strong>End state matches</strong>: {matches}</p>"
        f"<ul class='checks'>{checks}</ul>"
        f"{_changes('Intended changes', report.get('intended_changes') or [])}"
        f"{_changes('Collateral damage', report.get('collateral_damage') or [])}</div>"
    )


def _step(step: Mapping[str, Any]) -> str:
    observation = step.get("observation") or {}
    signals = _words(observation.get("reward_signals"))
    error = f"<div class='error'>{text(step['error'])}</div>" if step.get("error") else ""
    stand_in = " <span class='tag'>stand-in</span>" if step.get("stand_in") else ""
    details = ""
    if observation.get("api_response") is not None:
        details = f"<div class='response'><code>{text(observation['api_response'])}</code></div>"
    if isinstance(observation.get("last_feedback"), Mapping):
        details = grading(observation["last_feedback"])
    return (
        f"<tr><td class='num'>{text(step.get('step'))}</td><td>{_call(step.get('action'))}"
        f"{stand_in}{error}{details}</td><td class='num'>{float(step.get('reward') or 0):+.3f}</td>"
        f"<td>{signals if 'reward_signals' in observation else ''}</td></tr>"
    )


def episode_section(index: int, episode: Mapping[str, Any]) -> str:
    """One episode as a folded section: its summary line, then its steps and outcome."""
    trajectory = episode.get("trajectory") or []
    verdict = "success" if episode.get("success") else "no success"
    seed = "canonical" if episode.get("seed") is None else f"seed {episode['seed']}"
    extra = "".join(
        f" · {key} {text(episode[key])}" for key in ("split", "family") if episode.get(key)
    )
    final = (trajectory[-1].get("observation") or {}) if trajectory else {}
    end = outcome(final["outcome"]) if isinstance(final.get("outcome"), Mapping) else ""
    if episode.get("env") == "servicebench" and not end:
        end = f"<p class='hint'>{NO_OUTCOME}</p>"
    error = f"<p class='error'>{text(episode['error'])}</p>" if episode.get("error") else ""
    steps = "".join(_step(step) for step in trajectory)
    return (
        f"<details class='episode' id='episode-{index}' data-env='{text(episode.get('env'))}'>"
        f"<summary><span class='badge {'ok' if episode.get('success') else 'ko'}'>{verdict}</span> "
        f"<strong>{text(episode.get('task_id'))}</strong> · {text(episode.get('env'))} · {seed}"
        f" · try {int(episode.get('repeat') or 0) + 1}{extra} · score "
        f"<strong>{float(episode.get('score') or 0):.3f}</strong> in {len(trajectory)} steps"
        f"</summary>{error}<table class='steps'><thead><tr><th>#</th><th>Action</th>"
        f"<th>Reward</th><th>Signals</th></tr></thead><tbody>{steps}</tbody></table>{end}</details>"
    )
