"""The chat screen: transcript, input, stats panel; each answer generated in a worker.

Data flows one way: the app sets `session` (and `memory`) on the screen; the generation
worker posts TurnEvents up; the screen feeds them to its LiveTurn and the Chat, and sets
what changed on its widgets. It reads the session only through `session.status()`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from textual import work
from textual.app import ComposeResult
from textual.binding import ActiveBinding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from spectui.config import history, paths
from spectui.config.launch import model_name
from spectui.config.setup import Setup
from spectui.engine.events import TurnStart
from spectui.engine.session import GenerationLimits, Session, SessionStatus, chat_messages
from spectui.engine.spec_config import N_MAX_LIMIT, SpecConfig
from spectui.errors import UserError
from spectui.trace.format import ConfigChange, Trace, TraceTurn, append_turn
from spectui.tui.commands import WIDE_FOOTER, bindings
from spectui.tui.messages import TurnEvents, TurnFailed
from spectui.tui.streaming import stream_turn
from spectui.tui.turn import LiveTurn, baseline_tok_s
from spectui.tui.screens.chats import ChatsScreen, Picked
from spectui.tui.screens.composing import Composing
from spectui.tui.screens.rounds import RoundsScreen
from spectui.tui.widgets.chat_input import ChatInput
from spectui.tui.widgets.markdown import last_code_block
from spectui.tui.widgets.message import AssistantMessage
from spectui.tui.widgets.queue import Outbox
from spectui.tui.widgets.stats_panel import PanelState, StatsPanel, StatusStrip
from spectui.tui.widgets.transcript import Transcript

QUIT_WINDOW_S = 2.0  # a second ctrl+c within this long quits
PANEL_EVERY_S = 1.0  # the stats panel redraws this often while an answer streams
BASELINES_KEPT = 5  # recent `none` turns remembered per target model
NARROW = 100  # columns below which the panel is a status line and the header names only the models


class ChatScreen(Composing, Screen):
    BINDINGS = bindings(chat=True)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW, "-wide")]  # -narrow: app.tcss swaps the panel

    # vars, not reactives: their watchers update the widgets that show them, and a reactive
    # would also repaint the whole screen (a full update, ~10 ms, every 2 s for memory)
    session: var[Session | None] = var(None, init=False)
    memory = var("", init=False)
    status_line: var[Content | str] = var("", init=False)  # under the transcript; "" hides it

    def __init__(self, chat: history.Chat, settings: dict, setup: Setup):
        """`settings`: the app's settings dict (the app saves changes); `setup`: the one the
        session was (or is being) loaded from: system prompt, answer limit, preset name."""
        super().__init__()
        self.chat = chat
        self.settings = settings
        self.setup = setup
        self.turn: LiveTurn | None = None  # the answer streaming now, or the last one
        self.baselines: dict[str, list[float]] = {}  # target model path -> recent `none` tok/s
        self._answer: AssistantMessage | None = None
        self._header: tuple[str, str] | None = None  # (configuration, models) for the header
        self.trace_header: dict = {}  # set by the app with the session: a trace's first line
        self.traced: list[TraceTurn] = []  # this chat's turns answered since it was opened
        self._changes: list[ConfigChange] = []  # configuration changes while the answer streams
        self._stop = threading.Event()
        self._journal: history.Journal | None = None  # the streaming answer's growth, on disk
        self._last_panel = self._last_interrupt = 0.0
        self._shown = False  # widgets composed: attributes set before then are applied by on_mount

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="body"):
            with Vertical(id="chat"):
                yield Transcript(id="transcript")
                yield Static(id="status")
                yield StatusStrip(id="compact")
                yield Outbox(id="outbox")
                yield ChatInput(id="input", placeholder="Ask anything · enter sends · ctrl+j new line · ? help")
            yield StatsPanel(id="panel")
        yield Footer()

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def panel(self) -> StatsPanel:
        return self.query_one(StatsPanel)

    async def on_mount(self) -> None:
        self._shown = True
        self.set_class(not self.settings["show_panel"], "-no-panel")
        await self.transcript.show(self.chat, self.settings["show_overlay"], self.settings["show_rejected"])
        self.query_one(ChatInput).focus()
        self.refresh_panel()
        self.watch_status_line(self.status_line)
        self.watch_session(self.session)

    # --- the session and its configuration ---------------------------------------

    def status(self) -> SessionStatus | None:
        return self.session.status() if self.session else None

    def watch_session(self, session: Session | None) -> None:
        if session is not None and self._shown:
            self.status_line = ""
            self.config_changed()
            self.call_later(self.send_queued)

    def available_types(self) -> tuple[str, ...]:
        return self.session.available_types() if self.session else ()

    def need_session(self) -> bool:
        if self.session is None:
            self.notify("The models are still loading.", severity="warning")
        return self.session is not None

    def _configure(self, spec: SpecConfig) -> None:
        if self.app.comparing:
            self.notify("The A/B view uses the models: choose its configurations there, or close it (esc).",
                        severity="warning")
            return
        try:
            self.session.configure(spec)
        except UserError as e:
            self.notify(str(e), severity="error")
            return
        self.config_changed()

    def set_spec_type(self, spec_type: str) -> None:
        if self.need_session():
            self._configure(self.session.spec.with_types(spec_type))

    def action_spec_type(self, step: int) -> None:
        if not self.need_session():
            return
        types = self.available_types()
        current = self.session.spec.types[0]
        i = types.index(current) if current in types else 0
        self.set_spec_type(types[(i + step) % len(types)])

    def action_n_max(self, step: int) -> None:
        if self.need_session():
            spec = self.session.spec
            self._configure(spec.replace(draft_n_max=min(max(spec.draft_n_max + step, 1), N_MAX_LIMIT)))

    def config_changed(self) -> None:
        status = self.status()
        spec = status.spec
        if self.generating:
            self._changes.append(ConfigChange(time.perf_counter(), spec.as_dict()))
        n_max = f"n-max {spec.draft_n_max} · " if spec.uses_n_max else ""
        draft = f" ⇠ draft {model_name(status.draft_path)}" if status.draft_path else " (no draft model)"
        self._header = (f"{spec.label} · {n_max}verify {status.verify}", model_name(status.target_path) + draft)
        self._show_header()
        self.refresh_panel()

    def _show_header(self) -> None:
        """The configuration and the models; on a narrow terminal the models only (the
        status line shows the configuration) and a compact footer, so neither is cut."""
        narrow = self.size.width < NARROW
        if self._header:
            models = self._header[1].replace(" ⇠ draft ", " ⇠ ")
            self.title, self.sub_title = (models, "") if narrow else self._header
        footer = self.query_one(Footer)
        if footer.compact != narrow:
            footer.compact = narrow
            self.refresh_bindings()

    def on_resize(self) -> None:
        self._show_header()

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """What the footer shows: on a narrow terminal, without the keys it has no room for
        (they still work)."""
        active = super().active_bindings
        if self.size.width >= NARROW:
            return active
        return {key: a._replace(binding=replace(a.binding, show=False)) if a.binding.action in WIDE_FOOTER else a
                for key, a in active.items()}

    # --- chat and generation ------------------------------------------------------

    @property
    def generating(self) -> bool:
        return self.turn is not None and self.turn.running

    def idle(self, doing: str) -> bool:
        if self.generating:
            self.notify(f"Stop the answer first (esc), then {doing}.", severity="warning")
        elif self.app.comparing:
            self.notify(f"Close the A/B view first (esc), then {doing}.", severity="warning")
        elif self.app.loading:
            self.notify(f"The models are loading: {doing} when they are ready.", severity="warning")
        return not (self.generating or self.app.comparing or self.app.loading)

    async def _start_turn(self) -> None:
        session = self.session
        self.turn = LiveTurn(session.spec)
        prompt = chat_messages([(m.role, m.content) for m in self.chat.messages], self.setup.system)
        self.chat.messages.append(self.turn.message)
        self._answer = AssistantMessage(self.turn.message, self.settings["show_overlay"],
                                        self.settings["show_rejected"], streaming=True)
        await self.transcript.add(self._answer)
        self.save()
        self._journal = history.Journal(self.chat)
        self._stop.clear()
        self._changes = []
        self.query_one(ChatInput).cursor_blink = False  # a blink is a repaint; keep the CPU for the model
        self.status_line = Content.assemble(("● ", "$success"), "generating", ("  esc stops", "$text-muted"))
        self._generate(session, prompt, GenerationLimits(n_predict=self.setup.n_predict))

    @work(thread=True, exclusive=True, group="generate", exit_on_error=False)
    def _generate(self, session: Session, prompt: list[dict], limits: GenerationLimits) -> None:
        stream_turn(session, prompt, limits, self.post_message, self._stop)

    async def on_turn_events(self, msg: TurnEvents) -> None:
        turn = self.turn
        if turn is None:
            return
        for event in msg.events:
            turn.add(event)
        await self._answer.refresh_answer()
        now = time.monotonic()
        if not turn.running:
            await self._finish_turn()
            return
        # The turn's start takes the panel to its live layout at once, before the model's
        # rounds (stats_panel.render: later updates then need no layout pass).
        if now - self._last_panel >= PANEL_EVERY_S or isinstance(msg.events[0], TurnStart):
            self.refresh_panel()
        try:
            self._journal.append()
        except UserError as e:
            self.notify(str(e), title="Answer not journaled", severity="warning")

    async def on_turn_failed(self, msg: TurnFailed) -> None:
        self.notify(msg.error, title="Generation failed", severity="error", timeout=10)
        self.query_one(ChatInput).cursor_blink = True
        turn, self.turn = self.turn, None
        if turn is not None and not turn.message.content:
            self.chat.messages.remove(turn.message)
            await self._answer.remove()
        elif turn is not None:
            await self._answer.finish()
        self.save()
        self.status_line = ""
        await self.send_queued()

    async def _finish_turn(self) -> None:
        turn = self.turn
        self.query_one(ChatInput).cursor_blink = True
        await self._answer.finish()
        self.save()
        end = turn.end
        if end.error:
            self.notify(end.error, title=f"Answer ended: {end.stop_reason.value}", severity="error", timeout=10)
        self._record_baseline(turn)
        self._trace(turn)
        self.refresh_panel()
        self.status_line = ""
        await self.send_queued()

    def _trace(self, turn: LiveTurn) -> None:
        """Keep the finished turn for the chat's trace, and append it to the chat's trace
        file when every chat is recorded."""
        prompt = self.chat.messages[-2].content if len(self.chat.messages) > 1 else ""
        traced = TraceTurn(prompt, list(turn.events), self._changes, memory=self.memory)
        self.traced.append(traced)
        if self.settings["record_traces"]:
            try:
                append_turn(paths.traces_dir() / f"{self.chat.id}.jsonl", self.trace_header, traced)
            except UserError as e:
                self.notify(str(e), title="Trace not recorded", severity="warning")

    def _record_baseline(self, turn: LiveTurn) -> None:
        """A clean `none` turn on this target is the speedup baseline (best recent one)."""
        tok_s = baseline_tok_s(turn)
        if tok_s is not None:
            kept = self.baselines.setdefault(self.status().target_path, [])
            kept[:] = (kept + [tok_s])[-BASELINES_KEPT:]

    def baseline(self) -> float | None:
        kept = self.baselines.get(self.status().target_path) if self.session else None
        return max(kept) if kept else None

    def save(self) -> None:
        """Save the chat (atomically, folding in the journal); a streaming answer is saved as
        stopped until it ends."""
        if self.turn is not None:
            self.turn.sync_stats()
        if not self.chat.messages:
            return
        if self.session is not None:  # what resuming the chat restores
            self.chat.setup = self.setup.with_spec(self.session.spec).values()
        try:
            history.save_chat(self.chat)
        except UserError as e:
            self.notify(str(e), title="Chat not saved", severity="error")

    def stop(self) -> None:
        """Ask a streaming answer to end after this round."""
        if self.generating:
            self._stop.set()
            self.session.cancel()

    def action_stop(self) -> None:
        if self.generating:
            self.stop()
            self.status_line = Content.styled("stopping at the end of this round…", "$warning")
        elif self.editing is not None:
            self.cancel_edit()

    async def action_interrupt(self) -> None:
        """ctrl+c: copy a selection in the input, else stop the answer, else quit if the
        last ctrl+c was a moment ago (a stray press never loses the app)."""
        box = self.query_one(ChatInput)
        last, self._last_interrupt = self._last_interrupt, time.monotonic()
        if box.selected_text:
            box.action_copy()
        elif self.generating:
            self.action_stop()
        elif self._last_interrupt - last < QUIT_WINDOW_S:
            await self.app.action_quit()
        else:
            self.notify("Press ctrl+c again to quit.", timeout=QUIT_WINDOW_S)

    async def action_new_chat(self) -> None:
        if self.idle("start a new chat"):
            self.chat = history.new_chat(self.setup.preset)
            self.turn, self.traced, self.editing = None, [], None
            await self._show_chat()

    async def _show_chat(self) -> None:
        await self.transcript.show(self.chat, self.settings["show_overlay"], self.settings["show_rejected"])
        self.refresh_panel()

    async def action_regenerate(self) -> None:
        if not self.need_session() or not self.idle("regenerate"):
            return
        messages = self.chat.messages
        if messages and messages[-1].role == "assistant":
            messages.pop()
            await self.transcript.query(AssistantMessage).last().remove()
        if not messages or messages[-1].role != "user":
            self.notify("Nothing to regenerate yet: send a message first.", severity="warning")
            return
        await self._start_turn()

    def open_chat(self, chat_id: str) -> None:
        self.run_worker(self._open_chat(chat_id), group="open", exclusive=True)

    async def _open_chat(self, chat_id: str) -> None:
        if not self.idle("open another chat"):
            return
        try:
            self.chat = history.load_chat(chat_id)
        except UserError as e:
            self.notify(str(e), severity="error")
            return
        self.turn, self.traced, self.editing = None, [], None
        await self._show_chat()
        self.notify(f"Opened “{self.chat.title or self.chat.id}”", timeout=3)
        self.app.restore_setup(self.chat)

    def show_problem(self, message: str) -> None:
        self.notify(message, title="Unreadable chat", severity="error", timeout=10)

    def action_chats(self) -> None:
        self.app.push_screen(ChatsScreen(self.chat.id), self._chats_closed)

    async def _chats_closed(self, picked: Picked) -> None:
        """The picker closed: open the chosen chat; if it deleted the open one, start anew."""
        if self.chat.id in picked.renamed:
            self.chat.title = picked.renamed[self.chat.id]  # so its next save keeps the name
        if picked.open is not None:
            self.open_chat(picked.open)
        elif self.chat.id in picked.deleted:
            self.chat = history.new_chat(self.setup.preset)
            self.turn, self.traced, self.editing = None, [], None
            await self._show_chat()

    def action_export(self) -> None:
        if not self.chat.messages:
            self.notify("Nothing to export yet.", severity="warning")
            return
        name = f"spectui-chat-{self.chat.id}.md"
        try:
            path = paths.write_export(name, lambda p: history.export_markdown(self.chat, p))
        except UserError as e:
            self.notify(str(e), title="Export failed", severity="error")
            return
        self.notify(str(path), title="Exported to Markdown", timeout=8)

    def action_save_trace(self) -> None:
        if not self.traced:
            self.notify("No answer in this chat since it was opened: nothing to trace yet.", severity="warning")
            return
        trace = Trace(self.trace_header, self.traced)
        try:
            path = paths.write_export(f"spectui-trace-{self.chat.id}.jsonl", trace.write)
        except UserError as e:
            self.notify(str(e), title="Trace not saved", severity="error")
            return
        self.notify(f"{path}\nreplay it with: spectui replay {path.name}",
                    title=f"Saved the trace of {len(self.traced)} answer(s)", timeout=8)

    def action_toggle_record_traces(self) -> None:
        self.app.remember("record_traces", not self.settings["record_traces"])
        where = paths.traces_dir()
        self.notify(f"Every answer is now appended to {where}/<chat id>.jsonl" if self.settings["record_traces"]
                    else "Chats are no longer recorded (f3 still saves this chat's trace)", timeout=5)

    def action_copy_answer(self, code: bool = False) -> None:
        """Copy the last answer's text (never rejected tokens), or its last code block."""
        answer = next((m for m in reversed(self.chat.messages) if m.role == "assistant"), None)
        if answer is None or not answer.content:
            self.notify("No answer to copy yet.", severity="warning")
            return
        text, what = answer.content, "the last answer"
        if code:
            text, what = last_code_block(answer.content), "its last code block"
            if text is None:
                self.notify("The last answer has no code block.", severity="warning")
                return
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {what} ({len(text)} characters).", timeout=3)

    def action_rounds(self) -> None:
        if self.turn is None or not self.turn.rounds:
            self.notify("No rounds yet: the round details show the last answer given in this session.",
                        severity="warning")
            return
        self.app.push_screen(RoundsScreen(self.turn.rounds, self.turn.message.config))

    # --- view toggles -------------------------------------------------------------

    async def _redraw_answers(self) -> None:
        overlay, rejected = self.settings["show_overlay"], self.settings["show_rejected"]
        with self.app.batch_update():
            for w in self.query(AssistantMessage):
                await w.set_view(overlay, rejected)

    async def action_toggle_overlay(self) -> None:
        self.app.remember("show_overlay", not self.settings["show_overlay"])
        await self._redraw_answers()
        self.notify("Overlay on" if self.settings["show_overlay"] else "Overlay off: answers as Markdown", timeout=2)

    async def action_toggle_rejected(self) -> None:
        self.app.remember("show_rejected", not self.settings["show_rejected"])
        await self._redraw_answers()
        shown = self.settings["show_rejected"]
        note = "" if self.settings["show_overlay"] else " (visible with the overlay on)"
        self.notify(f"Rejected tokens {'shown' if shown else 'hidden'}{note}", timeout=2)

    def action_toggle_panel(self) -> None:
        self.app.remember("show_panel", not self.settings["show_panel"])
        self.set_class(not self.settings["show_panel"], "-no-panel")
        self.refresh_panel()

    def on_screen_resume(self) -> None:
        self.refresh_panel()  # back from the A/B view, which ran the session
    # --- panel and status ---------------------------------------------------------

    def watch_status_line(self, content: Content | str) -> None:
        if self._shown:
            try:
                status = self.query_one("#status", Static)
            except NoMatches:  # the app is closing: its widgets go before a late message
                return
            status.update(content)
            status.display = bool(content)

    def watch_memory(self) -> None:
        if not self.generating:  # while an answer streams, its next panel redraw shows it
            self.refresh_panel()

    def refresh_panel(self) -> None:
        if not self._shown:
            return  # on_mount draws it
        self._last_panel = time.monotonic()
        status = self.status()
        events = self.turn.events if self.turn else []
        if status is None:  # loading: what the setup asks for
            spec = self.setup.spec()
            state = PanelState(spec=spec, verify=spec.verify, events=events, memory=self.memory)
        else:
            state = PanelState(spec=status.spec, verify=status.verify, events=events, baseline=self.baseline(),
                               n_ctx=status.n_ctx, n_past=self._context_used(), memory=self.memory)
        try:
            panel, strip = self.panel, self.query_one(StatusStrip)
        except NoMatches:  # the app is closing: its widgets go before a late memory reading
            return
        panel.state = state
        strip.state = state

    def _context_used(self) -> int | None:
        """This chat's tokens in the context (not the session's cache, which a new chat or
        the A/B view leaves holding other text); None: not counted until the next answer."""
        rounds = self.turn.rounds if self.turn else []
        if rounds:
            return rounds[-1].n_past
        return None if self.chat.messages else 0
