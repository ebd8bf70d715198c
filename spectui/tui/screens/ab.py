"""The A/B screen: one prompt, two speculation configurations run one after the other on
the loaded models, side by side with their overlays and numbers, then a verdict (engine/ab.py).

Both runs start cold (session.reset()), so neither profits from the other's KV cache or
n-gram tables; the app's configuration is restored afterwards. The worker posts events up
as messages; each side feeds a LiveTurn and redraws its answer the way the chat does.
"""

from __future__ import annotations

import threading
import time

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.validation import Integer
from textual.widgets import Footer, Header, Input, Label, Select, Static

from spectui.config.paths import write_export
from spectui.engine.ab import NAMES, Verdict, compare
from spectui.engine.session import GenerationLimits, Session, chat_messages
from spectui.engine.spec_config import N_MAX_LIMIT, SpecConfig
from spectui.engine.stats import TurnSummary
from spectui.errors import UserError
from spectui.trace.format import Trace, TraceTurn
from spectui.tui.messages import RunEnded, SideStarted, TurnEvents, TurnFailed
from spectui.tui.streaming import stream_turn
from spectui.tui.turn import LiveTurn
from spectui.tui.widgets.message import AssistantMessage
from spectui.tui.widgets.stats_panel import CompactStats

DEFAULT_A = "ngram-mod"  # B: the loaded draft model's (or head's) type
FALLBACK_B = "ngram-simple"  # B without a draft model
PANEL_EVERY_S = 1.0  # a side's numbers redraw this often while it streams


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
            yield Select([(t, t) for t in self.types], value=self.spec_type, allow_blank=False,
                         id=f"type-{self.side_name.lower()}")
            yield Input(str(self.n_max), type="integer", validators=[Integer(1, N_MAX_LIMIT)],
                        id=f"nmax-{self.side_name.lower()}", tooltip=f"draft n-max, 1 to {N_MAX_LIMIT}")
        yield VerticalScroll(classes="answers")
        yield CompactStats(classes="side-stats")

    def spec(self, base: SpecConfig) -> SpecConfig | str:
        """The chosen configuration (the app's other settings kept), or why it is not valid."""
        n_max = self.query_one(Input).value.strip()
        if not self.query_one(Input).validate(n_max).is_valid:
            return f"{self.side_name}: draft n-max must be a whole number from 1 to {N_MAX_LIMIT}, not '{n_max}'"
        return base.with_types(self.query_one(Select).value).replace(draft_n_max=int(n_max))

    async def clear(self) -> None:
        self.turn, self.answer = None, None
        await self.query_one(".answers").remove_children()
        self.refresh_stats()

    async def start(self, spec: SpecConfig) -> None:
        self.turn = LiveTurn(spec)
        self.answer = AssistantMessage(self.turn.message, True, self.show_rejected, streaming=True)
        await self.query_one(".answers", VerticalScroll).mount(self.answer)
        self.refresh_stats()

    async def add(self, events) -> None:
        for event in events:
            self.turn.add(event)
        scroll = self.query_one(".answers", VerticalScroll)
        following = scroll.scroll_y >= scroll.max_scroll_y - 1  # the reader has not scrolled up
        await self.answer.refresh_answer()
        if following:
            scroll.scroll_end(animate=False)
        if not self.turn.running:
            await self.answer.finish()
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


