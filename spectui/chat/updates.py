"""What the chat's parts tell its screen: each update names one thing to show, and carries it.

The parts emit them in order on the UI's thread; the app posts each to the chat screen as a
Textual message, whose queue keeps their order. Tests collect them in a list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from spectui.chat.planning import PlanRun
from spectui.chat.streaming import TurnJob
from spectui.chat.turn import Growth, LiveTurn
from spectui.config.setup import Setup
from spectui.store.chat_types import Chat, Message

Severity = Literal["information", "warning", "error"]
Doing = Literal["", "generating", "stopping", "editing", "loading", "failed", "measuring"]


@dataclass(frozen=True)
class Notice:
    text: str
    title: str = ""
    severity: Severity = "information"
    timeout: float | None = None


@dataclass(frozen=True)
class StatusLine:
    """The line under the transcript: what the chat is doing ("" hides it); the screen styles it."""

    doing: Doing = ""
    text: str = ""  # loading: what loads now; failed: why the models did not load; generating: a long read
    later: int = 0  # editing: the messages after the one edited, which a resend replaces


@dataclass(frozen=True)
class ChatShown:
    """Another chat (or a new, empty one) replaces the transcript."""

    chat: Chat


@dataclass(frozen=True)
class MessageAdded:
    message: Message


@dataclass(frozen=True)
class MessagesRemoved:
    ids: frozenset[int]  # id() of each history message removed


@dataclass(frozen=True)
class AnswerStarted:
    turn: LiveTurn


@dataclass(frozen=True)
class AnswerUpdated:
    """A batch of the streaming answer's events: what it added, for the answer's widget."""

    growth: Growth
    started: bool  # the batch holds the turn's start: the panel takes its live layout now


@dataclass(frozen=True)
class AnswerEnded:
    removed: bool  # the answer failed before any text and left the chat


@dataclass(frozen=True)
class SwitchFailed:
    """Other models did not load: the loaded pair stays (the screen names it)."""

    error: str


@dataclass(frozen=True)
class ConfigShown:
    """The session, its speculation or the setup changed: the header and the panel."""


@dataclass(frozen=True)
class PanelChanged:
    """The panel's numbers changed (a finished answer, a new chat, a baseline)."""


@dataclass(frozen=True)
class OutboxChanged:
    texts: tuple[str, ...]  # the messages queued to send, oldest first
    until: str = "the answer ends"  # what they wait for: the answer, the models' load or f6's measurement


@dataclass(frozen=True)
class ComposeText:
    """Put this text in the input box, replacing what it holds ("" clears it)."""

    text: str


@dataclass(frozen=True)
class Generate:
    """Start a worker thread on this job (chat/streaming.py)."""

    job: TurnJob


@dataclass(frozen=True)
class Load:
    """Load this setup in a worker (chat/loading.py); `models` puts it on another pair;
    `fitted`: a setup known to fit, so a pair with its files and memory settings is not projected."""

    setup: Setup
    models: tuple[str, str | None] | None = field(default=None)
    fitted: Setup | None = field(default=None)


@dataclass(frozen=True)
class Measure:
    """Wait for this `spectui plan` in a worker (chat/planning.py)."""

    run: PlanRun


Update = (
    Notice
    | StatusLine
    | ChatShown
    | MessageAdded
    | MessagesRemoved
    | AnswerStarted
    | AnswerUpdated
    | AnswerEnded
    | SwitchFailed
    | ConfigShown
    | PanelChanged
    | OutboxChanged
    | ComposeText
    | Generate
    | Load
    | Measure
)
