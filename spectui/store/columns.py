"""The columns of a stored chat and message as Python values and back: the JSON columns, the
times, and, for a row that cannot be read whole, what was lost, said in one line.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

from spectui.store import chat_import
from spectui.store.chat_types import STORED, AnswerConfig, Chat, Message

# An answer's configuration, a column per field of AnswerConfig (its tuples as JSON): NULL
# where not known, all NULL for a message without one. A new field is a new migration.
CONFIG_COLUMNS = tuple(f.name for f in fields(AnswerConfig))
# A message's columns, in order: its fields, then its configuration's.
MESSAGE_COLUMNS = (*STORED, *CONFIG_COLUMNS)


def to_json(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def stored(m: Message) -> tuple:
    """The message's columns, in MESSAGE_COLUMNS' order: a list or dict as JSON, a flag as 0 or 1."""
    return (*(_column(getattr(m, name)) for name in STORED), *config_row(m.config))


def config_row(config: AnswerConfig | None) -> tuple:
    """The configuration's columns, in CONFIG_COLUMNS' order."""
    if config is None:
        return (None,) * len(CONFIG_COLUMNS)
    return tuple(_column(v) for v in config.as_dict().values())


def _column(value):
    if isinstance(value, (list, dict)):
        return to_json(value)
    return int(value) if isinstance(value, bool) else value


def message(row, damaged: list[str]) -> Message:
    """A stored message; a column that cannot be read is left empty and named in `damaged`
    (the overlay last: a damaged one falls back to the message's text)."""
    i, *values = row
    read = dict(zip(MESSAGE_COLUMNS, values, strict=True))
    m = Message("", "")
    for name, kind in STORED.items():
        if name != "segments":
            value = read[name]
            setattr(m, name, parsed(value, kind, damaged, name) if kind in (list, dict) else kind(value))
    m.segments = _segments(read["segments"], m, damaged)
    m.config = config({name: read[name] for name in CONFIG_COLUMNS}, damaged)
    m.row = i
    return m


def config(values: dict, damaged: list[str]) -> AnswerConfig | None:
    """A message's configuration from its columns (None for a message without one); one that
    cannot be read is None and named in `damaged`."""
    if values["spec_types"] is None:
        return None
    lists = {name: parsed(values[name], list, damaged, "config") for name in ("spec_types", "spec_changes")}
    try:
        return AnswerConfig.from_dict(values | lists)
    except ValueError:
        damaged.append("config")
        return None


def _segments(text, m: Message, damaged: list[str]) -> list[tuple[str, str]]:
    lost: list[str] = []
    pieces = parsed(text, list, lost, "segments")
    if not lost and all(isinstance(s, list) and len(s) == 2 and all(isinstance(x, str) for x in s) for s in pieces):
        return [(t, k) for t, k in pieces]
    damaged.append("segments")
    return [(m.content, "target")] if m.role == "assistant" and m.content else []  # its text, plain


def parsed(text, kind: type, damaged: list[str], what: str):
    """A JSON column's value, or an empty `kind` (with `what` in `damaged`) when it is not one."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        value = None
    if not isinstance(value, kind):
        damaged.append(what)
        return kind()
    return value


DAMAGE = {  # by field
    "segments": "the answers' draft overlay (their text shows plain)",
    "stats": "the answers' statistics",
    "setup": "its settings (it runs on the current ones)",
    "config": "the configuration its answers were generated with",
}


def when(value) -> float:
    """A stored time as seconds; 0 when it is not one (NaN, infinite, text, beyond the calendar)."""
    try:
        return chat_import.seconds(value)
    except (ValueError, TypeError):
        return 0.0


def damage_note(chat: Chat, damaged: list[str], path: Path) -> str:
    """What of a chat could not be read, in one line (empty when all could)."""
    if not damaged:
        return ""
    parts = [DAMAGE.get(d, f"the messages' {d}") for d in sorted(set(damaged), key=damaged.index)]
    return f"Part of “{chat.title or chat.id}” could not be read in {path}: {'; '.join(parts)}."
