"""One side of an A/B view (live or replayed): its pickers, its answer with the overlay,
its numbers."""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.validation import Integer
from textual.widgets import Input, Label, Select

from spectui.chat.turn import LiveTurn
from spectui.llama.spec_config import N_MAX_LIMIT, SpecConfig
from spectui.tui.widgets.message import AssistantMessage
from spectui.tui.widgets.stats_panel import CompactStats

PANEL_EVERY_S = 1.0  # a streaming answer's numbers (the chat's panel, a side's) redraw this often
# The A/B screens' size classes: below 100 columns the sides stack, below 30 rows they go compact.
HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]


class Sides(Horizontal):
    """The two sides of an A/B view: side by side, stacked on a narrow screen, and with
    one-line pickers and no frames on a short one, so both answers keep room to show. Its
    stylesheet also frames the verdict under them, in both A/B screens."""

    SCOPED_CSS = False  # the rules follow the screen's size classes
    DEFAULT_CSS = """
    Sides {
        height: 1fr;
    }
    .-narrow Sides {
        layout: vertical;
    }
    .-narrow Sides SidePane {
        width: 1fr;
        height: 1fr;
    }
    .-short Sides SidePane .answers, .-short Sides SidePane SelectCurrent, .-short Sides SidePane .picker Input {
        border: none;
    }
    .-short Sides SidePane .picker Input {
        height: 1;
        padding: 0 1;
    }
    .-short Sides SidePane .side-name {
        padding: 0 1 0 0;
    }
    #ab-verdict {
        height: auto;
        padding: 0 1;
        border: round $accent 50%;
    }
    .-short #ab-verdict {
        max-height: 6;
    }
    """


class SidePane(Vertical):
    """One configuration: its pickers, its answer with the overlay, its numbers."""

    DEFAULT_CSS = """
    SidePane {
        width: 1fr;
        padding: 0 1;
    }
    SidePane .picker {
        height: auto;
    }
    SidePane .side-name {
        width: 3;
        padding: 1 1 0 0;
        color: $accent;
        text-style: bold;
    }
    SidePane Select {
        width: 1fr;
    }
    SidePane .picker Input {
        width: 10;
    }
    SidePane .answers {
        height: 1fr;
        border: round $primary 40%;
        scrollbar-size-vertical: 1;
    }
    SidePane AssistantMessage {
        margin: 0;
    }
    """

    def __init__(self, name: str, types: tuple[str, ...], spec_type: str, n_max: int, show_rejected: bool):
        super().__init__(id=f"side-{name.lower()}", classes="side")
        self.side_name = name
        self.types = types
        self.spec_type = spec_type
        self.n_max = n_max
        self.show_rejected = show_rejected
        self.turn: LiveTurn | None = None
        self.answer: AssistantMessage | None = None
        self._last_panel = 0.0

    def compose(self) -> ComposeResult:
        with Horizontal(classes="picker"):
            yield Label(self.side_name, classes="side-name")
            yield Select(
                [(t, t) for t in self.types],
                value=self.spec_type,
                allow_blank=False,
                id=f"type-{self.side_name.lower()}",
            )
            yield Input(
                str(self.n_max),
                type="integer",
                validators=[Integer(1, N_MAX_LIMIT)],
                id=f"nmax-{self.side_name.lower()}",
                tooltip=f"draft n-max, 1 to {N_MAX_LIMIT}",
            )
        yield VerticalScroll(classes="answers")
        yield CompactStats(classes="side-stats")

    def spec(self, base: SpecConfig) -> SpecConfig | str:
        """The chosen configuration (the app's other settings kept), or why it is not valid."""
        n_max = self.query_one(Input).value.strip()
        checked = self.query_one(Input).validate(n_max)
        if checked is not None and not checked.is_valid:
            return f"{self.side_name}: draft n-max must be a whole number from 1 to {N_MAX_LIMIT}, not '{n_max}'"
        return base.with_types(self.query_one(Select).value).replace(draft_n_max=int(n_max))

    async def clear(self) -> None:
        self.turn, self.answer = None, None
        await self.query_one(".answers").remove_children()
        self.refresh_stats()

    async def start(self, turn: LiveTurn) -> None:
        self.turn = turn
        self.answer = AssistantMessage(self.turn.message, True, self.show_rejected, streaming=True)
        await self.query_one(".answers", VerticalScroll).mount(self.answer)
        self.refresh_stats()

    async def show_events(self) -> None:
        """The side's turn has new events (fed by the run)."""
        turn, answer = self.turn, self.answer
        if turn is None or answer is None:  # not started: nothing to show
            return
        scroll = self.query_one(".answers", VerticalScroll)
        following = scroll.scroll_y >= scroll.max_scroll_y - 1  # the reader has not scrolled up
        await answer.refresh_answer()
        if following:
            scroll.scroll_end(animate=False)
        if not turn.running:
            await answer.finish()
            self.refresh_stats()
        elif time.monotonic() - self._last_panel >= PANEL_EVERY_S:
            self.refresh_stats()

    async def fail(self, error: str) -> None:
        if self.answer is not None:
            await self.answer.finish()
        self.query_one(CompactStats).update(Content.styled(f" failed: {error}", "$error"))

    def refresh_stats(self) -> None:
        self._last_panel = time.monotonic()
        self.query_one(CompactStats).events = self.turn.events if self.turn else []
