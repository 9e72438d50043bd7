"""The SQLite backend's tables (server/store/sqlite.py): episodes, their actions, the latest
episode of each env, and each client's share of the cap, kept up to date by triggers.

An episode row holds its header, its step count, when it was last used and finished, its
owner and its client (server/lifecycle/owners.py). `counts` holds how many episodes are held and
`shares` how many each client holds, so that making room at the cap reads two indexes
instead of counting rows. A file written with another schema version is refused.
"""

from __future__ import annotations

import sqlite3

from ..lifecycle.sessions import StoreUnavailableError

SCHEMA_VERSION = 2
SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (
    id TEXT PRIMARY KEY,
    header TEXT NOT NULL,
    steps INTEGER NOT NULL,
    last_used REAL NOT NULL,
    finished REAL,
    owner TEXT NOT NULL,
    client TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS episodes_by_last_use ON episodes (last_used);
CREATE INDEX IF NOT EXISTS episodes_by_client_use ON episodes (client, last_used);
CREATE INDEX IF NOT EXISTS finished_by_client ON episodes (client, finished)
    WHERE finished IS NOT NULL;
CREATE TABLE IF NOT EXISTS actions (
    episode_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (episode_id, step)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS latest (scope TEXT PRIMARY KEY, episode_id TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counts (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO counts VALUES ('held', 0);
CREATE TABLE IF NOT EXISTS shares (client TEXT PRIMARY KEY, held INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS shares_by_size ON shares (held);
CREATE TRIGGER IF NOT EXISTS episode_added AFTER INSERT ON episodes BEGIN
    UPDATE counts SET value = value + 1 WHERE name = 'held';
    INSERT INTO shares VALUES (new.client, 1)
        ON CONFLICT (client) DO UPDATE SET held = held + 1;
END;
CREATE TRIGGER IF NOT EXISTS episode_removed AFTER DELETE ON episodes BEGIN
    UPDATE counts SET value = value - 1 WHERE name = 'held';
    DELETE FROM actions WHERE episode_id = old.id;
    UPDATE shares SET held = held - 1 WHERE client = old.client;
    DELETE FROM shares WHERE client = old.client AND held <= 0;
END;
CREATE TRIGGER IF NOT EXISTS episode_handed_over AFTER UPDATE OF client ON episodes
WHEN new.client != old.client BEGIN
    UPDATE shares SET held = held - 1 WHERE client = old.client;
    DELETE FROM shares WHERE client = old.client AND held <= 0;
    INSERT INTO shares VALUES (new.client, 1)
        ON CONFLICT (client) DO UPDATE SET held = held + 1;
END;
"""


def create_schema(connection: sqlite3.Connection, url: str) -> None:
    """Create the tables of a new file, in one transaction; refuse another version's file."""
    connection.execute("BEGIN IMMEDIATE")
    version = connection.execute("PRAGMA user_version").fetchone()[0]
    if version not in (0, SCHEMA_VERSION):
        connection.execute("ROLLBACK")
        raise StoreUnavailableError(
            f"{url} holds episode store schema {version}; this server uses "
            f"{SCHEMA_VERSION}: use another file"
        )
    statement = ""
    for line in SCHEMA.splitlines(keepends=True):  # executescript would commit first
        statement += line
        if sqlite3.complete_statement(statement):
            connection.execute(statement)
            statement = ""
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    connection.execute("COMMIT")
