"""Chat history: one JSON file per chat, written atomically so a crash never leaves a
half-written chat behind, and a journal beside it for the answer being written.

Files live in `paths.chats_dir()`. A message keeps its answer text (`content`,
never rejected tokens) apart from its overlay (`segments`, which include the rejected
pieces), so exports and the next prompt use only what the model really said.

While an answer streams, the chat file is not rewritten: `Journal` appends what the
answer gained to `<id>.journal`, one JSON line per update, so a killed process loses at
most the update in flight. Reading a chat replays its journal; `save_chat` (a clean
save) folds it into the chat file and deletes it.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from spectui.config.paths import chats_dir, write_atomic
from spectui.engine.overlay import add_segments
from spectui.errors import UserError

FORMAT = 2  # the "format" field of chat files; bump when the layout changes (2: `setup`)
TITLE_CHARS = 60
ROLES = ("system", "user", "assistant")
_ID = re.compile(r"[A-Za-z0-9_-]+")
FENCE = re.compile(r"^ {0,3}(```|~~~)")


@dataclass
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str  # the answer text, never including rejected tokens
    segments: list[tuple[str, str]] = field(default_factory=list)  # overlay (text, kind), rejected included
    stopped: bool = False  # cut short (Esc, Ctrl+C, crash)
    stats: dict = field(default_factory=dict)  # TurnSummary.as_dict() of the turn, if any
    config: str = ""  # spec type / n-max label it was generated with


@dataclass
class Chat:
    id: str
    title: str
    created: float
    updated: float
    messages: list[Message]
    preset: str = ""
    setup: dict = field(default_factory=dict)  # Setup.values() it last ran with: resume restores them

    def to_markdown(self) -> str:
        """Markdown export: a heading per message, the content as written. Rejected
        draft text is never included (it lives only in `segments`). An answer stopped
        inside a code block gets its fence closed so the next heading stays a heading."""
        out = [f"# {self.title or 'Chat'}", ""]
        for m in self.messages:
            heading = f"## {m.role.capitalize()}"
            if m.config:
                heading += f" ({m.config})"
            body = m.content.rstrip("\n")
            if sum(1 for line in body.splitlines() if FENCE.match(line)) % 2:
                body += "\n```"
            out += [heading, "", body, ""]
            if m.stopped:
                out += ["*(stopped)*", ""]
        return "\n".join(out)


def make_title(messages: list[Message]) -> str:
    """The first user message on one line, shortened to TITLE_CHARS."""
    text = next((" ".join(m.content.split()) for m in messages if m.role == "user"), "")
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…"


def new_chat(preset: str = "") -> Chat:
    """An empty chat; its id sorts by creation time and names its file."""
    now = time.time()
    chat_id = time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + "-" + secrets.token_hex(3)
    return Chat(id=chat_id, title="", created=now, updated=now, messages=[], preset=preset)


def _path(chat_id: str) -> Path:
    if not _ID.fullmatch(chat_id):
        raise UserError(f"invalid chat id {chat_id!r}: use letters, digits, '-' and '_'")
    return chats_dir() / f"{chat_id}.json"


def _journal_path(chat_id: str) -> Path:
    return _path(chat_id).with_suffix(".journal")


def save_chat(chat: Chat) -> Path:
    """Write the chat atomically, then drop its journal (now in the file). Stamps `updated`
    and, while the title is empty, sets it from the first user message (so a title the
    user gave is kept)."""
    path = _path(chat.id)
    chat.updated = time.time()
    if not chat.title:
        chat.title = make_title(chat.messages)
    doc = {"format": FORMAT, **asdict(chat)}
    write_atomic(path, json.dumps(doc, ensure_ascii=False, indent=1))
    _journal_path(chat.id).unlink(missing_ok=True)
    return path


class Journal:
    """Appends what the chat's last message gained since the last append (or since this
    journal was made, right after a save) to the chat's journal."""

    def __init__(self, chat: Chat):
        self.chat = chat
        self._failed = False
        self._mark = self._where()

    def _where(self) -> tuple[int, int, int, int]:
        """(message index, content length, segment count, last segment's length)."""
        m = self.chat.messages[-1]
        return len(self.chat.messages) - 1, len(m.content), len(m.segments), len(m.segments[-1][0]) if m.segments else 0

    def append(self) -> None:
        """One line with the new text and overlay; a write failure is a UserError once,
        after which the journal stays quiet (the clean save at the end still runs)."""
        i, n_text, n_segments, n_last = self._mark
        if self._failed or i != len(self.chat.messages) - 1:
            return
        m = self.chat.messages[i]
        segments = list(m.segments[n_segments:])
        if n_segments and len(m.segments[n_segments - 1][0]) > n_last:  # the last one grew (merged)
            text, kind = m.segments[n_segments - 1]
            segments.insert(0, (text[n_last:], kind))
        if len(m.content) == n_text and not segments:
            return
        line = json.dumps({"i": i, "at": n_text, "text": m.content[n_text:], "segments": segments}, ensure_ascii=False)
        path = _journal_path(self.chat.id)
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(line + "\n")
        except OSError as e:
            self._failed = True
            raise UserError(f"cannot write {path}: {e.strerror or e}; the answer is saved when it ends") from e
        self._mark = self._where()


