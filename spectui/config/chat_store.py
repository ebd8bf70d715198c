"""Saved chats: one SQLite database, `chats.db` in the data dir (design: docs/storage.md).

A message is a row, appended when it is sent; the answer's row is rewritten as it streams,
each update its own small transaction, so a killed process loses at most the update in
flight. Two instances on one chat both append rows, so neither loses the other's turns.
Readers take only what they show: the picker reads titles and counts, opening a chat its
last messages.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from spectui.config import chat_import
from spectui.config.history import Chat, Message, make_title
from spectui.config.paths import data_dir
from spectui.errors import UserError

SCHEMA = 1  # PRAGMA user_version; bump when the tables change
SHOWN = 40  # messages read when a chat opens (a few screens); earlier ones are read as the reader scrolls up
BUSY_MS = 5000  # how long a writer waits for another instance's transaction
_TABLES = """
CREATE TABLE IF NOT EXISTS chats (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL,
    preset TEXT NOT NULL, setup TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    chat TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    role TEXT NOT NULL, content TEXT NOT NULL, segments TEXT NOT NULL, stopped INTEGER NOT NULL,
    stats TEXT NOT NULL, config TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_chat ON messages(chat, id);
"""
_FTS = """
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts USING fts5(content, content='messages', content_rowid='id');
CREATE TRIGGER IF NOT EXISTS messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER IF NOT EXISTS messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER IF NOT EXISTS messages_au AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
"""
_COLUMNS = "id, role, content, segments, stopped, stats, config"


@dataclass
class Summary:
    """What the picker shows of a chat, read without its messages."""

    id: str
    title: str
    created: float
    updated: float
    answers: int


_lock = threading.Lock()
_open: tuple[Path, sqlite3.Connection] | None = None  # one connection, to the data dir in force


def db_path() -> Path:
    return data_dir() / "chats.db"


def _connect(path: Path) -> sqlite3.Connection:
    """Open (creating 0600) and bring the schema up to date; old JSON chats are imported."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))  # sqlite gives its -wal/-shm files these bits
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_MS / 1000)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # WAL: a killed process loses nothing committed
        conn.execute("PRAGMA foreign_keys = ON")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA:
            conn.close()
            raise UserError(f"{path}: written by a newer spectui (schema {version}); upgrade spectui")
        if version == 0:  # IF NOT EXISTS: another instance may have created them meanwhile
            fts = _FTS if _has_fts5(conn) else ""
            try:
                conn.executescript(f"BEGIN IMMEDIATE; {_TABLES} {fts} PRAGMA user_version = {SCHEMA}; COMMIT;")
            except sqlite3.Error:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
    except sqlite3.Error as e:
        raise UserError(f"cannot open the chats database {path}: {e}; move it away to start afresh") from e
    except OSError as e:
        raise UserError(f"cannot open the chats database {path}: {e.strerror or e}") from e
    return conn


