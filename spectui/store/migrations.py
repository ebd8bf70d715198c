"""The chats database's schema as an ordered list of migrations, each applied once and in
order, the pending ones in one transaction, and recorded in `_migrations` (name, time applied).

A database from before the list (`PRAGMA user_version` 1 and no `_migrations` table) holds
the first migration already: it is recorded as applied when it is opened, not run again.
`user_version` counts the migrations applied, so an older spectui refuses a database that a
newer one migrated.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from spectui.errors import UserError

Migration = Callable[[sqlite3.Connection], None]


def _has_fts5(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp.fts5_probe")
    except sqlite3.OperationalError:
        return False
    return True


def chats_and_messages(conn: sqlite3.Connection) -> None:
    """The chats, their messages, and the full-text index of the messages where this SQLite has FTS5."""
    conn.execute(
        "CREATE TABLE chats (id TEXT PRIMARY KEY, title TEXT NOT NULL, created REAL NOT NULL, "
        "updated REAL NOT NULL, preset TEXT NOT NULL, setup TEXT NOT NULL)"
    )
    conn.execute(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "chat TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE, "
        "role TEXT NOT NULL, content TEXT NOT NULL, segments TEXT NOT NULL, stopped INTEGER NOT NULL, "
        "stats TEXT NOT NULL, config TEXT NOT NULL)"
    )
    conn.execute("CREATE INDEX messages_by_chat ON messages(chat, id)")
    if not _has_fts5(conn):
        return
    conn.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id')")
    conn.execute(
        "CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN "
        "INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END"
    )
    conn.execute(
        "CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN "
        "INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content); END"
    )
    conn.execute(
        "CREATE TRIGGER messages_au AFTER UPDATE OF content ON messages BEGIN "
        "INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content); "
        "INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content); END"
    )


# In order; never reorder, rename or edit one that has shipped: add a new one at the end.
MIGRATIONS: list[Migration] = [chats_and_messages]
_BEFORE_THE_LIST = 1  # the user_version of databases written before migrations were recorded


def _version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def _applied(conn: sqlite3.Connection) -> set[str] | None:
    """The names recorded as applied; None before the `_migrations` table exists."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'").fetchone():
        return None
    return {name for (name,) in conn.execute("SELECT name FROM _migrations")}


def _pending(conn: sqlite3.Connection, path: Path) -> list[Migration]:
    """The migrations this database lacks; a database a newer spectui migrated is a UserError."""
    version = _version(conn)
    if version > len(MIGRATIONS):
        raise UserError(f"{path}: written by a newer spectui (schema {version}); upgrade spectui")
    applied = _applied(conn)
    if applied is None:
        applied = {m.__name__ for m in MIGRATIONS[:_BEFORE_THE_LIST]} if version == _BEFORE_THE_LIST else set()
    return [m for m in MIGRATIONS if m.__name__ not in applied]


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the database at `path` up to date. Checked first without a lock (an up-to-date
    database takes none), then again under the write lock: another instance may have
    migrated it meanwhile."""
    if _applied(conn) is not None and not _pending(conn, path):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _applied(conn) is None:
            before = MIGRATIONS[:_BEFORE_THE_LIST] if _version(conn) == _BEFORE_THE_LIST else []
            conn.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied REAL NOT NULL)")
            conn.executemany("INSERT INTO _migrations VALUES (?, ?)", [(m.__name__, time.time()) for m in before])
        for migration in _pending(conn, path):
            migration(conn)
            conn.execute("INSERT INTO _migrations VALUES (?, ?)", (migration.__name__, time.time()))
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
