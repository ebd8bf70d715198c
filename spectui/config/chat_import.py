"""The JSON chat files of earlier versions (formats 1 and 2, one file per chat and a journal
of the answer being written), imported once into the chats database.

An imported file and its journal move to `chats/imported/`, kept as a backup; a file that
cannot be read stays where it is and is listed, with why, in the picker.
"""

from __future__ import annotations

import math
import re
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from spectui.bounded import DATA_BYTES, loads_json, read_bytes
from spectui.config.history import ROLES, Chat, Message
from spectui.config.paths import chats_dir
from spectui.engine.overlay import add_segments
from spectui.errors import UserError

FORMAT = 2  # the newest "format" of chat files (2 added `setup`)
_ID = re.compile(r"[A-Za-z0-9_-]+")


def import_folder(add: Callable[[Chat], object]) -> list[tuple[Path, str]]:
    """Import every `*.json` chat in the chats folder with `add` (the store's, which keeps a
    chat stored already, as an interrupted import leaves it); (file, why) for those that cannot be."""
    folder = chats_dir()
    problems: list[tuple[Path, str]] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            chat = read_chat(path)
            add(chat)
            backup = folder / "imported"
            backup.mkdir(mode=0o700, exist_ok=True)
            for f in (path, path.with_suffix(".journal")):
                if f.exists():
                    f.replace(backup / f.name)
                    (backup / f.name).chmod(0o600)  # journals were written 0644
        except UserError as e:
            problems.append((path, str(e)))
        except (OSError, sqlite3.Error) as e:
            problems.append((path, f"{path}: could not be imported ({e}); it stays in place"))
    return problems


def read_chat(path: Path) -> Chat:
    """One chat file with its journal replayed; anything wrong is a UserError naming the file."""
    try:
        doc = loads_json(read_bytes(path, "chat", DATA_BYTES))
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        if doc.get("format", FORMAT) > FORMAT:
            raise UserError(f"{path}: written by a newer spectui (format {doc['format']}); upgrade spectui")
        chat = Chat(
            id=str(doc["id"]),
            title=str(doc["title"]),
            created=_time(doc["created"]),
            updated=_time(doc["updated"]),
            messages=[_message(m) for m in doc["messages"]],
            preset=str(doc.get("preset", "")),
            setup=doc.get("setup", {}),  # format 1 has none
        )
        if not isinstance(chat.setup, dict):
            raise ValueError(f"setup must be an object, got {chat.setup!r}")
        if not _ID.fullmatch(chat.id):
            raise ValueError(f"invalid id {chat.id!r}")
        if chat.id != path.stem:  # its journal is named after the file
            raise ValueError(f"its id {chat.id!r} is not its file name: name the file {chat.id}.json or fix the id")
    except (ValueError, KeyError, TypeError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError too
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise UserError(f"{path}: not a valid chat file ({what}); move or delete it") from e
    _replay(chat, path.with_suffix(".journal"))
    return chat


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


def _time(value) -> float:
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
    m = Message(
        role=d["role"],
        content=d["content"],
        segments=[(text, kind) for text, kind in d.get("segments", [])],
        stopped=d.get("stopped", False),
        stats=d.get("stats", {}),
        config=d.get("config", ""),
    )
    if m.role not in ROLES:
        raise ValueError(f"unknown role {m.role!r}")
    checks = (
        (m.content, str),
        (m.stopped, bool),
        (m.stats, dict),
        (m.config, str),
        *((part, str) for seg in m.segments for part in seg),
    )
    for value, kind in checks:
        if not isinstance(value, kind):
            raise ValueError(f"expected {kind.__name__}, got {value!r}")
    return m
