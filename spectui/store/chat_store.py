"""Saved chats: one SQLite database, `chats.db` in the data dir (design: docs/storage.md).

A message is a row, appended when it is sent; the answer's row is rewritten as it streams,
each update its own small transaction, so a killed process loses at most the update in
flight. Two instances on one chat both append rows, so neither loses the other's turns.
Readers take only what they show: the picker reads titles and counts, opening a chat its
last messages.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from spectui.config.paths import data_dir, private_dir
from spectui.errors import UserError
from spectui.store import chat_import, columns, migrations
from spectui.store.chat_types import Chat, Message, make_title

SHOWN = 40  # messages read when a chat opens (a few screens); earlier ones are read as the reader scrolls up
BUSY_MS = 5000  # how long a writer waits for another instance's transaction
_STORED = columns.MESSAGE_COLUMNS
_COLUMNS = ", ".join(("id", *_STORED))
_INSERT = f"INSERT INTO messages (chat, {', '.join(_STORED)}) VALUES ({', '.join('?' * (len(_STORED) + 1))})"
_UPDATE = f"UPDATE messages SET {', '.join(f'{name} = ?' for name in _STORED)} WHERE id = ?"


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
    """Open (creating 0600) and bring the schema up to date (migrations.py)."""
    try:
        private_dir(path.parent)
        os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))  # sqlite gives its -wal/-shm files these bits
        _tighten(path)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_MS / 1000)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # WAL: a killed process loses nothing committed
        conn.execute("PRAGMA foreign_keys = ON")
        try:
            migrations.migrate(conn, path)
        except BaseException:
            conn.close()
            raise
    except sqlite3.Error as e:
        raise UserError(f"cannot open the chats database {path}: {e}; move it away to start afresh") from e
    except OSError as e:
        raise UserError(f"cannot open the chats database {path}: {e.strerror or e}") from e
    return conn


def _tighten(path: Path) -> None:
    """A database an earlier spectui (or a copy) left readable by others becomes 0600, with
    its -wal and -shm files."""
    for f in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            if os.stat(f).st_mode & 0o077:
                os.chmod(f, 0o600)
        except OSError:  # absent, or not ours to change
            pass


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


def query(doing: str, sql: str, args: tuple = ()) -> list[tuple]:
    """The rows a read-only `sql` finds, for the store's other readers (answers.py); a failure
    is a UserError saying what it was `doing`."""
    with _errors(doing):
        return _db().execute(sql, args).fetchall()


# --- writing ---------------------------------------------------------------------


def _put_chat(conn: sqlite3.Connection, chat: Chat) -> None:
    """Insert or update the chat's row; a stored title stays unless it was taken from a first
    message since edited (renames go through rename_chat, and another instance's save must
    not undo one)."""
    setup = columns.to_json(chat.setup)
    conn.execute(
        "INSERT INTO chats (id, title, created, updated, preset, setup) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET title = iif(chats.title IN ('', ?), excluded.title, chats.title), "
        "updated = excluded.updated, "
        "preset = excluded.preset, setup = excluded.setup",
        (chat.id, chat.title, chat.created, chat.updated, chat.preset, setup, chat.replaced_title),
    )


def _values(m: Message) -> tuple:
    return columns.stored(m)


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
                    cur = conn.execute(_INSERT, (chat.id, *_values(m)))
                    added.append((m, cur.lastrowid))
            if chat.messages and (last := chat.messages[-1]).row is not None:
                _update(conn, last)
    for m, row in added:
        m.row = row
    chat.dropped, chat.replaced_title = [], ""


def _update(conn: sqlite3.Connection, m: Message) -> None:
    conn.execute(_UPDATE, (*_values(m), m.row))


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
        conn.executemany(_INSERT, [(chat.id, *_values(m)) for m in chat.messages])
    return True


def import_chats() -> list[tuple[Path, str]]:
    """Import the JSON chats left in the chats folder; (file, why) for each that cannot be."""
    conn = _db()
    return chat_import.import_folder(lambda chat: add_imported(conn, chat))


def _restore(conn: sqlite3.Connection, chat: Chat) -> None:
    """Store a chat as an unsaved file holds it: each message rewritten into its row (an answer
    whose end was not saved), appended when it has none or another instance deleted it."""
    with _write(conn):
        stored = {r for (r,) in conn.execute("SELECT id FROM messages WHERE chat = ?", (chat.id,))}
        _put_chat(conn, chat)
        conn.executemany("DELETE FROM messages WHERE id = ?", [(r,) for r in chat.dropped if r in stored])
        for m in chat.messages:
            if m.row in stored:
                _update(conn, m)
            else:
                conn.execute(_INSERT, (chat.id, *_values(m)))


def import_unsaved() -> tuple[list[str], list[tuple[Path, str]]]:
    """Add to their chats the turns that quits kept in unsaved files (a save had failed), and
    move each file and its Markdown twin to `chats/imported/`: (a line per chat restored,
    (file, why) for each that could not be)."""
    notes: list[str] = []
    problems: list[tuple[Path, str]] = []
    for path in chat_import.unsaved_files():
        try:
            chat = chat_import.read_unsaved(path)
            with _errors(f"import {path.name}"):
                _restore(_db(), chat)
        except UserError as e:
            problems.append((path, f"kept when a save failed; not imported yet: {e}"))
            continue
        backup = chat_import.backup_dir()
        try:
            chat_import.put_away((path, path.with_suffix(".md")))
        except OSError as e:
            if path.exists():  # else only its Markdown twin stayed
                problems.append((path, f"{path}: imported, but not moved away ({e.strerror or e}); delete it"))
                continue
        notes.append(
            f"The turns of “{chat.title or chat.id}” that a failed save kept in {path.with_suffix('.md')} "
            f"are back in the chat (the files moved to {backup})."
        )
    return notes, problems


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
    damaged: list[str] = []
    messages = [columns.message(r, damaged) for r in reversed(rows)]
    setup = columns.parsed(row[5], dict, damaged, "setup")
    chat = Chat(str(row[0]), str(row[1]), columns.when(row[2]), columns.when(row[3]), messages, str(row[4]), setup)
    chat.earlier = total - len(messages)
    chat.damaged = columns.damage_note(chat, damaged, db_path())
    return chat


def load_earlier(chat: Chat, n: int) -> list[Message]:
    """Read up to `n` messages before the chat's first loaded one into it; the ones read."""
    if chat.earlier <= 0 or not chat.messages or chat.messages[0].row is None:
        return []
    rows = query(
        f"read chat {chat.id}",
        f"SELECT {_COLUMNS} FROM messages WHERE chat = ? AND id < ? ORDER BY id DESC LIMIT ?",
        (chat.id, chat.messages[0].row, n),
    )
    damaged: list[str] = []
    older = [columns.message(r, damaged) for r in reversed(rows)]
    chat.damaged = chat.damaged or columns.damage_note(chat, damaged, db_path())
    chat.messages[:0] = older
    chat.earlier = max(chat.earlier - len(older), 0) if older else 0
    return older