class ABScreen(Screen):
    """Opened by the app, when no answer is streaming, with its session and settings; while it
    is open the app refuses to chat or change the configuration, so the session is its own."""

    DEFAULT_CSS = """
    #ab-sides {
        height: 1fr;
    }
    #ab-verdict {
        height: auto;
        padding: 0 1;
        border: round $accent 50%;
    }
    #ab-prompt {
        border: round $primary 50%;
    }
    #ab-prompt:focus {
        border: round $primary;
    }
    """
    BINDINGS = [Binding("escape", "stop_or_close", "stop / close"), Binding("ctrl+s", "save_trace", "save trace")]

    def __init__(self, session: Session, system: str | None, limits: GenerationLimits, show_rejected: bool,
                 trace_header: dict):
        """`trace_header`: the first line of the trace this view saves (ctrl+s)."""
        super().__init__()
        self.session = session
        self.trace_header = trace_header
        self.prompt = ""  # of the last run
        self.system = system
        self.limits = limits
        self.show_rejected = show_rejected
        self.running = False
        self.verdict: Verdict | None = None
        self._stop = threading.Event()
        self._side = 0  # the side the worker is running

    def compose(self) -> ComposeResult:
        status = self.session.status()
        types = status.types
        b = next((t for t in types if t.startswith("draft-")), FALLBACK_B if FALLBACK_B in types else types[0])
        a = DEFAULT_A if DEFAULT_A in types else types[0]
        n_max = status.spec.draft_n_max
        yield Header(icon="◆")
        with Horizontal(id="ab-sides"):
            yield SidePane(NAMES[0], types, a, n_max, self.show_rejected)
            yield SidePane(NAMES[1], types, b, n_max, self.show_rejected)
        yield Static(self._intro(b, types), id="ab-verdict")
        yield Input(placeholder="Prompt for both · enter runs A then B · esc stops / closes", id="ab-prompt")
        yield Footer()

    def _intro(self, b: str, types: tuple[str, ...]) -> Content:
        lines = [Content.styled("Pick A and B, type a prompt, press enter: both run cold on the loaded models, "
                                "one after the other, with the same sampling.", "$text-muted")]
        if len(types) == 1:
            lines.append(Content.styled(f"This session allows one configuration only ({types[0]}): A and B run the "
                                        "same, which measures the noise between two runs.", "$warning"))
        elif b == FALLBACK_B:
            lines.append(Content.styled(f"No draft model is loaded: B defaults to {b} instead of a draft-* type.",
                                        "$warning"))
        return Content("\n").join(lines)

    def on_mount(self) -> None:
        self.title, self.sub_title = "A/B", "same prompt, two configurations"
        for pane in self.query(SidePane):
            pane.refresh_stats()
        self.query_one("#ab-prompt", Input).focus()

    @property
    def panes(self) -> list[SidePane]:
        return list(self.query(SidePane))

    # --- running ----------------------------------------------------------------------

    @on(Input.Submitted)
    async def _submit(self, event: Input.Submitted) -> None:
        if self.running:
            self.notify("An A/B run is in progress (esc stops it).", severity="warning")
            return
        prompt = self.query_one("#ab-prompt", Input).value.strip()
        if not prompt:
            self.notify("Type a prompt for both runs first.", severity="warning")
            self.query_one("#ab-prompt", Input).focus()
            return
        restore = self.session.spec
        specs = [pane.spec(restore) for pane in self.panes]
        errors = [s for s in specs if isinstance(s, str)]
        if errors:
            self.notify("\n".join(errors), title="A/B", severity="error")
            return
        messages = chat_messages([("user", prompt)], self.system)
        self.prompt = prompt
        for pane in self.panes:
            await pane.clear()
        self.verdict = None
        self.query_one("#ab-verdict", Static).update(Content.styled("running A…", "$accent"))
        self.running = True
        self._stop.clear()
        self._run(specs, messages, restore)

    @work(thread=True, exclusive=True, group="ab", exit_on_error=False)
    def _run(self, specs: list[SpecConfig], messages: list[dict], restore: SpecConfig) -> None:
        session = self.session
        try:
            for side, spec in enumerate(specs):
                if self._stop.is_set():
                    break
                session.reset()  # cold: no KV cache or drafter state from the chat or from A
                session.configure(spec)
                self.post_message(SideStarted(side, spec))
                stream_turn(session, messages, self.limits, self.post_message, self._stop)
        finally:
            session.configure(restore)
            self.post_message(RunEnded())

    async def on_side_started(self, msg: SideStarted) -> None:
        self._side = msg.side
        pane = self.panes[msg.side]
        self.query_one("#ab-verdict", Static).update(Content.styled(f"running {pane.side_name}…", "$accent"))
        await pane.start(msg.spec)

    async def on_turn_events(self, msg: TurnEvents) -> None:
        msg.stop()  # this screen's turn, not the chat's
        await self.panes[self._side].add(msg.events)

    async def on_turn_failed(self, msg: TurnFailed) -> None:
        msg.stop()
        await self.panes[self._side].fail(msg.error)
        self.notify(msg.error, title=f"A/B: {NAMES[self._side]} failed", severity="error", timeout=10)

    def on_run_ended(self, _: RunEnded) -> None:
        self.running = False
        turns = [pane.turn for pane in self.panes]
        verdict = self.query_one("#ab-verdict", Static)
        if all(t is not None and not t.running for t in turns):
            self.verdict = compare(turns[0].events, turns[1].events)
            verdict.update(render_verdict(self.verdict, [t.message.config for t in turns]))
        else:
            missing = ", ".join(pane.side_name for pane, t in zip(self.panes, turns) if t is None or t.running)
            verdict.update(Content.styled(f"No verdict: {missing} did not finish (stopped or failed).", "$warning"))

    def action_save_trace(self) -> None:
        """Both sides of the last run in one trace (spectui replay shows them side by side)."""
        turns = [TraceTurn(self.prompt, list(pane.turn.events), side=pane.side_name)
                 for pane in self.panes if pane.turn is not None and not pane.turn.running]
        if self.running or not turns:
            self.notify("Run A and B first (a running comparison is saved when it ends).", severity="warning")
            return
        name = f"spectui-ab-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
        try:
            path = write_export(name, Trace(self.trace_header, turns).write)
        except UserError as e:
            self.notify(str(e), title="Trace not saved", severity="error")
            return
        self.notify(f"{path}\nreplay it with: spectui replay {path.name}", title="Saved the A/B trace", timeout=8)

    # --- stopping and closing ---------------------------------------------------------

    def stop(self) -> None:
        """End the run at the end of the current round; B does not start."""
        if self.running:
            self._stop.set()
            self.session.cancel()

    def action_stop_or_close(self) -> None:
        if self.running:
            self.stop()
            self.query_one("#ab-verdict", Static).update(Content.styled("stopping at the end of this round…",
                                                                        "$warning"))
        else:
            self.dismiss()

    def on_unmount(self) -> None:
        self.stop()  # the app is quitting mid-run: let the worker end


