"""Chats kept outside the database, imported into it: the JSON chat files of earlier
versions (formats 1 and 2, one file per chat and a journal of the answer being written), and
the unsaved files a quit writes when the chat could not be saved (`spectui-unsaved-<id>.json`,
format 3 with each message's row, beside its Markdown twin).

An imported file (and its journal or twin) moves to `chats/imported/`, kept as a backup; a
file that cannot be read stays where it is and is listed, with why, in the picker.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from spectui.bounded import DATA_BYTES, loads_json, read_bytes
from spectui.config.paths import chats_dir, private_dir, unsaved_dirs, write_atomic
from spectui.engine.overlay import add_segments
from spectui.errors import UserError
from spectui.store.chat_types import ROLES, STORED, AnswerConfig, Chat, Message
from spectui.store.migrations import parse_old_label

FORMAT = 3  # the newest "format" of chat files (2 added `setup`, 3 a message's `config` as an object)
_ID = re.compile(r"[A-Za-z0-9_-]+")
UNSAVED = "spectui-unsaved-"  # + the chat's id + ".json" (to import) or ".md" (to read)


def import_folder(add: Callable[[Chat], object]) -> list[tuple[Path, str]]:
    """Import every `*.json` chat in the chats folder with `add` (the store's, which keeps a
    chat stored already, as an interrupted import leaves it); (file, why) for those that cannot be."""
    folder = chats_dir()
    problems: list[tuple[Path, str]] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            chat = read_chat(path)
            add(chat)
            put_away((path, path.with_suffix(".journal")))
        except UserError as e:
            problems.append((path, str(e)))
        except (OSError, sqlite3.Error) as e:
            problems.append((path, f"{path}: could not be imported ({e}); it stays in place"))
    return problems


def backup_dir() -> Path:
    return chats_dir() / "imported"


def put_away(files: Iterable[Path]) -> None:
    """Move imported files into `backup_dir()` (owner-only, as journals were not)."""
    backup = private_dir(backup_dir())
    for f in files:
        if f.is_symlink():
            f.replace(backup / f.name)
        elif f.is_file():  # a folder named like a journal is none, and stays
            shutil.move(f, backup / f.name)  # an unsaved file may be on another filesystem
            (backup / f.name).chmod(0o600)


def unsaved_files() -> list[Path]:
    """The unsaved chats that quits left, where they write them: this user's regular files only
    (the temp folder is shared)."""
    found: list[Path] = []
    for folder in unsaved_dirs():
        for path in sorted(folder.glob(f"{UNSAVED}*.json")) if folder.is_dir() else []:
            try:
                st = path.lstat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid() and path not in found:
                found.append(path)
    return found


def write_unsaved(chat: Chat, folder: Path) -> Path:
    """The chat as the next start imports it: format 3, with each message's stored row and the
    rows it dropped, so only what the database lacks is added."""
    doc = {
        "format": FORMAT,
        "id": chat.id,
        "title": chat.title,
        "created": chat.created,
        "updated": chat.updated,
        "preset": chat.preset,
        "setup": chat.setup,
        "messages": [
            {**{name: getattr(m, name) for name in STORED}, "config": m.config and m.config.as_dict(), "row": m.row}
            for m in chat.messages
        ],
        "dropped": chat.dropped,
    }
    return write_atomic(folder / f"{UNSAVED}{chat.id}.json", json.dumps(doc, ensure_ascii=False))


def read_unsaved(path: Path) -> Chat:
    """An unsaved file with the rows it records; anything wrong is a UserError naming the file."""
    doc, chat = _read(path, "unsaved chat", UNSAVED)
    try:
        rows = [m.get("row") for m in doc["messages"]]
        dropped = doc.get("dropped", [])
        if not all(r is None or type(r) is int for r in rows) or not all(type(r) is int for r in dropped):
            raise ValueError("a row is not a whole number")
    except (ValueError, TypeError, AttributeError) as e:
        raise UserError(f"{path}: not a valid unsaved chat ({e}); move or delete it") from e
    for m, row in zip(chat.messages, rows, strict=True):
        m.row = row
    chat.dropped = dropped
    return chat


def read_chat(path: Path) -> Chat:
    """One chat file with its journal replayed; anything wrong is a UserError naming the file."""
    chat = _read(path, "chat", "")[1]
    _replay(chat, path.with_suffix(".journal"))
    return chat


def _read(path: Path, what: str, prefix: str) -> tuple[dict, Chat]:
    """A format 1, 2 or 3 file named `prefix` + its chat's id: (the document, the chat)."""
    try:
        doc = loads_json(read_bytes(path, what, DATA_BYTES))
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        if doc.get("format", FORMAT) > FORMAT:
            raise UserError(f"{path}: written by a newer spectui (format {doc['format']}); upgrade spectui")
        chat = Chat(
            id=str(doc["id"]),
            title=str(doc["title"]),
            created=seconds(doc["created"]),
            updated=seconds(doc["updated"]),
            messages=[_message(m) for m in doc["messages"]],
            preset=str(doc.get("preset", "")),
            setup=doc.get("setup", {}),  # format 1 has none
        )
        if not isinstance(chat.setup, dict):
            raise ValueError(f"setup must be an object, got {chat.setup!r}")
        if not _ID.fullmatch(chat.id):
            raise ValueError(f"invalid id {chat.id!r}")
        if prefix + chat.id != path.stem:  # its journal is named after the file
            name = f"{prefix}{chat.id}.json"
            raise ValueError(f"its id {chat.id!r} is not its file name: name the file {name} or fix the id")
    except (ValueError, KeyError, TypeError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError too
        why = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise UserError(f"{path}: not a valid {what} file ({why}); move or delete it") from e
    return doc, chat


def _replay(chat: Chat, journal: Path) -> None:
    """Apply the chat's journal, if any. A line that does not continue its message (already
    folded in) is skipped; a broken line (cut by a kill) ends the replay."""
    try:
        lines = read_bytes(journal, "journal", DATA_BYTES).decode("utf-8").splitlines()
    except (UserError, UnicodeDecodeError):
        return
    for line in lines:
        try:
            r = loads_json(line)
            i, at, text = r["i"], r["at"], r["text"]
            segments = [(t, k) for t, k in r["segments"]]
            if not (
                isinstance(i, int)
                and 0 <= i < len(chat.messages)
                and isinstance(text, str)
                and all(isinstance(x, str) for seg in segments for x in seg)
            ):
                raise ValueError("not a journal line")
        except (ValueError, KeyError, TypeError, RecursionError):
            return
        m = chat.messages[i]
        if m.role == "assistant" and at == len(m.content):
            m.content += text
            add_segments(m.segments, segments)


def seconds(value) -> float:
    """A timestamp field as seconds, or ValueError (NaN, infinite, or beyond the calendar)."""
    t = float(value)
    if not math.isfinite(t):
        raise ValueError(f"not a time: {value!r}")
    try:
        time.localtime(t)
    except (OverflowError, OSError) as e:
        raise ValueError(f"not a time: {value!r}") from e
    return t


def _message(d: dict) -> Message:
    if not isinstance(d, dict):
        raise ValueError(f"a message must be an object, got {type(d).__name__}")
    m = Message(**{name: d[name] for name in STORED if name in d or name in ("role", "content")})
    m.segments = [(text, kind) for text, kind in m.segments]
    m.config = _config(d.get("config"))
    if m.role not in ROLES:
        raise ValueError(f"unknown role {m.role!r}")
    checks = (
        *((getattr(m, name), kind) for name, kind in STORED.items() if name not in ("role", "segments")),
        *((part, str) for seg in m.segments for part in seg),
    )
    for value, kind in checks:
        if not isinstance(value, kind):
            raise ValueError(f"expected {kind.__name__}, got {value!r}")
    return m


def _config(value) -> AnswerConfig | None:
    """A message's configuration: an object (format 3), or the label formats 1 and 2 kept."""
    if isinstance(value, str):
        return parse_old_label(value)
    if value is not None and not isinstance(value, dict):
        raise ValueError(f"a message's config must be an object, got {value!r}")
    return None if value is None else AnswerConfig.from_dict(value)