def texts_before(chat: Chat) -> list[tuple[str, str]]:
    """(role, content) of the messages before the loaded ones, oldest first: the prompt's start."""
    if chat.earlier <= 0 or not chat.messages or chat.messages[0].row is None:
        return []
    return query(
        f"read chat {chat.id}",
        "SELECT role, content FROM messages WHERE chat = ? AND id < ? ORDER BY id",
        (chat.id, chat.messages[0].row),
    )


def _summaries(where: str = "", args: tuple = ()) -> list[Summary]:
    """Newest first; sorted here, once each time is a number (a damaged row's reads as 0)."""
    rows = (
        _db()
        .execute(
            "SELECT c.id, c.title, c.created, c.updated, "
            "(SELECT count(*) FROM messages m WHERE m.chat = c.id AND m.role = 'assistant') "
            f"FROM chats c {where}",
            args,
        )
        .fetchall()
    )
    when = columns.when
    found = [Summary(str(i), str(title), when(created), when(updated), n) for i, title, created, updated, n in rows]
    return sorted(found, key=lambda s: (s.updated, s.created, s.id), reverse=True)


def summary(chat_id: str) -> Summary:
    with _errors("list the chats"):
        found = _summaries("WHERE c.id = ?", (chat_id,))
    if not found:
        raise UserError(f"no chat '{chat_id}' in {db_path()}")
    return found[0]


def list_chats() -> tuple[list[Summary], list[tuple[Path, str]]]:
    """Every saved chat, most recently updated first (without their messages), and
    (file, why) for each old JSON chat or unsaved file that could not be imported."""
    with _errors("list the chats"):
        _db()
    problems = import_chats() + import_unsaved()[1]
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
