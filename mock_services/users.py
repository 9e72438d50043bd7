"""UserService: customer profiles; `user_id` is the foreign key into OrderService."""

from __future__ import annotations

import re
from typing import Annotated, Any

from ..read_only_json import thaw
from .base import _Service
from .paths import USER, USERS_LIST, USERS_LOOKUP, USERS_UPDATE
from .registry import Fields, Range, ServiceError, endpoint
from .world import SETTINGS

EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
UPDATABLE_USER_FIELDS = ", ".join(SETTINGS["user_updatable_fields"])
MAX_PAGE = 1_000_000


class UserService(_Service):
    """Customer profiles; `user_id` is the foreign key into OrderService."""

    @endpoint(USER, USERS_LOOKUP, "GET", tool="lookup_user")
    def lookup(
        self,
        email: Annotated[str | None, "Customer email address"] = None,
        user_id: Annotated[str | None, "User ID, e.g. USR-001"] = None,
    ) -> dict[str, Any]:
        """Look up a user by email or ID (at least one of the two is required)."""
        if email is None and user_id is None:
            raise ServiceError(400, "provide 'email' or 'user_id'")
        if user_id is not None:
            user = self._require("users", user_id, "user")
            if email is not None and user["email"].lower() != email.lower():
                raise ServiceError(404, f"no user has both user_id {user_id!r} and email {email!r}")
            return thaw(user)
        found = self.state.find_user_id_by_email(email or "")
        if found is None:
            raise ServiceError(404, f"no user with email {email!r}")
        return thaw(self.state.read("users", found))

    @endpoint(USER, USERS_LIST, "GET", tool="list_users")
    def list_users(
        self,
        page: Annotated[int, "Page number, starting at 1", Range(1, MAX_PAGE)] = 1,
        per_page: Annotated[
            int, "Users per page (1-5)", Range(1, SETTINGS["max_per_page"])
        ] = SETTINGS["max_per_page"],
    ) -> dict[str, Any]:
        """List all users, paginated (max 5 per page)."""
        user_ids = tuple(self.state.world.tables["users"])
        start = (page - 1) * per_page
        users = [
            self.state.read("users", user_id) for user_id in user_ids[start : start + per_page]
        ]
        return {
            "users": [
                {
                    field: user[field]
                    for field in ("user_id", "name", "email", "tier", "account_status")
                }
                for user in users
            ],
            "page": page,
            "per_page": per_page,
            "total_users": len(user_ids),
            "total_pages": -(-len(user_ids) // per_page),
        }

    @endpoint(USER, USERS_UPDATE, "POST", tool="update_user")
    def update(
        self,
        user_id: Annotated[str, "User ID to update"],
        updates: Annotated[
            dict[str, Any],
            "Fields to change: " + UPDATABLE_USER_FIELDS,
            Fields(tuple(SETTINGS["user_updatable_fields"]), wording=("notes",)),
        ],
    ) -> dict[str, Any]:
        """Update user fields."""
        user = self._require("users", user_id, "user")
        if not updates:
            raise ServiceError(400, "updates must name at least one field")
        refused = [field for field in updates if field not in SETTINGS["user_updatable_fields"]]
        if refused:
            raise ServiceError(
                400,
                f"field(s) {', '.join(map(repr, refused))} cannot be updated; "
                f"updatable: {UPDATABLE_USER_FIELDS}",
            )
        for field, value in updates.items():
            if not isinstance(value, str) or (field != "notes" and not value.strip()):
                raise ServiceError(400, f"update of '{field}' must be a non-empty string")
        cleaned = {field: value.strip() for field, value in updates.items()}
        if "email" in cleaned:
            if not EMAIL_PATTERN.match(cleaned["email"]):
                raise ServiceError(400, f"invalid email {cleaned['email']!r}")
            owner = self.state.find_user_id_by_email(cleaned["email"])
            if owner is not None and owner != user["user_id"]:
                raise ServiceError(
                    409, f"email {cleaned['email']!r} is already used by another user"
                )
        record = self.state.write("users", user["user_id"])
        record.update(cleaned)
        return {"user": thaw(record), "updated_fields": list(cleaned)}
