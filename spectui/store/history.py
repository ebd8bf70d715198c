"""Chats and their messages in memory, their titles and their Markdown export (they are
stored by chat_store.py).

A message keeps its answer text (`content`, never rejected tokens) apart from its overlay
(`segments`, which include the rejected pieces), so exports and the next prompt use only
what the model really said.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from spectui.config.paths import write_atomic

TITLE_CHARS = 60
ROLES = ("system", "user", "assistant")
FENCE = re.compile(r"^ {0,3}(```|~~~)")


@dataclass
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str  # the answer text, never including rejected tokens
    segments: list[tuple[str, str]] = field(default_factory=list)  # overlay (text, kind), rejected included
    stopped: bool = False  # cut short (Esc, Ctrl+C, crash)
    stats: dict = field(default_factory=dict)  # TurnSummary.as_dict() of the turn, if any
    config: str = ""  # spec type / n-max label it was generated with
    row: int | None = field(default=None, compare=False, repr=False)  # its row in the store, once saved


# What a message stores, in order, each with its kind: every field but its row (a column each
# in the store, a key in an unsaved file). A field added with a default is stored with no other change.
STORED: dict[str, type] = {name: type(value) for name, value in vars(Message("", "")).items() if name != "row"}


@dataclass
class Chat:
    id: str
    title: str
    created: float
    updated: float
    messages: list[Message]
    preset: str = ""
    setup: dict = field(default_factory=dict)  # Setup.values() it last ran with: resume restores them
    earlier: int = 0  # stored messages before `messages` (not read: a long chat opens at its end)
    dropped: list[int] = field(default_factory=list)  # rows of messages removed, deleted at the next save
    damaged: str = field(default="", compare=False)  # what the store could not read of it, said when it opens
    # A title taken from a first message that a cut removed: the next save stores the new
    # first message's instead, unless the stored title is no longer this one (a rename).
    replaced_title: str = ""

    def cut(self, start: int) -> list[Message]:
        """Remove the messages from `start` on (an edit, a regeneration); the store forgets
        them at the next save, and a title taken from the first message follows its edit."""
        first_goes = self.earlier == 0 and not make_title(self.messages[:start])  # no user message before the cut
        if first_goes and self.title and self.title == make_title(self.messages):
            self.replaced_title, self.title = self.title, ""
        gone = self.messages[start:]
        del self.messages[start:]
        self.dropped += [m.row for m in gone if m.row is not None]
        return gone

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
    """An empty chat; its id sorts by creation time."""
    now = time.time()
    chat_id = time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + "-" + secrets.token_hex(3)
    return Chat(id=chat_id, title="", created=now, updated=now, messages=[], preset=preset)


def export_markdown(chat: Chat, path: Path) -> Path:
    """Write chat.to_markdown() to `path` atomically."""
    return write_atomic(Path(path).expanduser(), chat.to_markdown())
