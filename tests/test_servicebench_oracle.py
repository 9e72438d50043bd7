"""The deterministic oracle policy: optimal on the three tasks, derived from responses."""

from __future__ import annotations

import pytest

from mock_services import ServiceState
from models import ServiceBenchAction, ServiceBenchObservation
from policies.servicebench_oracle import next_action
from server.servicebench_environment import ServiceBenchEnvironment, api_response
from server.servicebench_tasks import TASK_SPECS

OPTIMAL_CALLS = {"order_status_lookup": 2, "return_and_refund": 5, "billing_discrepancy": 4}


def run_episode(task_id: str, as_json: bool = False) -> tuple[ServiceBenchEnvironment, list]:
    env = ServiceBenchEnvironment()
    history: list = [env.reset(task_id=task_id)]
    while (action := next_action([o.model_dump() for o in history] if as_json else history)) is not None:
        history.append(env.step(action))
        assert len(history) <= 20, "the oracle must terminate"
    return env, history


@pytest.mark.parametrize("task_id", list(OPTIMAL_CALLS))
@pytest.mark.parametrize("as_json", [False, True])
def test_oracle_scores_one_with_the_optimal_number_of_calls(task_id, as_json):
    env, history = run_episode(task_id, as_json)
    assert env.score == 1.0 and history[-1].task_completed and history[-1].done
    assert len(history) - 1 == OPTIMAL_CALLS[task_id]
    assert all(observation.success for observation in history)
    assert not any("duplicate_call" in record.signals or "irrelevant_endpoint" in record.signals
                   for record in env.state.call_history)


def test_oracle_is_deterministic():
    runs = [[o.model_dump(exclude={"info"}) for o in run_episode(task)[1]]
            for task in OPTIMAL_CALLS for _ in range(2)]
    assert runs[0] == runs[1] and runs[2] == runs[3] and runs[4] == runs[5]


def drive(task_id: str, description: str) -> list[ServiceBenchAction]:
    """Let the oracle act on fresh services for a task of its kind with another prompt."""
    services = ServiceState()
    history = [ServiceBenchObservation(task_id=task_id, task_description=description)]
    actions: list[ServiceBenchAction] = []
    while (action := next_action(history)) is not None and len(actions) < 10:
        status, body = services.dispatch(action.service, action.endpoint, action.method, action.params)
        history.append(ServiceBenchObservation(task_id=task_id, task_description=description,
                                               api_response=api_response(status, body),
                                               success=status < 400))
        actions.append(action)
    return actions


def test_oracle_reads_identifiers_and_amounts_instead_of_knowing_them():
    prompt = TASK_SPECS["return_and_refund"].card.description
    other = prompt.replace("jane.doe@example.com", "jane.doerr@example.com").replace("ORD-1005", "ORD-1016")
    actions = drive("return_and_refund", other)
    assert [a.endpoint for a in actions] == ["/users/lookup", "/orders/lookup", "/inventory/lookup",
                                             "/orders/process-refund", "/orders/update-status"]
    assert actions[0].params == {"email": "jane.doerr@example.com"}
    assert actions[3].params["order_id"] == "ORD-1016" and actions[3].params["amount"] == 49.99


def test_oracle_stops_when_the_order_is_not_the_customers_or_not_eligible():
    prompt = TASK_SPECS["return_and_refund"].card.description
    assert len(drive("return_and_refund", prompt.replace("ORD-1005", "ORD-1006"))) == 2
    not_eligible = prompt.replace("ORD-1005", "ORD-1001").replace("SKU-445", "SKU-101")
    assert len(drive("return_and_refund", not_eligible)) == 2


def test_oracle_does_not_refund_a_correctly_billed_order():
    prompt = TASK_SPECS["billing_discrepancy"].card.description
    correct = prompt.replace("USR-003", "USR-008").replace("ORD-1009", "ORD-1022")
    actions = drive("billing_discrepancy", correct)
    assert [a.endpoint for a in actions] == ["/users/lookup", "/orders/lookup",
                                             "/inventory/lookup", "/inventory/lookup"]
    assert [a.params["sku"] for a in actions[2:]] == ["SKU-560", "SKU-512"]


def test_oracle_stops_after_an_error():
    history = [ServiceBenchObservation(task_id="order_status_lookup", task_description="x@y.com ORD-1")]
    history.append(ServiceBenchObservation(task_id="order_status_lookup", success=False,
                                           api_response={"status_code": 404, "error": "no user"}))
    assert next_action(history) is None
    assert next_action([]) is None


def test_oracle_accepts_partial_json_observations():
    """Agents may relay only the task and the api_response of each result."""
    env, history = run_episode("billing_discrepancy")
    relayed = [{"task_id": history[0].task_id, "task_description": history[0].task_description}]
    relayed += [{"api_response": o.api_response} for o in history[1:-1]]
    assert next_action(relayed) == next_action(history[:-1])
    assert next_action(relayed).endpoint == "/orders/process-refund"
