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
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, dataclass_transform

from spectui.config.paths import write_atomic
from spectui.config.setup import PER_ANSWER, PER_ANSWER_SPEC
from spectui.spec_config import SpecConfig, config_label, uses_n_max

TITLE_CHARS = 60
ROLES = ("system", "user", "assistant")
FENCE = re.compile(r"^ {0,3}(```|~~~)")


# every setting an answer keeps, as its field: the speculation's (by SpecConfig's names), then the sampling
KEPT = PER_ANSWER_SPEC + PER_ANSWER


@dataclass_transform(frozen_default=True)
def _with_per_answer(cls):
    """`cls` as a frozen dataclass with a field per KEPT record (None: not known) between its
    first field and its last: each a column of the stored answers, which a migration adds
    (store/migrations.py)."""
    first, *_, last = cls.__annotations__.items()
    kept = {o.name: f"{o.type.__name__} | None" for o in KEPT}
    cls.__annotations__ = dict([first]) | kept | dict([last])
    for name in kept:
        setattr(cls, name, None)
    return dataclass(frozen=True)(cls)


@_with_per_answer
class AnswerConfig:
    """What an answer was generated with, as data: the plan selects answers by it, and its
    label is made from it where it is shown. None: not known (an answer stored before these
    were kept has its spec types and n-max only). Its settings' fields come from the records
    (KEPT); the spec types and their switches are the answer's own history."""

    spec_types: tuple[str, ...]  # llama.cpp's --spec-type, in priority order
    # The speculation switched during the answer: (spec types, n-max) in force from then on.
    spec_changes: tuple[tuple[tuple[str, ...], int | None], ...] = ()

    if TYPE_CHECKING:  # the KEPT fields are made at import, from records the checker cannot read

        def __init__(self, spec_types: tuple[str, ...], *kept: Any, **named: Any) -> None: ...

        def __getattr__(self, name: str) -> Any: ...

    @classmethod
    def of(cls, spec: SpecConfig, sampling: dict[str, Any] | None = None) -> AnswerConfig:
        """An answer's configuration as it starts; its sampling (Setup.per_answer()) where the
        caller knows it."""
        return cls(spec.types, **{o.name: getattr(spec, o.name) for o in PER_ANSWER_SPEC}, **(sampling or {}))

    def switched(self, types: tuple[str, ...], n_max: int) -> AnswerConfig:
        """This one with the speculation a round ran with, appended when it changed."""
        last = self.spec_changes[-1] if self.spec_changes else (self.spec_types, self.draft_n_max)
        if last == (types, n_max) or (last[0] == types and not uses_n_max(types)):
            return self
        return replace(self, spec_changes=(*self.spec_changes, (types, n_max)))

    @property
    def label(self) -> str:
        """How it is shown: "draft-simple n-max 3", "ngram-mod", "a → b" after a switch."""
        steps = ((self.spec_types, self.draft_n_max), *self.spec_changes)
        return " → ".join(config_label(types, n) for types, n in steps)

    def as_dict(self) -> dict:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: dict) -> AnswerConfig:
        """The inverse of as_dict; ValueError for a value of another kind (a row another version wrote)."""
        types = _types(d.get("spec_types"))
        changes = d.get("spec_changes") or []
        if not isinstance(changes, list) or not all(isinstance(c, list) and len(c) == 2 for c in changes):
            raise ValueError(f"spec changes must be [types, n-max] pairs, got {changes!r}")
        known = {f.name: d.get(f.name) for f in fields(cls) if f.name not in ("spec_types", "spec_changes")}
        known = {name: _known(name, value) for name, value in known.items()}
        steps = tuple((_types(t), _n_max(n)) for t, n in changes)
        return cls(types, **known, spec_changes=steps)


KINDS = {o.name: o.type for o in KEPT}  # each field's values


def _known(name: str, value):
    """A kept field's stored value as its kind (a switch's 0 or 1 column as a bool), or a ValueError."""
    kind = KINDS[name]
    if kind is bool and type(value) is int and value in (0, 1):
        return bool(value)
    want = (int, float) if kind is float else (kind,)
    if value is not None and (isinstance(value, bool) != (kind is bool) or not isinstance(value, want)):
        raise ValueError(f"{name} must be a {want[-1].__name__}, got {value!r}")
    return value


def _plain(value):
    """A tuple as a list, nested: the JSON a column or a file holds."""
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def _types(value) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        raise ValueError(f"spec types must be a list of names, got {value!r}")
    return tuple(value)


def _n_max(value) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"an n-max must be a whole number, got {value!r}")
    return value


@dataclass
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str  # the answer text, never including rejected tokens
    segments: list[tuple[str, str]] = field(default_factory=list)  # overlay (text, kind), rejected included
    stopped: bool = False  # cut short (Esc, Ctrl+C, crash)
    stats: dict = field(default_factory=dict)  # TurnSummary.as_dict() of the turn, if any
    config: AnswerConfig | None = None  # what an answer was generated with
    row: int | None = field(default=None, compare=False, repr=False)  # its row in the store, once saved

    @property
    def config_label(self) -> str:
        """Its configuration as shown ("" for a message without one)."""
        return self.config.label if self.config else ""


# What a message stores, in order, each with its kind: every field but its row and its
# configuration (a column each in the store, a key in an unsaved file; the configuration's
# fields are columns of their own, columns.py). A field added with a default is stored with no other change.
STORED: dict[str, type] = {
    name: type(value) for name, value in vars(Message("", "")).items() if name not in ("row", "config")
}


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
                heading += f" ({m.config_label})"
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
