"""Messages that workers and screens post up to the app or to their screen.

Workers run in threads and never touch widgets: they post these, and the handlers (on
the app's thread) hand them to the chat's parts, or to the A/B run, which own the state.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from spectui.chat.updates import Update
from spectui.config.setup import Setup
from spectui.engine.events import Event
from spectui.engine.interface import ChatSession
from spectui.spec_config import SpecConfig


@dataclass
class ChatUpdate(Message):
    """One update of the chat's parts (chat/updates.py), posted to the chat screen: it shows
    what it renders and lets the rest (notices, loading, measuring) bubble up to the app."""

    update: Update


@dataclass
class SessionLoading(Message):
    status: str


@dataclass
class SessionLoaded(Message):
    session: ChatSession
    setup: Setup
    environment: dict  # launch.environment.collect(): what a trace records of models and machine


@dataclass
class SessionFailed(Message):
    error: str


@dataclass
class PlanMeasured(Message):
    error: str | None  # None: `spectui plan` cached its measurement


@dataclass
class PlanProgress(Message):
    step: str  # a line `spectui plan` wrote on stderr


@dataclass
class MemoryMeasured(Message):
    text: str


@dataclass
class TurnEvents(Message):
    """Engine events for the current turn, in order."""

    events: list[Event]


@dataclass
class TurnFailed(Message):
    """The turn could not start (the engine raised before its first event)."""

    error: str


@dataclass
class SideStarted(Message, bubble=False):
    """An A/B run starts a side (index into ab.NAMES); the TurnEvents that follow are its."""

    side: int
    spec: SpecConfig


class RunEnded(Message, bubble=False):
    """Both A/B runs are over (or the run was stopped); the chat's configuration is back."""
