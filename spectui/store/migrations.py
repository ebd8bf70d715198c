"""The chats database's schema as an ordered list of migrations, each applied once and in
order, the pending ones in one transaction, and recorded in `_migrations` (name, time applied).

A database from before the list (`PRAGMA user_version` 1 and no `_migrations` table) holds
the first migration already: it is recorded as applied when it is opened, not run again.
`user_version` counts the migrations applied, so an older spectui refuses a database that a
newer one migrated.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from spectui.errors import UserError
from spectui.store.chat_types import AnswerConfig

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
    _fts_triggers(conn)


def _fts_triggers(conn: sqlite3.Connection) -> None:
    """What keeps `messages_fts` in step with the messages' content."""
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


def parse_old_label(label: str) -> AnswerConfig | None:
    """The configuration of an answer stored by an earlier version, read from the label it kept
    instead ("draft-simple n-max 3", "ngram-mod", "a → b" after a switch): its spec types and
    n-max, all a label held; None where it names none. Only old rows and files are read so."""
    steps: list[tuple[tuple[str, ...], int | None]] = []
    for part in label.split(" → "):
        head, _, n = part.partition(" n-max ")
        types = tuple(t for t in head.strip().split(",") if t)
        if not types or (n and not n.isdigit()):
            return None
        steps.append((types, int(n) if n else None))
    (types, n_max), *later = steps
    return AnswerConfig(types, n_max, spec_changes=tuple(later))


def answer_configuration(conn: sqlite3.Connection) -> None:
    """Each answer's configuration as columns of its own instead of the label it was shown with
    (`config`): the plan selects answers by spec type and n-max, and a label is only a display.
    A label held the spec types and n-max only: the other columns stay NULL (not known). The
    table is rebuilt (SQLite before 3.35 cannot drop a column), keeping every row's id."""
    conn.execute(
        "CREATE TABLE messages_new (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "chat TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE, "
        "role TEXT NOT NULL, content TEXT NOT NULL, segments TEXT NOT NULL, stopped INTEGER NOT NULL, "
        "stats TEXT NOT NULL, spec_types TEXT, draft_n_max INTEGER, verify TEXT, temp REAL, top_k INTEGER, "
        "top_p REAL, min_p REAL, seed INTEGER, spec_changes TEXT)"
    )
    kept = "id, chat, role, content, segments, stopped, stats"
    rows = conn.execute(f"SELECT {kept}, config FROM messages")
    conn.executemany(
        f"INSERT INTO messages_new ({kept}, spec_types, draft_n_max, spec_changes) VALUES ({', '.join('?' * 10)})",
        ((*row[:7], *_label_columns(parse_old_label(row[7]))) for row in rows),
    )
    conn.execute("DROP TABLE messages")
    conn.execute("ALTER TABLE messages_new RENAME TO messages")
    conn.execute("CREATE INDEX messages_by_chat ON messages(chat, id)")
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts'").fetchone():
        _fts_triggers(conn)  # dropped with the old table; the index itself keeps the same ids


def _label_columns(config: AnswerConfig | None) -> tuple:
    if config is None:
        return None, None, None
    d = config.as_dict()
    return json.dumps(d["spec_types"]), d["draft_n_max"], json.dumps(d["spec_changes"])


# In order; never reorder, rename or edit one that has shipped: add a new one at the end (an
# option whose record says per_answer is a column of the answers: its migration adds it).
MIGRATIONS: list[Migration] = [chats_and_messages, answer_configuration]
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
