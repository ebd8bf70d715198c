"""The `?` help screen: every key from the command table, and the overlay legend."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from spectui.tui.commands import COMMANDS, OTHER_KEYS, key_display
from spectui.tui.overlay_view import legend_lines

KEY_WIDTH = 20


def help_content() -> Content:
    def row(keys: str, title: str, help_text: str = "") -> Content:
        return Content.assemble((f"{keys:<{KEY_WIDTH}}", "bold $accent"), title,
                                (f"  {help_text}" if help_text else "", "$text-muted"))

    lines = [Content.styled("Keys", "bold $primary")]
    lines += [row(key_display(k), text) for k, text in OTHER_KEYS]
    lines += [row(key_display(c.keys) if c.keys else "palette", c.title, c.help) for c in COMMANDS]
    lines += [Content(""), Content.styled("Overlay", "bold $primary")]
    lines += legend_lines()
    lines += [Content(""), Content.styled(
        "Changes to spec type and n-max apply at the next round, even mid-answer.", "$text-muted")]
    return Content("\n").join(lines)


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,f1,question_mark,q", "dismiss", "close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(help_content())
