"""`spectui replay`'s app: a recorded trace in the chat's or the A/B view's screens, with
the user's theme, and no model loaded."""

from __future__ import annotations

from spectui.trace.format import Trace
from spectui.tui.screens.ab_replay import ABReplayScreen
from spectui.tui.screens.replay import ChatReplayScreen, ReplayScreen
from spectui.tui.themed import ThemedApp


class ReplayApp(ThemedApp):
    TITLE = "spectui replay"

    def __init__(self, trace: Trace, speed: float = 1.0, playing: bool = True, show_rejected: bool = True):
        super().__init__()
        screen = ABReplayScreen if trace.is_ab else ChatReplayScreen
        self.replay: ReplayScreen = screen(trace, speed, playing, show_rejected)

    def on_mount(self) -> None:
        self.apply_themes()

    def get_default_screen(self) -> ReplayScreen:
        return self.replay
