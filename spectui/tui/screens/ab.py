"""The A/B screen: the run of spectui/chat/ab.py side by side, each side's answer with its
overlay and numbers, then the verdict."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from spectui.chat.ab import FALLBACK_B, ABRun, default_types
from spectui.chat.conversation import STOPPING
from spectui.chat.persistence import saved_trace_note
from spectui.config.setup import Setup
from spectui.engine.ab import NAMES, Verdict
from spectui.engine.interface import ChatSession, GenerationLimits
from spectui.errors import UserError
from spectui.spec_config import Choice, SpecConfig, types_label
from spectui.tui.header import status_spans
from spectui.tui.messages import RunEnded, SideStarted, TurnEvents, TurnFailed
from spectui.tui.widgets.side_pane import HORIZONTAL_BREAKPOINTS, VERTICAL_BREAKPOINTS, SidePane, Sides, VerdictBox
from spectui.tui.widgets.verdict import render_verdict


class ABScreen(Screen):
    """Renders an A/B run (spectui/chat/ab.py): the two sides, their overlays and numbers,
    then the verdict; its worker posts the events up as messages."""

    HORIZONTAL_BREAKPOINTS = HORIZONTAL_BREAKPOINTS
    VERTICAL_BREAKPOINTS = VERTICAL_BREAKPOINTS
    DEFAULT_CSS = """
    #ab-prompt {
        border: round $primary 50%;
    }
    #ab-prompt:focus {
        border: round $accent;
    }
    ABScreen.-short #ab-prompt {
        height: 1;
        border: none;
        border-left: tall $primary 50%;
    }
    ABScreen.-short #ab-prompt:focus {
        border: none;
        border-left: tall $accent;
    }
    """
    BINDINGS = [Binding("escape", "stop_or_close", "stop / close"), Binding("ctrl+s", "save_trace", "save trace")]

    def __init__(self, session: ChatSession, setup: Setup, show_rejected: bool, trace_header: dict):
        """`trace_header`: the first line of the trace this view saves (ctrl+s)."""
        super().__init__()
        self.run = ABRun(session, setup.system, GenerationLimits(n_predict=setup.n_predict), trace_header)
        self.show_rejected = show_rejected
        self.verdict: Verdict | None = None  # of the last run that finished both sides

    @property
    def running(self) -> bool:
        return self.run.running

    def compose(self) -> ComposeResult:
        status = self.run.session.status()
        choices = status.choices
        a, b = default_types(choices, status.spec.types)
        yield Header(icon="◆")
        with Sides(id="ab-sides"):
            yield SidePane(NAMES[0], choices, a, status.spec.draft_n_max, self.show_rejected)
            yield SidePane(NAMES[1], choices, b, status.spec.draft_n_max, self.show_rejected)
        yield VerdictBox(self._intro(b, choices, fallback=b == FALLBACK_B != status.spec.types))
        yield Input(
            placeholder="Prompt for both · enter runs A then B · esc stops / closes",
            select_on_focus=False,
            id="ab-prompt",
        )
        yield Footer()

    def _intro(self, b: Choice, choices: tuple[Choice, ...], fallback: bool) -> Content:
        """`fallback`: B is FALLBACK_B because the chat runs none and no draft model is loaded."""
        lines = [
            Content.styled(
                "Pick A and B, type a prompt, press enter: both run cold on the loaded models, "
                "one after the other, with the same sampling. Enter again runs the pair the other "
                "way round and pools the speedups, so the verdict can tell a difference from noise.",
                "$text-muted",
            )
        ]
        if len(choices) == 1:
            lines.append(
                Content.styled(
                    f"This session allows one configuration only ({types_label(choices[0])}): A and B run the "
                    "same, which measures the noise between two runs.",
                    "$warning",
                )
            )
        elif fallback:
            lines.append(
                Content.styled(
                    f"No draft model is loaded: B defaults to {types_label(b)} instead of a draft-* type.", "$warning"
                )
            )
        return Content("\n").join(lines)

    def on_mount(self) -> None:
        self.title, self.sub_title = "A/B", "same prompt, two configurations"
        self.app.clear_notifications()  # the chat's toasts would cover the intro, which says what to do
        for pane in self.query(SidePane):
            pane.refresh_stats()
        self.query_one("#ab-prompt", Input).focus()

    @property
    def panes(self) -> list[SidePane]:
        return list(self.query(SidePane))

    # --- running ----------------------------------------------------------------------

    @on(Input.Submitted)
    async def _submit(self, event: Input.Submitted) -> None:
        if self.run.running:
            self.notify("An A/B run is in progress (esc stops it).", severity="warning")
            return
        prompt = self.query_one("#ab-prompt", Input).value.strip()
        if not prompt:
            self.notify("Type a prompt for both runs first.", severity="warning")
            self.query_one("#ab-prompt", Input).focus()
            return
        chosen = [pane.spec(self.run.session.spec) for pane in self.panes]
        errors = [s for s in chosen if isinstance(s, str)]
        if errors:
            self.notify("\n".join(errors), title="A/B", severity="error")
            return
        specs = [s for s in chosen if not isinstance(s, str)]
        for pane in self.panes:
            await pane.clear()
        self.verdict = None
        self.run.start(prompt, specs)
        first = NAMES[self.run.order[0]]
        self.query_one("#ab-verdict", Static).update(Content.styled(f"running {first}…", "$accent"))
        self._run(specs)

    @work(thread=True, exclusive=True, group="ab", exit_on_error=False)
    def _run(self, specs: list[SpecConfig]) -> None:
        post = self.post_message
        try:
            self.run.run(
                specs,
                lambda side, spec: post(SideStarted(side, spec)),
                lambda events: post(TurnEvents(events)),
                lambda error: post(TurnFailed(error)),
            )
        finally:
            post(RunEnded())

    async def on_side_started(self, msg: SideStarted) -> None:
        pane = self.panes[msg.side]
        self.query_one("#ab-verdict", Static).update(Content.styled(f"running {pane.side_name}…", "$accent"))
        await pane.start(self.run.side_started(msg.side, msg.spec))

    async def on_turn_events(self, msg: TurnEvents) -> None:
        msg.stop()  # this screen's turn, not the chat's
        await self.panes[self.run.side].show_events(self.run.add(msg.events))

    async def on_turn_failed(self, msg: TurnFailed) -> None:
        msg.stop()
        await self.panes[self.run.side].fail(msg.error)
        self.notify(msg.error, title=f"A/B: {NAMES[self.run.side]} failed", severity="error", timeout=10)

    def on_run_ended(self, _: RunEnded) -> None:
        verdict = self.run.ended()
        box = self.query_one("#ab-verdict", Static)
        if isinstance(verdict, str):
            box.update(Content.styled(verdict, "$warning"))
        else:
            self.verdict = verdict
            box.update(render_verdict(verdict, [t.message.config_label for t in self.run.turns if t is not None]))

    def action_save_trace(self) -> None:
        try:
            path = self.run.save_trace()
        except UserError as e:
            self.notify(str(e), title="Trace not saved", severity="error")
            return
        if path is None:
            self.notify("Run A and B first (a running comparison is saved when it ends).", severity="warning")
            return
        self.notify(saved_trace_note(path), title="Saved the A/B trace", timeout=8)

    # --- stopping and closing ---------------------------------------------------------

    def action_stop_or_close(self) -> None:
        if self.run.stop():
            self.query_one("#ab-verdict", Static).update(Content.assemble(*status_spans(STOPPING)))
        else:
            self.dismiss()

    def on_unmount(self) -> None:
        self.run.stop()  # the app is quitting mid-run: let the worker end
