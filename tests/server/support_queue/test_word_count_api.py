"""server/support_queue/word_count_api.py: POST /support_queue/word_count answers the grader's own word
count and cap of a summary and a reply, on tricky text, at the root and under the prefix;
bad input is a 4xx naming the problem."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from servicebench_support_queue.models import TEXT_FIELD_MAX_CHARS
from servicebench_support_queue.server.app import create_app
from servicebench_support_queue.server.settings import Settings
from servicebench_support_queue.server.support_queue.proof import gold_action
from servicebench_support_queue.server.support_queue.tasks import TASKS
from servicebench_support_queue.server.support_queue.text import facts_for, grade_texts

ROUTES = ("/support_queue/word_count", "/support_queue/support_queue/word_count")
TICKET = TASKS[0].tickets[0]
TRICKY = {
    # text: the grader's count, worked out by hand from the word rule of text/canonical.py
    "Please sign-in again": 4,  # hyphens split words
    "Send an e-mail": 4,
    "See https://status.example.com/incidents/42?x=1 now": 10,  # a URL is its pieces
    "Write to j.kim@fernway.example": 6,
    "All 4,000 seats": 4,  # "4", "000"
    "Your p\u0430ssw\u043erd": 2,  # Cyrillic look-alikes: one Latin word
    "Your pass\u200bword and\u00adsoft": 3,  # zero-width space and soft hyphen removed
    "Never share your p a s s w o r d": 4,  # spaced-out letters joined
    "a b r e a c h occurred": 3,  # "a breach"
    "\uff21\uff30\uff29 key": 2,  # fullwidth letters (NFKC)
    "INV-20417 at 13:58": 5,
    "caf\u00e9 stra\u00dfe \u043f\u0440\u0438\u0432\u0435\u0442": 3,
    "": 0,
    " \n\t ": 0,
}


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app(Settings()))


def counted(client: TestClient, route: str, body: object) -> dict:
    answer = client.post(route, json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("text", TRICKY)
def test_the_count_is_the_graders_on_tricky_text(client: TestClient, route: str, text: str) -> None:
    graded = grade_texts(text, text, facts_for(TICKET))
    answer = counted(client, route, {"summary": text, "response": text})
    assert answer == {
        "summary": {"words": graded.summary.word_count, "cap": graded.summary.word_cap},
        "response": {"words": graded.response.word_count, "cap": graded.response.word_cap},
    }
    assert answer["summary"]["words"] == TRICKY[text]
    assert (answer["summary"]["cap"], answer["response"]["cap"]) == (60, 150)


def test_one_text_alone_is_counted_alone(client: TestClient) -> None:
    assert counted(client, ROUTES[0], {"response": "sign-in"}) == {
        "response": {"words": 2, "cap": 150}
    }
    assert counted(client, ROUTES[0], {}) == {}


def test_the_count_agrees_with_a_graded_step_over_the_cap(client: TestClient) -> None:
    """Played through /step: the grader's feedback shows the same count, and the cap flag."""
    summary = " ".join(["p a s s w o r d", "sign-in", "pass\u200bword"] * 15)
    counts = counted(client, ROUTES[0], {"summary": summary})["summary"]
    assert counts == {"words": 60, "cap": 60}
    over = summary + " e-mail"
    assert counted(client, ROUTES[0], {"summary": over})["summary"] == {"words": 62, "cap": 60}
    reset = client.post("/reset", json={"task_id": TASKS[0].card.id}).json()
    action = {**gold_action(TICKET).model_dump(), "summary": over}
    step = client.post("/step", json={"episode_id": reset["episode_id"], "action": action})
    feedback = step.json()["observation"]["last_feedback"]["summary"]
    assert (feedback["word_count"], feedback["word_cap"]) == (62, 60)
    assert "over_word_cap" in feedback["flags"]


@pytest.mark.parametrize(
    ("body", "status", "named"),
    [
        ({"summary": 3}, 422, "summary"),
        ({"response": None}, 422, "response"),
        ({"summary": "x" * (TEXT_FIELD_MAX_CHARS + 1)}, 422, "summary"),
        ({"reply": "x"}, 422, "reply"),
        (["x"], 422, "JSON object"),
        ("x", 422, "JSON object"),
    ],
)
def test_bad_input_is_a_4xx_naming_the_problem(
    client: TestClient, body: object, status: int, named: str
) -> None:
    for route in ROUTES:
        answer = client.post(route, json=body)
        assert answer.status_code == status, answer.text
        assert named in answer.json().get("detail", "")


def test_json_is_required(client: TestClient) -> None:
    for route in ROUTES:
        plain = client.post(
            route, content=b'{"summary": "x"}', headers={"content-type": "text/plain"}
        )
        assert plain.status_code == 415 and "Content-Type" in plain.json()["detail"]
        broken = client.post(route, content=b"{", headers={"content-type": "application/json"})
        assert broken.status_code == 400 and "malformed JSON" in broken.json()["detail"]


def test_only_support_queue_scopes_serve_it(client: TestClient) -> None:
    for route in ("/word_count", "/servicebench/support_queue/word_count"):
        assert client.post(route, json={"summary": "x"}).status_code == 404
