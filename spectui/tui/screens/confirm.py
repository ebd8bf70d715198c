"""A yes-or-no question in a modal: y answers yes, any other key no, so letters typed on
without looking never confirm."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmScreen {
        align: center middle;
    }
    #confirm {
        width: 60;
        max-width: 100%;
        height: auto;
        padding: 1 2;
        background: $panel;
        border: round $error;
    }
    #confirm Label {
        width: 100%;  /* a long chat title wraps in the box instead of running past its edge */
    }
    #confirm .hint {
        color: $text-muted;
    }
    """

    def __init__(self, question: Content, yes: str):
        super().__init__()
        self.question = question
        self.yes = yes  # what y does, e.g. "deletes it"

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            yield Label(self.question)
            yield Label(f"y {self.yes} · any other key keeps it", classes="hint")

    def on_key(self, event: events.Key) -> None:
        event.stop()
        self.dismiss(event.key == "y")
