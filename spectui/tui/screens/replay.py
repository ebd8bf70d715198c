"""Replaying a trace: the chat's transcript and panel, or the A/B view's two sides and
verdict, fed from the recorded events instead of a model.

The screen holds a Playhead over the trace's timeline (one step per round, at the
recorded times). Moving forward feeds the new events to the turn on screen, as the chat
does while an answer streams; moving back rebuilds from the trace. The panel shows what
the recording machine measured and which machine that was, never this one's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from spectui.chat.library import ChatLibrary
from spectui.chat.panel import PanelState
from spectui.chat.turn import Baseline, LiveTurn, baseline_tok_s
from spectui.config.model_choice import recorded_name
from spectui.engine.events import Event, Round, TurnStart
from spectui.spec_config import SpecConfig
from spectui.store.chat_types import Chat, Message
from spectui.trace.format import Trace, TraceTurn, machine_line
from spectui.trace.timeline import Playhead, Step, steps
from spectui.tui.header import pair_line
from spectui.tui.screens.chat import NARROW
from spectui.tui.screens.inspecting import InspectsAnswers
from spectui.tui.widgets.message import AssistantMessage, UserMessage
from spectui.tui.widgets.stats_panel import StatsPanel, StatusStrip
from spectui.tui.widgets.transcript import Transcript

TICK_S = 1 / 20  # how often a playing replay looks for the next step


def spec_in_force(turn: TraceTurn, events: list[Event]) -> SpecConfig:
    """The turn's configuration at its last shown event: TurnStart's, or a later change."""
    start = turn.events[0]
    assert isinstance(start, TurnStart)
    config = start.config
    t = events[-1].t if events else start.t
    for change in turn.changes:
        if change.t <= t:
            config = change.config
    return SpecConfig.from_dict(config)


def finished(turn: TraceTurn) -> LiveTurn:
    live = LiveTurn(spec_in_force(turn, []))
    live.extend(turn.events)
    return live


class ReplayScreen(Screen):
    """The timeline, its keys and its status line; subclasses draw a step."""

    BINDINGS = [
        Binding("space", "toggle_play", "play/pause"),
        Binding("right,full_stop", "step(1)", "next round", key_display="→"),
        Binding("left,comma", "step(-1)", "previous round", key_display="←"),
        # priority: a transcript long enough to scroll would take home and end as scroll keys
        Binding("home", "seek(0)", "start", show=False, priority=True),
        Binding("end", "seek(-1)", "end", show=False, priority=True),
        Binding("plus,equals_sign", "speed(1)", "faster"),
        Binding("minus", "speed(-1)", "slower"),
        Binding("ctrl+f", "toggle_rejected", "rejected"),
        Binding("q", "app.quit", "quit"),
    ]
    KEYS = "space play/pause · ←/→ round · +/- speed · q quit"  # the status line's reminder

    def __init__(self, trace: Trace, speed: float, playing: bool, show_rejected: bool):
        super().__init__()
        self.trace = trace
        self.playhead = Playhead(steps(trace), speed, playing)
        self.show_rejected = show_rejected
        self._rounds = [sum(isinstance(e, Round) for e in t.events) for t in trace.turns]
        self._ticked = time.monotonic()
        self._drawing = asyncio.Lock()

    async def on_mount(self) -> None:
        models = self.trace.header.get("environment", {}).get("models", {})
        target, draft = recorded_name(models.get("target")) or "?", recorded_name(models.get("draft"))
        self.sub_title = f"replay of {pair_line(target, draft)}"
        self.query_one("#status").display = True  # the chat hides its status line when idle; a replay never is
        await self._draw(rebuild=True)
        self.update_status()
        self._ticked = time.monotonic()
        self.set_interval(TICK_S, self._tick)

    async def _tick(self) -> None:
        now = time.monotonic()
        dt, self._ticked = now - self._ticked, now
        was_playing = self.playhead.playing
        if self.playhead.tick(dt):
            await self._draw()
            self.update_status()
        elif self.playhead.playing != was_playing:
            self.update_status()

    # --- keys ------------------------------------------------------------------------

    async def _moved(self, moved: bool, backward: bool = False) -> None:
        if moved:
            await self._draw(rebuild=backward)
        self.update_status()

    async def action_step(self, n: int) -> None:
        await self._moved(self.playhead.seek(self.playhead.pos + n), backward=n < 0)

    async def action_seek(self, pos: int) -> None:
        target = pos if pos >= 0 else len(self.playhead.steps) - 1
        backward = target < self.playhead.pos
        await self._moved(self.playhead.seek(target), backward=backward)

    def action_toggle_play(self) -> None:
        at_end = self.playhead.at_end
        self.playhead.toggle()
        self._ticked = time.monotonic()
        if at_end and self.playhead.playing:
            self.run_worker(self._draw(rebuild=True))
        self.update_status()

    def action_speed(self, direction: int) -> None:
        self.playhead.change_speed(direction)
        self.update_status()

    async def action_toggle_rejected(self) -> None:
        self.show_rejected = not self.show_rejected
        await self._draw(rebuild=True)

    def update_status(self) -> None:
        p, turns = self.playhead, self.trace.turns
        state = ("▶ playing", "$success") if p.playing else ("⏸ paused", "$warning")
        shown = sum(self._rounds[: p.step.turn]) + sum(
            isinstance(e, Round) for e in turns[p.step.turn].events[: p.step.n_events]
        )
        self.query_one("#status", Static).update(
            Content.assemble(
                state,
                f"  ×{p.speed:g}  round {shown}/{sum(self._rounds)}  turn {p.step.turn + 1}/{len(turns)}",
                ("  " + self.KEYS, "$text-muted"),
            )
        )

    async def _draw(self, rebuild: bool = False) -> None:
        """The playhead's step, one drawing at a time: a key (home, end) handled while a rebuild
        awaits its widgets would otherwise interleave two rebuilds into one doubled transcript."""
        async with self._drawing:
            await self.show_step(self.playhead.step, rebuild=rebuild)

    async def show_step(self, step: Step, rebuild: bool = False) -> None:
        raise NotImplementedError


class ChatReplayScreen(InspectsAnswers, ReplayScreen):
    """A chat or `spectui run` trace: transcript with the overlay, and the stats panel; i (or
    f7) inspects the answer on screen (pausing the replay), as the chat's f7 does."""

    BINDINGS = [Binding("i,f7", "inspect", "inspect")]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW, "-wide")]  # -narrow: the panel as one line, as in the chat
    KEYS = "space play/pause · ←/→ round · +/- speed · i inspect · q quit"
    NO_DATA_HINT = "recorded without inspect: `spectui run --inspect --trace` or shift+f7 in the chat records it"

    def __init__(self, trace: Trace, speed: float, playing: bool, show_rejected: bool):
        super().__init__(trace, speed, playing, show_rejected)
        self.done = [finished(t) for t in trace.turns]
        self.live: LiveTurn | None = None
        self.answer: AssistantMessage | None = None
        self._shown = (-1, 0)  # (turn, events) on screen

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="body"):
            with Vertical(id="chat"):
                yield Transcript(
                    ChatLibrary().earlier_than, id="transcript"
                )  # reads only the loaded messages: a replay's chat is not stored
                yield Static(id="status")
                yield StatusStrip(id="compact")
            yield StatsPanel(id="panel")
        yield Footer()

    def rounds_by_message(self) -> dict[int, Sequence[Round]]:
        turns = [*self.done[: self._shown[0]], *([self.live] if self.live else [])]
        return {id(t.message): t.rounds for t in turns if t.rounds}

    async def action_inspect(self, at_round: int | None = None) -> None:
        self.playhead.playing = False  # the answer stays as it is while the cursor walks it
        self.update_status()
        await super().action_inspect(at_round)

    async def show_step(self, step: Step, rebuild: bool = False) -> None:
        self.close_inspector()  # the answer it walks changes
        turn = self.trace.turns[step.turn]
        shown_turn, shown_n = self._shown
        if rebuild or step.turn != shown_turn or step.n_events < shown_n:
            await self._rebuild(step)
        elif self.live is not None and self.answer is not None:  # a rebuild set both
            await self.answer.grow(self.live.extend(turn.events[shown_n : step.n_events]))
            if not self.live.running:
                await self.answer.finish()
        self._shown = (step.turn, step.n_events)
        self._refresh_panel(step)

    async def _rebuild(self, step: Step) -> None:
        messages = []
        for turn, live in zip(self.trace.turns[: step.turn], self.done):
            messages += [Message("user", turn.prompt), live.message]
        transcript = self.query_one(Transcript)
        await transcript.show(Chat("replay", "", 0.0, 0.0, messages), True, self.show_rejected)
        turn = self.trace.turns[step.turn]
        self.live = LiveTurn(spec_in_force(turn, []))
        self.live.extend(turn.events[: step.n_events])
        self.answer = AssistantMessage(self.live.message, True, self.show_rejected, streaming=self.live.running)
        await transcript.add(UserMessage(Message("user", turn.prompt)))
        await transcript.add(self.answer)

    def _refresh_panel(self, step: Step) -> None:
        turn = self.trace.turns[step.turn]
        events = turn.events[: step.n_events]
        rounds = [e for e in events if isinstance(e, Round)]
        start = turn.events[0]
        assert isinstance(start, TurnStart)  # the trace reader checks every turn opens so
        spec = spec_in_force(turn, events)
        temp = self.trace.header.get("settings", {}).get("temp")
        verify = rounds[-1].verify if rounds else "greedy" if temp == 0 else spec.verify
        baselines = [b for b in map(baseline_tok_s, self.done[: step.turn]) if b is not None]
        self.title = f"replay · {spec.label}"
        self.query_one(StatsPanel).state = self.query_one(StatusStrip).state = PanelState(
            spec=spec,
            verify=verify,
            events=events,
            baseline=Baseline.of(baselines),
            n_ctx=start.n_ctx,
            n_past=rounds[-1].n_past if rounds else start.n_prompt,
            memory=f"{turn.memory}\n{machine_line(self.trace.header)}".strip(),
            replay=True,
        )
