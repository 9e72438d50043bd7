"""Whole Support Queue episodes through the environment class."""

from __future__ import annotations

import json

import pytest

from servicebench_support_queue.models import (
    DISPOSITIONS,
    PRIORITIES,
    QUEUES,
    SupportQueueAction,
    SupportQueueObservation,
    Ticket,
)
from servicebench_support_queue.server.lifecycle.episode import (
    EpisodeFinishedError,
    EpisodeNotStartedError,
    UnknownTaskError,
)
from servicebench_support_queue.server.support_queue.environment import (
    WITHHELD,
    SupportQueueEnvironment,
)
from servicebench_support_queue.server.support_queue.grader import SCORING_WEIGHTS, grade
from servicebench_support_queue.server.support_queue.proof import gold_action
from servicebench_support_queue.server.support_queue.tasks import (
    TASKS,
    CanonicalTicket,
    SupportTask,
    get_task,
)

variant_for = (
    SupportQueueEnvironment.variant_for
)  # the canonical task, or the seed's proven variant

TASK_IDS = ["easy_inbox_cleanup", "medium_sla_defense", "hard_exec_escalations"]


def flawed(ticket: CanonicalTicket, index: int) -> SupportQueueAction:
    """A different partly wrong action per ticket, so rewards differ across the episode."""
    return SupportQueueAction(
        priority=PRIORITIES[index % 4],
        queue=ticket.gold.queue,
        disposition=DISPOSITIONS[(index + 1) % 4],
        summary=ticket.gold_summary if index % 2 else "",
        response="Thanks, we are looking into it.",
    )


def test_tasks_are_the_seeds_with_one_step_per_ticket() -> None:
    assert [t.card.id for t in TASKS] == TASK_IDS
    assert [len(t.tickets) for t in TASKS] == [2, 3, 4]
    assert [t.card.difficulty for t in TASKS] == ["easy", "medium", "hard"]
    for task in TASKS:
        assert task.card.env == "support_queue" and task.card.max_steps == len(task.tickets)
    assert SupportQueueEnvironment.tasks == tuple(t.card for t in TASKS)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reset_observation_has_every_seed_field(task_id: str) -> None:
    task = get_task(task_id)
    obs = SupportQueueEnvironment().reset(task_id=task_id)
    assert isinstance(obs, SupportQueueObservation)
    assert (obs.task_id, obs.task_title, obs.difficulty) == (
        task_id,
        task.card.title,
        task.card.difficulty,
    )
    assert "P1:" in obs.instructions and "trust_safety:" in obs.instructions
    assert (obs.current_index, obs.total_tickets) == (0, len(task.tickets))
    assert obs.ticket == task.tickets[0].public_ticket()
    assert obs.allowed_priorities == list(PRIORITIES)
    assert obs.allowed_queues == list(QUEUES)
    assert obs.allowed_dispositions == list(DISPOSITIONS)
    assert obs.scoring_weights == dict(SCORING_WEIGHTS)
    assert obs.last_feedback is None and obs.reward == 0.0 and obs.cumulative_reward == 0.0
    assert obs.done is False and obs.info["episode_id"]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.card.id)
def test_observations_never_carry_gold_data(task: SupportTask) -> None:
    env = SupportQueueEnvironment()
    obs = env.reset(task_id=task.card.id)
    for ticket in task.tickets:
        assert set(obs.ticket.model_dump()) == set(Ticket.model_fields)
        wire = obs.model_dump_json()
        for secret in (ticket.gold_summary, ticket.gold_response, ticket.gold.rationale):
            assert secret not in wire
        obs = env.step(gold_action(ticket))
        assert "rationale" not in json.dumps(obs.last_feedback)


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.card.id)
def test_gold_episode_scores_one(task: SupportTask) -> None:
    env = SupportQueueEnvironment()
    obs = env.reset(task_id=task.card.id)
    for i, ticket in enumerate(task.tickets):
        assert obs.ticket.ticket_id == ticket.ticket_id and obs.current_index == i
        obs = env.step(gold_action(ticket))
        assert obs.reward == 1.0 and obs.cumulative_reward == pytest.approx(i + 1)
        assert obs.last_feedback["ticket_id"] == ticket.ticket_id
    assert obs.done and obs.ticket is None and obs.current_index == obs.total_tickets
    assert env.score == 1.0 and env.state.average_reward == 1.0


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.card.id)
def test_score_is_the_mean_and_cumulative_the_sum(task: SupportTask) -> None:
    env = SupportQueueEnvironment()
    env.reset(task_id=task.card.id)
    rewards = []
    for i, ticket in enumerate(task.tickets):
        action = flawed(ticket, i)
        expected = grade(ticket, action).reward
        obs = env.step(action)
        rewards.append(expected)
        assert obs.reward == expected
        assert obs.cumulative_reward == pytest.approx(sum(rewards))
        assert env.score == pytest.approx(sum(rewards) / len(rewards))
        assert obs.info["average_reward"] == env.score
    assert len(set(rewards)) > 1 and 0.0 <= env.score <= 1.0
    state = env.state
    assert state.cumulative_reward == pytest.approx(sum(rewards))
    assert state.average_reward == pytest.approx(sum(rewards) / len(task.tickets))