def _has_fts5(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp.fts5_probe")
    except sqlite3.OperationalError:
        return False
    return True


def _db() -> sqlite3.Connection:
    """The connection to this data dir's database (tests switch data dirs: the old one closes)."""
    global _open
    path = db_path()
    if _open is None or _open[0] != path:
        if _open is not None:
            _open[1].close()
        _open = (path, _connect(path))
        import_chats()
    return _open[1]


def close() -> None:
    global _open
    if _open is not None:
        _open[1].close()
        _open = None


@contextmanager
def _write(conn: sqlite3.Connection) -> Iterator[None]:
    """One transaction that takes the write lock at once (so it waits for another instance's
    instead of failing halfway)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def _errors(doing: str) -> Iterator[None]:
    try:
        with _lock:
            yield
    except sqlite3.Error as e:
        raise UserError(f"cannot {doing} in {db_path()}: {e}") from e


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _message(row) -> Message:
    i, role, content, segments, stopped, stats, config = row
    m = Message(role, content, [(t, k) for t, k in json.loads(segments)], bool(stopped), json.loads(stats), config)
    m.row = i
    return m


# --- writing ---------------------------------------------------------------------


def _put_chat(conn: sqlite3.Connection, chat: Chat) -> None:
    """Insert or update the chat's row; a stored title stays (renames go through rename_chat,
    and another instance's save must not undo one)."""
    conn.execute(
        "INSERT INTO chats (id, title, created, updated, preset, setup) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET title = iif(chats.title = '', excluded.title, chats.title), "
        "updated = excluded.updated, "
        "preset = excluded.preset, setup = excluded.setup",
        (chat.id, chat.title, chat.created, chat.updated, chat.preset, _json(chat.setup)),
    )


def _values(m: Message) -> tuple:
    return (m.role, m.content, _json(m.segments), int(m.stopped), _json(m.stats), m.config)


def save_chat(chat: Chat) -> None:
    """Store what changed: the chat's title and setup, the messages dropped since the last
    save, the new ones (appended as rows), and the last one (an answer still changes)."""
    chat.updated = time.time()
    if not chat.title:
        chat.title = make_title(chat.messages)
    added: list[tuple[Message, int | None]] = []  # rows are the messages' once committed (a rollback forgets them)
    with _errors(f"save chat {chat.id}"):
        conn = _db()
        with _write(conn):
            _put_chat(conn, chat)
            if chat.dropped:
                conn.executemany("DELETE FROM messages WHERE id = ?", [(i,) for i in chat.dropped])
            for m in chat.messages:
                if m.row is None:
                    cur = conn.execute(
                        "INSERT INTO messages (chat, role, content, segments, stopped, stats, config) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (chat.id, *_values(m)),
                    )
                    added.append((m, cur.lastrowid))
            if chat.messages and (last := chat.messages[-1]).row is not None:
                _update(conn, last)
    for m, row in added:
        m.row = row
    chat.dropped = []


def _update(conn: sqlite3.Connection, m: Message) -> None:
    conn.execute(
        "UPDATE messages SET role = ?, content = ?, segments = ?, stopped = ?, stats = ?, config = ? WHERE id = ?",
        (*_values(m), m.row),
    )


def save_answer(chat: Chat) -> None:
    """Rewrite the streaming answer's row (the chat's last message), as one small transaction."""
    m = chat.messages[-1]
    if m.row is None:
        return
    with _errors(f"save the answer of chat {chat.id}"):
        conn = _db()
        with _write(conn):
            _update(conn, m)


def rename_chat(chat_id: str, title: str) -> Summary:
    """Give a saved chat a title of its own (kept from then on)."""
    title = " ".join(title.split())
    if not title:
        raise UserError("a chat's name cannot be empty")
    with _errors(f"rename chat {chat_id}"):
        conn = _db()
        with _write(conn):
            done = conn.execute("UPDATE chats SET title = ? WHERE id = ?", (title, chat_id)).rowcount
    if not done:
        raise UserError(f"no chat '{chat_id}' in {db_path()}")
    return summary(chat_id)


def delete_chat(chat_id: str) -> None:
    with _errors(f"delete chat {chat_id}"):
        conn = _db()
        with _write(conn):
            done = conn.execute("DELETE FROM chats WHERE id = ?", (chat_id,)).rowcount
    if not done:
        raise UserError(f"no chat '{chat_id}' in {db_path()}")


def add_imported(conn: sqlite3.Connection, chat: Chat) -> bool:
    """Store a chat read from an old JSON file, unless one with its id is stored already."""
    with _write(conn):
        if conn.execute("SELECT 1 FROM chats WHERE id = ?", (chat.id,)).fetchone():
            return False
        _put_chat(conn, chat)
        conn.executemany(
            "INSERT INTO messages (chat, role, content, segments, stopped, stats, config) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(chat.id, *_values(m)) for m in chat.messages],
        )
    return True


def import_chats() -> list[tuple[Path, str]]:
    """Import the JSON chats left in the chats folder; (file, why) for each that cannot be."""
    conn = _db()
    return chat_import.import_folder(lambda chat: add_imported(conn, chat))


# --- reading ---------------------------------------------------------------------


def load_chat(chat_id: str, last: int | None = None) -> Chat:
    """A saved chat with its last `last` messages (all when None); `earlier` counts the rest."""
    with _errors(f"read chat {chat_id}"):
        conn = _db()
        row = conn.execute(
            "SELECT id, title, created, updated, preset, setup FROM chats WHERE id = ?", (chat_id,)
        ).fetchone()
        if row is None:
            raise UserError(f"no chat '{chat_id}' in {db_path()}")
        total = conn.execute("SELECT count(*) FROM messages WHERE chat = ?", (chat_id,)).fetchone()[0]
        limit = total if last is None else last
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM messages WHERE chat = ? ORDER BY id DESC LIMIT ?", (chat_id, limit)
        ).fetchall()
    messages = [_message(r) for r in reversed(rows)]
    chat = Chat(row[0], row[1], row[2], row[3], messages, row[4], json.loads(row[5]))
    chat.earlier = total - len(messages)
    return chat


