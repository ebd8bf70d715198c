"""The `?` help screen: every key from the command table, and the overlay legend."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from spectui.tui.commands import COMMANDS, OTHER_KEYS, key_display
from spectui.tui.widgets.overlay import legend_lines


class HelpScreen(ModalScreen):
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    #help {
        width: 110;
        max-width: 95%;
        height: 80%;
        padding: 1 2;
        background: $panel;
        border: round $primary;
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
    }
    #help .heading {
        margin: 1 0 0 0;
    }
    #keys {
        grid-size: 3;
        grid-columns: 14 34 1fr;
        grid-rows: auto;
        grid-gutter: 0 1;
        height: auto;
    }
    #keys Label {
        width: 1fr;
    }
    #keys .key {
        color: $accent;
        text-style: bold;
    }
    #keys .about {
        color: $text-muted;
    }
    """
    BINDINGS = [Binding("escape,f1,question_mark,q", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        rows = [(key_display(k), title, help_text) for k, title, help_text in OTHER_KEYS]
        rows += [(key_display(c.keys) if c.keys else "palette", c.title, c.help) for c in COMMANDS]
        with VerticalScroll(id="help"):
            yield Static(Content.styled("Keys", "bold $primary"))
            with Grid(id="keys"):
                for keys, title, help_text in rows:
                    yield Label(keys, classes="key")
                    yield Label(title, classes="title")
                    yield Label(help_text, classes="about")
            yield Static(Content.styled("Overlay", "bold $primary"), classes="heading")
            yield Static(Content("\n").join(legend_lines()))
            yield Static(
                Content.styled(
                    "Spec type and n-max changes apply at the next round, even mid-answer; in the settings "
                    "(f10), the draft settings too, the others from the next answer. A message sent while an "
                    "answer streams waits above the box and goes when the answer ends. "
                    "Esc, q or ? closes this screen.",
                    "$text-muted",
                ),
                classes="heading",
            )
