"""One side of an A/B view (live or replayed): its pickers, its answer with the overlay,
its numbers."""

from __future__ import annotations

import time
from typing import cast

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.validation import Integer
from textual.widgets import Input, Label, Select, Static

from spectui.chat.turn import Growth, LiveTurn
from spectui.config.setup import OPTIONS
from spectui.errors import UserError
from spectui.spec_config import AUTO, MODEL_TYPES, Choice, SpecConfig, choice_types, types_label, uses_n_max
from spectui.tui.widgets.message import AssistantMessage
from spectui.tui.widgets.stats_panel import CompactStats

N_MAX = OPTIONS["spec_draft_n_max"]  # its bounds and their words: the flag's and the settings form's

PANEL_EVERY_S = 1.0  # a streaming answer's numbers (the chat's panel, a side's) redraw this often
# The A/B screens' size classes: below 100 columns the sides stack, below 30 rows they go compact.
HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]


class Sides(Horizontal):
    """The two sides of an A/B view: side by side, stacked on a narrow screen, and with
    one-line pickers and numbers and no frames on a short one, so both answers keep room to
    show. Its stylesheet also draws the focus ring of both A/B screens (the focused control
    in the accent colour, unfocused frames in the primary one) and frames the verdict."""

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
    Sides .side-line, .-narrow Sides .side-stats, .-short Sides .side-stats {
        display: none;
    }
    .-narrow Sides .side-line, .-short Sides .side-line {
        display: block;
    }
    Sides SidePane Select:focus > SelectCurrent, Sides SidePane .picker Input:focus {
        border: tall $accent;
    }
    SidePane.-focused .side-name {
        background: $accent;
        color: $background;
    }
    .-short Sides SidePane SelectCurrent, .-short Sides SidePane .picker Input,
    .-short Sides SidePane Select:focus > SelectCurrent, .-short Sides SidePane .picker Input:focus {
        border: none;
    }
    .-short Sides SidePane Select:focus > SelectCurrent, .-short Sides SidePane .picker Input:focus {
        background: $accent 40%;
    }
    .-short Sides SidePane .picker Input {
        height: 1;
        padding: 0 1;
    }
    .-short Sides SidePane .side-name, .-short Sides SidePane .n-max {
        padding: 0 1 0 0;
    }
    .-short Sides SidePane .answers {
        border: none;
        border-left: blank;
        min-height: 5;
    }
    Sides SidePane .answers:focus {
        border: round $accent;
    }
    .-short Sides SidePane .answers:focus {
        border: none;
        border-left: tall $accent;
    }
    VerdictBox {
        height: auto;
        max-height: 50%;
        padding: 0 1;
        border: round $accent 50%;
    }
    VerdictBox:focus {
        border: round $accent;
    }
    .-short VerdictBox {
        max-height: 7;
        border: none;
        border-left: tall $accent 50%;
    }
    .-short VerdictBox:focus {
        border: none;
        border-left: tall $accent;
    }
    """


class Scroller(VerticalScroll):
    """A scrolling area that takes the focus (its keys scroll it) only while it has more to
    show than fits, so tab skips it otherwise."""

    DEFAULT_CSS = """
    Scroller {
        height: auto;
        scrollbar-size-vertical: 1;
    }
    """

    def allow_focus(self) -> bool:
        return self.max_scroll_y > 0


class VerdictBox(Scroller):
    """The verdict (#ab-verdict) under the two sides; it scrolls where the screen is too
    short to show it whole beside both answers."""

    def __init__(self, content: Content | str = ""):
        super().__init__()
        self._content = content

    def compose(self) -> ComposeResult:
        yield Static(self._content, id="ab-verdict")


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
        width: auto;
        padding: 1 1 0 0;
        color: $accent;
        text-style: bold;
    }
    SidePane .n-max {
        padding: 1 1 0 1;
        color: $text-muted;
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
    }
    SidePane AssistantMessage {
        margin: 0;
    }
    """

    def __init__(
        self,
        name: str,
        choices: tuple[Choice, ...],
        choice: Choice,
        n_max: int,
        show_rejected: bool,
        recorded: bool = False,
    ):
        """`recorded`: a replay's side, its pickers showing what ran."""
        super().__init__(id=f"side-{name.lower()}", classes="side")
        self.recorded = recorded
        self.side_name = name
        self.choices = choices
        self.choice = choice
        self.n_max = n_max
        self.show_rejected = show_rejected
        self.turn: LiveTurn | None = None
        self.answer: AssistantMessage | None = None
        self._last_panel = 0.0

    def compose(self) -> ComposeResult:
        with Horizontal(classes="picker"):
            yield Label(self.side_name, classes="side-name")
            yield Select(
                [(types_label(c), c) for c in self.choices],
                value=self.choice,
                allow_blank=False,
                id=f"type-{self.side_name.lower()}",
            )
            yield Label("draft n-max", classes="n-max")
            yield Input(
                str(self.n_max),
                type="integer",
                validators=[Integer(N_MAX.lo, N_MAX.hi)],
                select_on_focus=False,  # tabbing through and typing edits the value, never replaces it
                id=f"nmax-{self.side_name.lower()}",
            )
        yield Scroller(classes="answers")
        yield CompactStats(classes="side-stats")
        yield CompactStats(one_line=True, classes="side-line")

    def on_mount(self) -> None:
        self._n_max_applies(self.choice)
        if self.recorded:  # what was recorded; a replay cannot rerun it
            self.query_one(Select).disabled = self.query_one(Input).disabled = True

    def on_descendant_focus(self) -> None:
        self.add_class("-focused")  # its name lights up: which side the focused control is on

    def on_descendant_blur(self) -> None:
        self.remove_class("-focused")

    @on(Select.Changed)
    def _picked(self, event: Select.Changed) -> None:
        if not self.recorded:
            self._n_max_applies(cast(Choice, event.value))

    def _n_max_applies(self, choice: Choice) -> None:
        """The n-max box shows only for the types it bounds: the n-gram types draft up to their
        own sizes, none drafts nothing, and auto without a model type drafts n-grams only (a
        replay's recorded auto keeps its n-max: its pair is not known here)."""
        box = self.query_one(Input)
        with_model = self.recorded or bool(set(MODEL_TYPES) & choice_types(self.choices))
        bounds = uses_n_max(choice) and (choice != (AUTO,) or with_model)
        box.disabled = not bounds
        box.display = self.query_one(".n-max", Label).display = bounds
        box.tooltip = f"{self.side_name}'s draft n-max: its longest draft, {N_MAX.rule}"

    def spec(self, base: SpecConfig) -> SpecConfig | str:
        """The chosen configuration (the app's other settings kept), or why it is not valid."""
        box = self.query_one(Input)
        if box.disabled:  # a type n-max does not bound: the box is not read
            return base.with_types(self.query_one(Select).value)
        n_max = box.value.strip()
        checked = box.validate(n_max)
        if checked is not None and not checked.is_valid:
            return f"{self.side_name}: draft n-max must be a whole number {N_MAX.rule}, not '{n_max}'"
        try:  # below the chat's --spec-draft-n-min, say
            return base.with_types(self.query_one(Select).value).replace(draft_n_max=int(n_max))
        except UserError as e:
            return f"{self.side_name}: {e}"

    async def clear(self) -> None:
        self.turn, self.answer = None, None
        await self.query_one(".answers").remove_children()
        self.refresh_stats()

    async def start(self, turn: LiveTurn) -> None:
        self.turn = turn
        self.answer = AssistantMessage(self.turn.message, True, self.show_rejected, streaming=True)
        await self.query_one(".answers", VerticalScroll).mount(self.answer)
        self.refresh_stats()

    async def show_events(self, growth: Growth) -> None:
        """The side's turn has new events (fed by the run), which added `growth` to its answer."""
        turn, answer = self.turn, self.answer
        if turn is None or answer is None:  # not started: nothing to show
            return
        scroll = self.query_one(".answers", VerticalScroll)
        following = scroll.scroll_y >= scroll.max_scroll_y - 1  # the reader has not scrolled up
        await answer.grow(growth)
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
        for numbers in self.query(CompactStats):
            numbers.update(Content.styled(f" failed: {error}", "$error"))

    def refresh_stats(self) -> None:
        self._last_panel = time.monotonic()
        for numbers in self.query(CompactStats):
            numbers.events = self.turn.events if self.turn else []
