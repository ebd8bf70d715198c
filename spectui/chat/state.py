"""What the chat's parts share: the session and setup in force, the chat shown, the answer
streaming now, what the plan knows of the loaded pair, and the one channel to the screen;
with the checks each part makes before it acts, and the A/B view's lock on the session (one
flag that every other part must respect). What one part alone reads lives on that part."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from spectui.chat.turn import LiveTurn
from spectui.chat.updates import Notice, PanelChanged, Severity, Update
from spectui.config.setup import Setup
from spectui.engine.interface import ChatSession, SessionStatus
from spectui.plan.curve import Curve
from spectui.store import chat_types


@dataclass(eq=False)
class ChatState:
    setup: Setup
    emit: Callable[[Update], object]
    chat: chat_types.Chat
    session: ChatSession | None = None
    environment: dict = field(default_factory=dict)  # what traces record of the session's models and machine
    loading: bool = False  # a load runs: messages queue until it ends
    measuring: bool = False  # `spectui plan` runs (f6): messages queue, so no turn skews its timings
    comparing: bool = False  # the A/B view runs the session: the chat and its configuration wait
    curve: Curve | None = None  # `spectui plan`'s cost curve for the loaded pair, where cached
    plannable: bool = False  # the loaded pair is a local one: `spectui plan` can measure it
    memory: str = ""  # the last memory reading, shown in the panel and kept in traces
    live: LiveTurn | None = None  # the answer whose worker runs: a configuration change is told to it

    def notify(
        self, text: str, title: str = "", severity: Severity = "information", timeout: float | None = None
    ) -> None:
        self.emit(Notice(text, title, severity, timeout))

    def status(self) -> SessionStatus | None:
        return self.session.status() if self.session else None

    def need_session(self) -> ChatSession | None:
        """The session; None, with a notice, while the models load."""
        if self.session is None:
            self.notify("The models are still loading.", severity="warning")
        return self.session

    @property
    def generating(self) -> bool:
        """A turn's worker runs: from the turn's start to its end or failure, even when its chat
        was closed meanwhile (a second turn on the session must wait for it)."""
        return self.live is not None

    def idle(self, doing: str) -> bool:
        """Nothing runs that `doing` must wait for; else say what, and False."""
        if self.generating:
            self.notify(f"Stop the answer first (esc), then {doing}.", severity="warning")
        elif self.comparing:
            self.notify(f"Close the A/B view first (esc), then {doing}.", severity="warning")
        elif self.loading:
            self.notify(f"The models are loading: {doing} when they are ready.", severity="warning")
        elif self.measuring:
            self.notify(f"This machine is being measured (spectui plan): {doing} when it ends.", severity="warning")
        return not (self.generating or self.comparing or self.loading or self.measuring)

    def start_compare(self) -> ChatSession | None:
        """The session for the A/B view, which is its own until `end_compare`; None (with a
        notice) while something else needs it."""
        if self.comparing or (session := self.need_session()) is None or not self.idle("compare"):
            return None
        self.comparing = True
        return session

    def end_compare(self) -> None:
        self.comparing = False
        self.emit(PanelChanged())
