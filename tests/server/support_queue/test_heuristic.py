"""The baseline heuristic: its measured scores, and that it reads only the ticket."""

from __future__ import annotations

import ast
import inspect
import re

import pytest

from servicebench_support_queue.models import Ticket
from servicebench_support_queue.server.support_queue import heuristic
from servicebench_support_queue.server.support_queue.environment import SupportQueueEnvironment
from servicebench_support_queue.server.support_queue.heuristic import triage
from servicebench_support_queue.server.support_queue.scenarios import SITUATIONS
from servicebench_support_queue.server.support_queue.tasks import TASKS, CanonicalTicket
from servicebench_support_queue.server.tasks.seeds import HELD_OUT

# Measured with this policy (the seed publishes easy 1.00, medium 0.98, hard 0.97). Its
# summaries are the ticket's subject, a body sentence and its event lines pasted in order;
# where that is a near-verbatim excerpt, mostly the ticket's story rather than its facts in no
# order of its own, or mostly the ticket's lines held whole, the echo rule
# (server/support_queue/text/echo.py) gives it no coverage: on 6 of the 9 canonical tickets.
MEASURED = {
    "easy_inbox_cleanup": 0.85,
    "medium_sla_defense": 0.9,
    "hard_exec_escalations": 0.9175,
}
# Its mean over the first 200 held-out seeds of each task, measured (0.806365, 0.812563,
# 0.813615), floored to three decimals: a regression shows, an improvement is to be recorded.
HELD_OUT_FLOOR = {
    "easy_inbox_cleanup": 0.806,
    "medium_sla_defense": 0.812,
    "hard_exec_escalations": 0.813,
}
ECHOED = {"easy_inbox_cleanup": 2, "medium_sla_defense": 2, "hard_exec_escalations": 2}
HELD_OUT_SEEDS = range(HELD_OUT.start, HELD_OUT.start + 200)
ALL_TICKETS = [t for task in TASKS for t in task.tickets]


def run_episode(task_id: str) -> tuple[float, list[dict]]:
    env = SupportQueueEnvironment()
    obs = env.reset(task_id=task_id)
    feedback = []
    while not obs.done:
        obs = env.step(triage(obs))
        feedback.append(obs.last_feedback)
    return env.score, feedback


@pytest.mark.parametrize("task_id", sorted(MEASURED))
def test_scores_at_the_measured_level(task_id: str) -> None:
    score, feedback = run_episode(task_id)
    assert score == pytest.approx(MEASURED[task_id], abs=1e-6)
    for grade in feedback:
        assert grade["priority"]["correct"] and grade["queue"]["correct"]
        assert grade["disposition"]["correct"], grade["ticket_id"]
        assert grade["unsafe"]["hits"] == []
        assert grade["response"]["flags"] == []
        assert grade["summary"]["flags"] in ([], ["echoes_ticket"])
    assert sum(g["summary"]["flags"] == ["echoes_ticket"] for g in feedback) == ECHOED[task_id]


@pytest.mark.parametrize("task_id", sorted(HELD_OUT_FLOOR))
def test_held_out_mean_at_the_measured_level(task_id: str) -> None:
    env, scores = SupportQueueEnvironment(), []
    for seed in HELD_OUT_SEEDS:
        obs = env.reset(task_id=task_id, seed=seed)
        while not obs.done:
            obs = env.step(triage(obs))
        scores.append(env.score)
    mean = sum(scores) / len(scores)
    assert HELD_OUT_FLOOR[task_id] <= mean < HELD_OUT_FLOOR[task_id] + 0.002, mean


def test_policy_imports_nothing_of_the_server_or_the_data() -> None:
    tree = ast.parse(inspect.getsource(heuristic))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level:  # relative: from its package
            package = heuristic.__package__.split(".")
            imported.add(".".join([*package[: len(package) - node.level + 1], node.module or ""]))
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= {
        "__future__",
        "re",
        "collections",
        "dataclasses",
        "typing",
        "servicebench_support_queue.models",
    }
    source = inspect.getsource(heuristic)
    assert "support_tickets" not in source and "open(" not in source


def test_policy_source_has_no_ticket_ids_or_canonical_texts() -> None:
    source = re.sub(r"\s+", " ", inspect.getsource(heuristic)).lower()
    for ticket in ALL_TICKETS:
        assert ticket.ticket_id.lower() not in source
        words = re.sub(r"\s+", " ", ticket.body).lower().split()
        for start in range(len(words) - 5):
            assert " ".join(words[start : start + 6]) not in source, ticket.ticket_id


def test_policy_source_has_no_scenario_templates() -> None:
    """No six words in a row of any generated subject, body or event template."""
    source = re.sub(r"\s+", " ", inspect.getsource(heuristic)).lower()
    for situation in SITUATIONS.values():
        for template in (*situation.subjects, *situation.bodies, *situation.events):
            for piece in re.split(r"\{[^}]*\}", template.lower()):
                words = piece.split()
                for start in range(len(words) - 5):
                    assert " ".join(words[start : start + 6]) not in source, situation.key


def test_reads_only_the_ticket_in_any_observation_form() -> None:
    obs = SupportQueueEnvironment().reset(task_id="medium_sla_defense")
    ticket_only = {"ticket": obs.ticket.model_dump()}
    wrapped = {"observation": obs.model_dump(), "reward": 0.0, "done": False}
    assert triage(obs) == triage(ticket_only) == triage(wrapped)


def test_done_observation_is_refused() -> None:
    with pytest.raises(ValueError):
        triage({"ticket": None})


def changed(ticket: CanonicalTicket, **fields: object) -> dict:
    payload = ticket.public_ticket().model_dump()
    payload.update(fields)
    return {"ticket": Ticket(**payload).model_dump()}


def test_generalises_to_edited_tickets() -> None:
    by_id = {t.ticket_id: t for t in ALL_TICKETS}
    lockout = by_id["SQ-1001"]
    edited = changed(
        lockout,
        ticket_id="X-1",
        body=lockout.body.replace("Marta Okafor", "Jonas Berg"),
        customer_tier="enterprise",
        recent_events=[e.replace("30 minutes", "15 minutes") for e in lockout.recent_events],
    )
    action = triage(edited)
    assert (action.priority, action.queue, action.disposition) == ("P2", "security", "respond")
    assert "15 minutes" in action.response and action.response.startswith("Hi Jonas")

    webhooks = by_id["SQ-2002"]
    on_time = changed(webhooks, recent_events=[e for e in webhooks.recent_events if "SLA" not in e])
    action = triage(on_time)
    assert (action.priority, action.disposition) == ("P3", "respond")  # workaround, SLA kept
    assert "72 hours" in action.response

    billing = by_id["SQ-2003"]
    named = changed(billing, body=billing.body.replace("this month", "on INV-4410"))
    assert triage(named).disposition != "request_info"  # the invoice is named: nothing missing
