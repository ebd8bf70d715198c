"""Round details: the last answer's rounds, one row each: what drafted and why (auto's
note), drafted / accepted / rejected, the timings (spectui/chat/rounds.py); under the table
the highlighted round in words. What the overlay colours summarise. Enter on a row
dismisses with that round's index: the chat inspects its tokens."""

from __future__ import annotations

from itertools import accumulate

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from spectui.chat.rounds import COLUMNS, cells, detail
from spectui.engine.events import Round
from spectui.words import plural

SHOWN = 500  # the last rounds listed; a long answer's first rounds are summarised away


class RoundsTable(DataTable):
    """← / → move the view a column at a time (a row cursor's table scrolls one cell), the
    round's number kept in sight."""

    def action_cursor_right(self) -> None:
        self._step(1)

    def action_cursor_left(self) -> None:
        self._step(-1)

    def _step(self, direction: int) -> None:
        widths = [c.get_render_width(self) for c in self.ordered_columns]
        fixed = sum(widths[: self.fixed_columns])
        starts = [x - fixed for x in accumulate(widths, initial=0)][self.fixed_columns : len(widths)]
        x = round(self.scroll_x)
        if direction > 0:
            to = next((s for s in starts if s > x), self.max_scroll_x)
        else:
            to = next((s for s in reversed(starts) if s < x), 0)
        self.scroll_to(x=min(to, self.max_scroll_x), animate=False)


class RoundsScreen(ModalScreen[int | None]):
    DEFAULT_CSS = """
    RoundsScreen {
        align: center middle;
    }
    #rounds {
        width: 95%;
        height: 85%;
        padding: 0 1;
        background: $panel;
        border: round $primary;
    }
    #rounds DataTable {
        height: 1fr;
        min-height: 4;
        scrollbar-size: 1 1;
    }
    #rounds Label {
        width: 1fr;
    }
    #rounds .hint {
        color: $text-muted;
    }
    #round-detail {
        height: auto;  /* whole, however long the draft: the table gives up its rows */
        border-top: solid $primary 50%;
    }
    """
    BINDINGS = [Binding("escape,q,f11", "dismiss", "close")]

    def __init__(self, rounds: list[Round], config: str):
        super().__init__()
        self.rounds = rounds[-SHOWN:]
        self.skipped = len(rounds) - len(self.rounds)
        self.config = config

    def compose(self) -> ComposeResult:
        with Vertical(id="rounds"):
            yield Label(
                Content.assemble(("Rounds of the last answer", "bold $primary"), ("  " + self.config, "$text-muted"))
            )
            yield RoundsTable(cursor_type="row", zebra_stripes=True, fixed_columns=1)
            yield Static(id="round-detail")
            first = f"the first {plural(self.skipped, 'round')} are not listed · " if self.skipped else ""
            yield Label(
                f"{first}auto's note says why it chose each draft · ←/→ a column · enter inspects a "
                "round's tokens · esc closes",
                classes="hint",
            )

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        table.add_rows(cells(r) for r in self.rounds)
        table.move_cursor(row=len(self.rounds) - 1)
        table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.query_one("#round-detail", Static).update(
            Content(detail(self.rounds[event.cursor_row]))
        )  # no markup: the text is the model's

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.dismiss(self.rounds[event.cursor_row].index)
