"""Round details: the last answer's rounds, one row each: what drafted and why (auto's
note), drafted / accepted / rejected, the timings. What the overlay colours summarise.
Enter on a row dismisses with that round's index: the chat inspects its tokens."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label

from spectui.engine.events import Round
from spectui.engine.overlay import MARKS
from spectui.words import plural

SHOWN = 500  # the last rounds listed; a long answer's first rounds are summarised away

# The columns of fixed width first, so that 80 columns show them all; the rejected text and
# auto's note, as long as they are, follow (← → scroll to them).
COLUMNS = ("#", "drafted by", "drafted", "accepted", "draft ms", "verify ms", "tokens", "rejected", "note")


def cells(r: Round) -> tuple:
    return (
        r.index + 1,
        r.spec_type or "-",
        r.n_drafted,
        r.n_accepted,
        f"{1000 * r.t_draft:.1f}",
        f"{1000 * r.t_verify:.1f}",
        len(r.tokens),
        r.rejected_text.translate(MARKS),  # newlines as the overlay marks them
        r.note,
    )


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
        scrollbar-size: 1 1;
    }
    #rounds Label {
        width: 1fr;
    }
    #rounds .hint {
        color: $text-muted;
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
            yield DataTable(cursor_type="row", zebra_stripes=True)
            first = f"the first {plural(self.skipped, 'round')} are not listed · " if self.skipped else ""
            yield Label(
                f"{first}auto's note says why it chose each draft · ←/→ scroll · enter inspects a round's "
                "tokens · esc closes",
                classes="hint",
            )

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        table.add_rows(cells(r) for r in self.rounds)
        table.move_cursor(row=len(self.rounds) - 1)
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.dismiss(self.rounds[event.cursor_row].index)