def _replay(chat: Chat) -> None:
    """Apply the chat's journal, if any. A line that does not continue its message (already
    folded in) is skipped; a broken line (cut by a kill) ends the replay."""
    try:
        lines = _journal_path(chat.id).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return
    for line in lines:
        try:
            r = json.loads(line)
            i, at, text = r["i"], r["at"], r["text"]
            segments = [(t, k) for t, k in r["segments"]]
            if not (
                isinstance(i, int)
                and 0 <= i < len(chat.messages)
                and isinstance(text, str)
                and all(isinstance(x, str) for seg in segments for x in seg)
            ):
                raise ValueError("not a journal line")
        except (ValueError, KeyError, TypeError):
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


def _read(path: Path) -> Chat:
    """Load one chat file; anything wrong with it is a UserError naming the file."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
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
        if not _ID.fullmatch(chat.id):  # it could be neither listed by name nor opened
            raise ValueError(f"invalid id {chat.id!r}")
        if chat.id != path.stem:  # opening it by its id would read another file
            raise ValueError(f"its id {chat.id!r} is not its file name: name the file {chat.id}.json or fix the id")
    except OSError as e:
        raise UserError(f"cannot read chat {path}: {e.strerror or e}") from e
    except (ValueError, KeyError, TypeError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError too
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise UserError(f"{path}: not a valid chat file ({what}); move or delete it") from e
    _replay(chat)
    return chat


def load_chat(chat_id: str) -> Chat:
    path = _path(chat_id)
    if not path.exists():
        raise UserError(f"no chat '{chat_id}' in {chats_dir()}")
    return _read(path)


def list_chats() -> tuple[list[Chat], list[tuple[Path, str]]]:
    """All readable chats, most recently updated first, and (file, why) for each file
    that cannot be read, so a picker can list it as unreadable."""
    d = chats_dir()
    chats: list[Chat] = []
    problems: list[tuple[Path, str]] = []
    for path in sorted(d.glob("*.json")) if d.is_dir() else []:
        try:
            chats.append(_read(path))
        except UserError as e:
            problems.append((path, str(e)))
    chats.sort(key=lambda c: (c.updated, c.created, c.id), reverse=True)
    return chats, problems


def latest_chat() -> Chat | None:
    """The most recently updated readable chat, if any (corrupt files are ignored)."""
    chats, _ = list_chats()
    return chats[0] if chats else None


def export_markdown(chat: Chat, path: Path) -> Path:
    """Write chat.to_markdown() to `path` atomically."""
    return write_atomic(Path(path).expanduser(), chat.to_markdown())


def rename_chat(chat_id: str, title: str) -> Chat:
    """Give a saved chat a title of its own (kept from then on); the chat as saved."""
    title = " ".join(title.split())
    if not title:
        raise UserError("a chat's name cannot be empty")
    chat = load_chat(chat_id)
    chat.title = title
    save_chat(chat)
    return chat


def delete_chat(chat_id: str) -> None:
    path = _path(chat_id)
    try:
        path.unlink()
    except FileNotFoundError:
        raise UserError(f"no chat '{chat_id}' in {chats_dir()}") from None
    except OSError as e:
        raise UserError(f"cannot delete {path}: {e.strerror or e}") from e
