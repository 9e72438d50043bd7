"""client.py against the live server: the HTTP session clients and the OpenEnv WebSocket clients."""

from __future__ import annotations

import asyncio
import re
import socket

import httpx
import pytest

from servicebench_support_queue.client import (
    AsyncEnvHttpClient,
    EnvConnectionError,
    EnvHttpClient,
    EnvServerError,
    EpisodeDoneError,
    InvalidActionError,
    NoEpisodeError,
    NotFoundError,
    ServiceBenchEnv,
    SupportQueueEnv,
    parse_observation,
    raise_for_response,
)
from servicebench_support_queue.models import (
    ServiceBenchAction,
    ServiceBenchObservation,
    ServiceBenchState,
    SupportQueueObservation,
    SupportQueueState,
)
from servicebench_support_queue.server.servicebench.oracle import next_action
from servicebench_support_queue.server.support_queue.heuristic import triage

EXPECTED_TASKS = {
    "order_status_lookup": "servicebench",
    "return_and_refund": "servicebench",
    "billing_discrepancy": "servicebench",
    "damage_claim": "servicebench",
    "exchange_request": "servicebench",
    "cancel_request": "servicebench",
    "address_change": "servicebench",
    "duplicate_charge": "servicebench",
    "price_adjustment": "servicebench",
    "easy_inbox_cleanup": "support_queue",
    "medium_sla_defense": "support_queue",
    "hard_exec_escalations": "support_queue",
}


def email_in(text: str) -> str:
    match = re.search(r"[\w.+-]+@[\w-]+\.[\w.]+\w", text)
    assert match, f"no email in {text!r}"
    return match.group(0)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_tasks_and_health(live_server: str) -> None:
    with EnvHttpClient(live_server) as client:
        assert client.health() == {"status": "healthy"}
        cards = client.tasks()
    assert {card.id: card.env for card in cards} == EXPECTED_TASKS
    assert all(card.max_steps > 0 and card.title for card in cards)


def test_servicebench_session_carries_the_episode(live_server: str) -> None:
    with EnvHttpClient(live_server) as client:
        first = client.reset(env="servicebench", task_id="order_status_lookup")
        assert isinstance(first.observation, ServiceBenchObservation)
        assert first.done is False and not first.reward  # nothing earned yet (null or 0)
        assert first.episode_id and client.episode_id == first.episode_id
        assert first.observation.available_endpoints, "the catalogue comes with every observation"

        email = email_in(first.observation.task_description)
        action = ServiceBenchAction(
            service="user", endpoint="/users/lookup", params={"email": email}
        )
        second = client.step(action)
        assert second.episode_id == first.episode_id
        assert second.observation.success is True
        assert second.reward is not None and second.reward > 0
        assert second.observation.cumulative_reward == pytest.approx(second.reward)

        state = client.state()
        assert isinstance(state, ServiceBenchState)
        assert state.step_count == 1 and state.episode_id == first.episode_id
        assert [c.endpoint for c in state.call_history] == ["/users/lookup"]


def test_env_is_inferred_from_the_task_and_episodes_stay_apart(live_server: str) -> None:
    with EnvHttpClient(live_server) as queue, EnvHttpClient(live_server) as bench:
        started = queue.reset(task_id="easy_inbox_cleanup")
        bench.reset(task_id=1)
        assert queue.env == "support_queue" and bench.env == "servicebench"
        assert isinstance(started.observation, SupportQueueObservation)
        assert started.observation.ticket is not None
        stepped = queue.step(triage(started.observation))
        assert stepped.observation.current_index == 1
        assert isinstance(queue.state(), SupportQueueState)
        assert bench.state().step_count == 0, "the other episode did not move"


def test_server_errors_carry_the_server_message(live_server: str) -> None:
    with EnvHttpClient(live_server) as client:
        with pytest.raises(NoEpisodeError):
            client.step({"service": "user", "endpoint": "/users/list"})
        with pytest.raises(NotFoundError, match="no_such_task") as not_found:
            client.reset(task_id="no_such_task")
        assert not_found.value.status_code == 404

        client.reset(env="support_queue", task_id="easy_inbox_cleanup")
        with pytest.raises(InvalidActionError) as invalid:
            client.step({"priority": "P9", "queue": "billing", "disposition": "respond"})
        assert invalid.value.status_code == 422 and invalid.value.errors
        assert "priority" in invalid.value.detail

        result = client.reset(env="support_queue", task_id="easy_inbox_cleanup")
        actions = []
        while not result.done:
            actions.append(triage(result.observation))
            result = client.step(actions[-1])
        with pytest.raises(EpisodeDoneError) as done:
            client.step(actions[-1])
        assert done.value.status_code == 409 and done.value.detail

        client.episode_id = "not-a-real-episode"
        with pytest.raises(NotFoundError):
            client.state()