def _acceptance(summary: TurnSummary) -> str:
    if not summary.n_drafted:
        return "- (nothing drafted)"
    return f"{summary.acceptance_rate:.0%} ({summary.n_accepted}/{summary.n_drafted})"


def _speed(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f} tok/s"


def _quote(text: str) -> str:
    return repr(text) if text else "(ended)"


def render_verdict(v: Verdict, labels: list[str]) -> Content:
    """The verdict block under the two sides."""
    a, b = v.summaries
    head = Content.assemble(("Verdict", "bold $accent"), (f"  B {labels[1]} vs A {labels[0]}", "$text-muted"))
    speed = Content.assemble(
        ("speedup of B over A ", "$text-muted"),
        ("-" if v.speedup is None else f"×{v.speedup:.2f}", "bold"),
        "" if v.speedup is None else (" B is faster" if v.speedup > 1 else " B is not faster"),
        f"  (B {_speed(b.timing.tok_per_s)}, A {_speed(a.timing.tok_per_s)})",
    )
    accepted = Content.assemble(("acceptance ", "$text-muted"), f"A {_acceptance(a)} · B {_acceptance(b)}")
    if v.divergence is None:
        output = Content.assemble(("output ", "$text-muted"), ("identical", "bold $success"),
                                  f" ({a.n_generated} tokens)")
    else:
        d = v.divergence
        output = Content.assemble(
            ("output ", "$text-muted"), (f"differs from token {d.index}", "bold $warning"),
            f": …{d.before!r} then A {_quote(d.a)} · B {_quote(d.b)}",
        )
    notes = [Content.styled(f"· {note}", "$text-muted") for note in v.notes]
    return Content("\n").join([head, speed, accepted, output, *notes])