def test_state_has_cursor_and_full_histories() -> None:
    task = variant_for("medium_sla_defense", 7).task  # a generated variant
    env = SupportQueueEnvironment()
    env.reset(task_id=task.card.id, seed=7)
    first, second = task.tickets[0], task.tickets[1]
    env.step(gold_action(first))
    obs = env.step(flawed(second, 1))
    state = env.state
    assert state.env == "support_queue" and state.task == task.card and state.seed == 7
    assert (state.current_index, state.total_tickets, state.step_count) == (2, 3, 2)
    assert state.done is False and state.episode_id == obs.info["episode_id"]
    assert state.processed_ticket_ids == [first.ticket_id, second.ticket_id]
    assert [a["ticket_id"] for a in state.action_history] == state.processed_ticket_ids
    assert state.action_history[1]["step"] == 2
    assert state.action_history[1]["summary"] == flawed(second, 1).summary
    assert state.grading_history[1] == obs.last_feedback
    assert state.grading_history[0]["reward"] == 1.0


def test_step_after_done_raises_and_changes_nothing() -> None:
    env = SupportQueueEnvironment()
    env.reset(task_id="easy_inbox_cleanup")
    for ticket in get_task("easy_inbox_cleanup").tickets:
        env.step(gold_action(ticket))
    before = env.state
    with pytest.raises(EpisodeFinishedError):
        env.step(gold_action(ticket))
    assert env.state == before


def test_step_before_reset_and_unknown_task_raise() -> None:
    env = SupportQueueEnvironment()
    with pytest.raises(EpisodeNotStartedError):
        env.step(SupportQueueAction(priority="P1", queue="billing", disposition="close"))
    with pytest.raises(UnknownTaskError):
        env.reset(task_id="no_such_task")


def test_reset_starts_afresh() -> None:
    env = SupportQueueEnvironment()
    env.reset(task_id="hard_exec_escalations")
    env.step(gold_action(get_task("hard_exec_escalations").tickets[0]))
    obs = env.reset(task_id="easy_inbox_cleanup")
    state = env.state
    assert obs.current_index == 0 and obs.cumulative_reward == 0.0
    assert state.processed_ticket_ids == [] and state.action_history == []
    assert state.grading_history == [] and env.score == 0.0


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.card.id)
def test_same_task_and_seed_give_the_same_episode(task: SupportTask) -> None:
    def run(seed: int | None) -> list[dict]:
        env = SupportQueueEnvironment()
        trace = [env.reset(task_id=task.card.id, seed=seed, episode_id="fixed").model_dump()]
        for i, ticket in enumerate(variant_for(task.card.id, seed).task.tickets):
            trace.append(env.step(flawed(ticket, i)).model_dump())
        trace.append(env.state.model_dump())
        return trace

    assert run(3) == run(3)
    assert run(3)[0]["ticket"] != run(4)[0]["ticket"]  # another seed, another variant
    assert run(None)[:-1] == run(0)[:-1]  # the canonical seed is the canonical task
    assert run(0)[0]["ticket"] == task.tickets[0].public_ticket().model_dump()


def test_episodes_share_the_immutable_tickets() -> None:
    a, b = SupportQueueEnvironment(), SupportQueueEnvironment()
    obs_a = a.reset(task_id="medium_sla_defense")
    b.reset(task_id="medium_sla_defense")
    assert a._task is b._task is get_task("medium_sla_defense")
    obs_a.ticket.subject = "changed by a caller"
    obs_a.ticket.recent_events.append("injected")
    again = b.reset(task_id="medium_sla_defense")
    assert again.ticket == get_task("medium_sla_defense").tickets[0].public_ticket()


# ------------------------------------------------------------------ no fact of a ticket to come


def fact_names(ticket: CanonicalTicket) -> set[str]:
    return {fact[0] for fact in ticket.summary_facts + ticket.response_facts}


def named(feedback: dict, key: str) -> list[str]:
    return feedback["summary"][key] + feedback["response"][key]


def test_a_fact_shared_with_a_ticket_to_come_is_withheld_until_that_one_is_graded() -> None:
    """Seed 19's first ticket shares facts ("sla breached") with a later one: its grade
    would tell the agent what to write there."""
    task = variant_for("medium_sla_defense", 19).task
    first, *rest = task.tickets
    shared = {name for name in fact_names(first) if any(name in fact_names(t) for t in rest)}
    assert shared, "the seed no longer has a shared fact: pick another"
    env = SupportQueueEnvironment()
    env.reset(task_id=task.card.id, seed=19)
    feedback = env.step(gold_action(first)).last_feedback
    matched = named(feedback, "matched")
    assert WITHHELD in matched and shared.isdisjoint(matched)
    assert feedback["reward"] == 1.0 and feedback["summary"]["coverage"] == 1.0  # grading unchanged
    assert env.state.grading_history[0] == feedback
    assert not shared & set(json.dumps(env.state.model_dump()).split('"'))
    for ticket in rest:
        last = env.step(gold_action(ticket))
    assert last.done and shared <= set(named(env.state.grading_history[0], "matched"))
    assert WITHHELD not in json.dumps(env.state.model_dump())


def test_the_facts_of_tickets_to_come_a_text_mentions_are_withheld() -> None:
    """A text that names other tickets' facts is told which are off topic, never which ones
    belong to a ticket still to come."""
    task = get_task("easy_inbox_cleanup")
    first, second = task.tickets
    probe = ". ".join(sorted(fact_names(second) - fact_names(first)))
    env = SupportQueueEnvironment()
    env.reset(task_id=task.card.id)
    action = gold_action(first).model_copy(update={"summary": probe, "response": probe})
    feedback = env.step(action).last_feedback
    off_topic = named(feedback, "off_topic")
    assert off_topic and set(off_topic) == {WITHHELD}
    assert grade(first, action).summary.off_topic  # the grader saw them
    env.step(gold_action(second))
    after = named(env.state.grading_history[0], "off_topic")
    assert len(after) == len(off_topic) and set(after) <= fact_names(second)
