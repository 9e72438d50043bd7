"""mock_services/users.py: UserService's lookups, pagination and updates, and their errors."""

from __future__ import annotations

import pytest
from mock_services_support import call

from servicebench_support_queue.mock_services import BASE, ServiceState


@pytest.fixture
def state() -> ServiceState:
    return ServiceState()


def test_users_lookup_by_email_or_id(state):
    code, user = call(state, "user", "/users/lookup", email="Jane.Doe@Example.com")
    assert code == 200 and user["user_id"] == "USR-001" and user["name"] == "Jane Doe"
    assert (
        call(state, "user", "/users/lookup", user_id="USR-003")[1]["email"]
        == "priya.raman@example.com"
    )
    both = call(state, "user", "/users/lookup", user_id="USR-001", email="jane.doe@example.com")
    assert both == (200, user)


@pytest.mark.parametrize(
    "params, status",
    [
        ({}, 400),
        ({"email": "nobody@example.com"}, 404),
        ({"user_id": "USR-999"}, 404),
        ({"user_id": "USR-002", "email": "jane.doe@example.com"}, 404),
        ({"user_id": 1}, 400),
        ({"email": ""}, 400),
    ],
)
def test_users_lookup_errors(state, params, status):
    assert state.dispatch("user", "/users/lookup", "GET", params)[0] == status


def test_users_list_paginates_at_most_five(state):
    seen: list[str] = []
    first = call(state, "user", "/users/list")[1]
    assert first["per_page"] == 5 and first["total_users"] == len(BASE["users"])
    for page in range(1, first["total_pages"] + 1):
        code, body = call(state, "user", "/users/list", page=page)
        assert code == 200 and 1 <= len(body["users"]) <= 5
        seen += [user["user_id"] for user in body["users"]]
    assert seen == sorted(BASE["users"])
    assert call(state, "user", "/users/list", page=first["total_pages"] + 1)[1]["users"] == []
    assert len(call(state, "user", "/users/list", page="2", per_page=2)[1]["users"]) == 2


@pytest.mark.parametrize(
    "params",
    [
        {"page": 0},
        {"per_page": 6},
        {"per_page": 0},
        {"page": "two"},
        {"page": 1.5},
        {"page": True},
        {"page": 10**13},
        {"page": -(2**63)},
        {"page": "\u0662"},
        {"page": "1_0"},
    ],
)
def test_users_list_errors(state, params):
    assert state.dispatch("user", "/users/list", "GET", params)[0] == 400


def test_users_update_persists(state):
    code, body = call(
        state,
        "user",
        "/users/update",
        "POST",
        user_id="USR-003",
        updates={"phone": "+1-408-555-0000", "notes": "SAVE20 billing case"},
    )
    assert code == 200 and body["updated_fields"] == ["phone", "notes"]
    assert call(state, "user", "/users/lookup", user_id="USR-003")[1]["phone"] == "+1-408-555-0000"


def test_users_update_of_email_moves_the_email_index(state):
    call(
        state,
        "user",
        "/users/update",
        "POST",
        user_id="USR-001",
        updates={"email": "jane@new.example"},
    )
    assert call(state, "user", "/users/lookup", email="jane.doe@example.com")[0] == 404
    assert call(state, "user", "/users/lookup", email="jane@new.example")[1]["user_id"] == "USR-001"


@pytest.mark.parametrize(
    "params, status",
    [
        ({"user_id": "USR-001"}, 400),
        ({"updates": {"name": "X"}}, 400),
        ({"user_id": "USR-001", "updates": {}}, 400),
        ({"user_id": "USR-001", "updates": "name=X"}, 400),
        ({"user_id": "USR-001", "updates": {"tier": "platinum"}}, 400),
        ({"user_id": "USR-001", "updates": {"name": ""}}, 400),
        ({"user_id": "USR-001", "updates": {"email": "not-an-email"}}, 400),
        ({"user_id": "USR-001", "updates": {"email": "john.doe@example.com"}}, 409),
        ({"user_id": "USR-404", "updates": {"name": "X"}}, 404),
    ],
)
def test_users_update_errors_change_nothing(state, params, status):
    assert state.dispatch("user", "/users/update", "POST", params)[0] == status
    assert not state.has_writes