def test_unreachable_server_is_a_connection_error() -> None:
    with (
        EnvHttpClient(f"http://127.0.0.1:{closed_port()}", timeout_s=2.0) as client,
        pytest.raises(EnvConnectionError, match="unreachable"),
    ):
        client.tasks()


def test_non_json_error_body_still_names_the_status() -> None:
    response = httpx.Response(
        502, text="upstream down", request=httpx.Request("GET", "http://x/tasks")
    )
    with pytest.raises(EnvServerError, match="HTTP 502: upstream down") as error:
        raise_for_response(response)
    assert error.value.status_code == 502 and error.value.errors == []


def test_unknown_observation_fields_are_ignored() -> None:
    observation = parse_observation(
        ServiceBenchObservation, {"task_description": "t", "added_by_a_newer_server": 1}, 0.5, True
    )
    assert observation.task_description == "t" and observation.reward == 0.5 and observation.done


def test_async_client_plays_concurrent_episodes(live_server: str) -> None:
    async def play(task_id: str) -> tuple[str, float, int]:
        async with AsyncEnvHttpClient(live_server) as client:
            result = await client.reset(task_id=task_id)
            steps = 0
            while not result.done:
                result = await client.step(triage(result.observation))
                steps += 1
            state = await client.state()
            assert isinstance(state, SupportQueueState)
            assert state.step_count == steps and state.total_tickets == steps
            return result.episode_id, state.average_reward, steps

    async def both() -> list[tuple[str, float, int]]:
        return await asyncio.gather(play("easy_inbox_cleanup"), play("medium_sla_defense"))

    (first_id, first_score, first_steps), (second_id, second_score, second_steps) = asyncio.run(
        both()
    )
    assert first_id != second_id
    assert 0.0 <= first_score <= 1.0 and 0.0 <= second_score <= 1.0
    assert first_steps != second_steps, "each episode kept its own task"


@pytest.mark.parametrize(
    "task_id", ["order_status_lookup", "return_and_refund", "billing_discrepancy"]
)
def test_servicebench_env_plays_an_episode_over_the_websocket(
    live_server: str, task_id: str
) -> None:
    with ServiceBenchEnv(base_url=live_server).sync() as env:
        result = env.reset(task_id=task_id)
        assert isinstance(result.observation, ServiceBenchObservation)
        history, total = [result.observation], 0.0
        while not result.done:
            result = env.step(next_action(history))
            history.append(result.observation)
            total += result.reward or 0.0
        state = env.state()
    assert isinstance(state, ServiceBenchState)
    assert result.observation.task_completed and state.task_completed
    assert state.cumulative_reward == pytest.approx(1.0) and total == pytest.approx(1.0)


def test_support_queue_env_plays_an_episode_over_the_websocket(live_server: str) -> None:
    with SupportQueueEnv(base_url=live_server + "/support_queue").sync() as env:
        result = env.reset(task_id="medium_sla_defense")
        rewards = []
        while not result.done:
            assert isinstance(result.observation, SupportQueueObservation)
            result = env.step(triage(result.observation))
            rewards.append(result.reward)
        state = env.state()
    assert isinstance(state, SupportQueueState)
    assert len(rewards) == state.total_tickets == len(state.processed_ticket_ids)
    assert all(0.0 <= r <= 1.0 for r in rewards)
    assert state.average_reward == pytest.approx(sum(rewards) / len(rewards))


def test_both_clients_reset_with_faults_and_read_them_typed(live_server: str) -> None:
    """`faults` on the HTTP client's reset and the OpenEnv client's: the oracle plays through
    them to 1.0, and the state's faults list is typed (a timeout's fate shown once done)."""
    with EnvHttpClient(live_server) as client:
        result = client.reset(task_id="cancel_request", seed=2, faults="heavy")
        history = [result.observation]
        while not result.done:
            result = client.step(next_action(history))
            history.append(result.observation)
        state = client.state()
    assert isinstance(state, ServiceBenchState) and state.fault_level == "heavy"
    assert state.faults and state.cumulative_reward == 1.0
    assert result.observation.info["faults"]["injected"] == len(state.faults)
    with ServiceBenchEnv(base_url=live_server).sync() as env:
        same = env.reset(task_id="cancel_request", seed=2, faults="heavy")
        assert same.observation.info["faults_injected"] == 0
        assert env.state().fault_level == "heavy"
