"""The message box: a TextArea where Enter sends and ctrl+j adds a line.

Enter posts the text and leaves it in the box: the screen clears it once the message is
sent or queued, so text typed at a moment the chat cannot take it is never lost. ↑ in the
empty box asks to edit the previous message (as in most chat apps); in an empty chat, a
starter's key picks that starter.

Most terminals report Shift+Enter as plain Enter, so the newline key must be one they
do tell apart: ctrl+j (a line feed). Shift+Enter still works where the terminal speaks
the kitty keyboard protocol.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

from spectui.chat.starters import BY_KEY
from spectui.tui.widgets.keys import run_own_binding


class ChatInput(TextArea):
    DEFAULT_CSS = """
    ChatInput {
        height: auto;
        min-height: 3;
        max-height: 10;
        border: round $primary 50%;
        padding: 0 1;
    }
    ChatInput:focus {
        border: round $primary;
    }
    """
    BINDINGS = [Binding("ctrl+j,shift+enter", "newline", "newline")]

    @dataclass
    class Submitted(Message):
        text: str

    class EditPrevious(Message):
        """↑ in the empty box: edit the last queued or sent message."""

    @dataclass
    class StarterChosen(Message):
        """A starter's key in the empty box of an empty chat (spectui/chat/starters.py)."""

        key: str

    def __init__(self, **kwargs):
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)
        self.starters = False  # set by the screen while the chat is empty: its keys pick a starter

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            if self.text.strip():
                self.post_message(self.Submitted(self.text))
        elif event.key == "up" and not self.text:
            event.stop()
            event.prevent_default()
            self.post_message(self.EditPrevious())
        elif self.starters and not self.text and event.character in BY_KEY:
            event.stop()
            event.prevent_default()
            self.post_message(self.StarterChosen(event.character))
        elif event.character == "?" and not self.text:
            # "?" on an empty box opens the help instead of starting a message with it.
            event.stop()
            event.prevent_default()
            await self.app.run_action("help")
        else:
            await run_own_binding(self, event)  # ctrl+j, backspace, the arrows: in the order typed

    def action_newline(self) -> None:
        self.insert("\n")