def load_earlier(chat: Chat, n: int) -> list[Message]:
    """Read up to `n` messages before the chat's first loaded one into it; the ones read."""
    if chat.earlier <= 0 or not chat.messages or chat.messages[0].row is None:
        return []
    with _errors(f"read chat {chat.id}"):
        rows = (
            _db()
            .execute(
                f"SELECT {_COLUMNS} FROM messages WHERE chat = ? AND id < ? ORDER BY id DESC LIMIT ?",
                (chat.id, chat.messages[0].row, n),
            )
            .fetchall()
        )
    older = [_message(r) for r in reversed(rows)]
    chat.messages[:0] = older
    chat.earlier = max(chat.earlier - len(older), 0) if older else 0
    return older


def texts_before(chat: Chat) -> list[tuple[str, str]]:
    """(role, content) of the messages before the loaded ones, oldest first: the prompt's start."""
    if chat.earlier <= 0 or not chat.messages or chat.messages[0].row is None:
        return []
    with _errors(f"read chat {chat.id}"):
        return (
            _db()
            .execute(
                "SELECT role, content FROM messages WHERE chat = ? AND id < ? ORDER BY id",
                (chat.id, chat.messages[0].row),
            )
            .fetchall()
        )


def _summaries(where: str = "", args: tuple = ()) -> list[Summary]:
    rows = (
        _db()
        .execute(
            "SELECT c.id, c.title, c.created, c.updated, "
            "(SELECT count(*) FROM messages m WHERE m.chat = c.id AND m.role = 'assistant') "
            f"FROM chats c {where} ORDER BY c.updated DESC, c.created DESC, c.id DESC",
            args,
        )
        .fetchall()
    )
    return [Summary(*r) for r in rows]


def summary(chat_id: str) -> Summary:
    with _errors("list the chats"):
        found = _summaries("WHERE c.id = ?", (chat_id,))
    if not found:
        raise UserError(f"no chat '{chat_id}' in {db_path()}")
    return found[0]


def list_chats() -> tuple[list[Summary], list[tuple[Path, str]]]:
    """Every saved chat, most recently updated first (without their messages), and
    (file, why) for each old JSON chat that could not be imported."""
    with _errors("list the chats"):
        _db()
    problems = import_chats()
    with _errors("list the chats"):
        return _summaries(), problems


def latest_chat(last: int | None = None) -> Chat | None:
    """The most recently updated chat (its last `last` messages), if any."""
    chats, _ = list_chats()
    return load_chat(chats[0].id, last) if chats else None


def search(query: str) -> list[Summary]:
    """The chats whose title or messages hold every word of `query`, newest first (FTS5
    where this SQLite has it, else a plain substring match)."""
    words = query.split()
    if not words:
        return list_chats()[0]
    with _errors("search the chats"):
        conn = _db()
        has_fts = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts'").fetchone()
        title = " AND ".join("c.title LIKE ? ESCAPE '\\'" for _ in words)
        likes = tuple("%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for w in words)
        if has_fts:
            phrase = " ".join('"' + w.replace('"', '""') + '"' for w in words)
            inside = "SELECT m.chat FROM messages_fts f JOIN messages m ON m.id = f.rowid WHERE messages_fts MATCH ?"
            return _summaries(f"WHERE ({title}) OR c.id IN ({inside})", (*likes, phrase))
        content = " AND ".join("m.content LIKE ? ESCAPE '\\'" for _ in words)
        inside = f"SELECT m.chat FROM messages m WHERE {content}"
        return _summaries(f"WHERE ({title}) OR c.id IN ({inside})", (*likes, *likes))


def earlier_than(chat: Chat, message: Message, n: int) -> list[Message]:
    """Up to `n` of the chat's messages just before `message`: from those loaded, else read
    from the store into the chat."""
    i = next((i for i, m in enumerate(chat.messages) if m is message), 0)
    if i == 0:
        return load_earlier(chat, n)
    return chat.messages[max(i - n, 0) : i]


def answer_stats() -> list[tuple[dict, str, dict]]:
    """(the chat's setup, the answer's configuration label, its statistics) of every stored
    answer with statistics, for `spectui plan`'s measured acceptance; none without a database
    (plan never creates one)."""
    if not db_path().is_file():
        return []
    with _errors("read the answers' statistics"):
        rows = (
            _db()
            .execute(
                "SELECT c.setup, m.config, m.stats FROM messages m JOIN chats c ON c.id = m.chat "
                "WHERE m.role = 'assistant' AND m.stats != '{}'"
            )
            .fetchall()
        )
    out = []
    for setup, config, stats in rows:
        try:
            out.append((json.loads(setup), config, json.loads(stats)))
        except ValueError:
            continue  # a row another version wrote: it only lacks its statistics here
    return out
