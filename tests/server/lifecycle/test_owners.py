"""The identities of server/lifecycle/owners.py: who a client is, and a connection's own token."""

from __future__ import annotations

import pytest

from servicebench_support_queue.server.lifecycle.owners import (
    RELEASED,
    UNKNOWN_CLIENT,
    client_identity,
    connection_owner,
    scope_client,
)


@pytest.mark.parametrize(
    ("host", "client"),
    [
        ("192.0.2.7", "192.0.2.7"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2::ffff", "2001:db8:1:2::/64"),
        ("::ffff:192.0.2.7", "192.0.2.7"),  # an IPv4 client of a dual-stack socket
        ("::1", "::/64"),
        ("testclient", "testclient"),
        ("a\nb", "ab"),
        ("x" * 500, "x" * 64),
        ("", UNKNOWN_CLIENT),
        (None, UNKNOWN_CLIENT),
    ],
)
def test_a_client_is_its_address_or_its_ipv6_network(host: str | None, client: str) -> None:
    assert client_identity(host) == client


def test_a_scope_without_a_client_is_the_unknown_client() -> None:
    assert scope_client({"client": None}) == UNKNOWN_CLIENT
    assert scope_client({"client": ("192.0.2.9", 5)}) == "192.0.2.9"


def test_every_connection_owner_is_its_own_and_never_the_released_marker() -> None:
    owners = {connection_owner() for _ in range(1000)}
    assert len(owners) == 1000 and RELEASED not in owners
    assert all(owner.startswith(RELEASED + ":") and len(owner) > 20 for owner in owners)
