"""A one-line question in a modal (the name of a preset to save, a chat's new name, a file)."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class NameScreen(ModalScreen[str | None]):
    """Dismisses with the entered text, or None on Esc; text that `refuse` finds a reason against
    keeps it open with the reason shown, so the user can correct what they typed."""

    DEFAULT_CSS = """
    NameScreen {
        align: center middle;
    }
    #ask {
        width: 60;
        max-width: 100%;
        height: auto;
        padding: 1 2;
        background: $panel;
        border: round $primary;
    }
    #why {
        color: $error;
    }
    """

    BINDINGS = [Binding("escape", "dismiss(None)", "cancel")]

    def __init__(
        self,
        question: str,
        placeholder: str = "",
        value: str = "",
        refuse: Callable[[str], str | None] | None = None,
    ):
        super().__init__()
        self.question = question
        self.placeholder = placeholder
        self.value = value
        self.refuse = refuse

    def compose(self) -> ComposeResult:
        with Vertical(id="ask"):
            yield Label(self.question)
            yield Input(self.value, placeholder=self.placeholder)
            yield Label("", id="why")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if text and self.refuse and (why := self.refuse(text)):
            self.query_one("#why", Label).update(why)
            return
        self.dismiss(text or None)
