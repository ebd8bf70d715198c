"""The chat app: transcript, input, stats panel; generation and model loading in workers.

Data flows one way: workers post messages up (TurnEvents, SessionLoaded, ...), the app
updates its state (LiveTurn, the Chat) and tells widgets to redraw. The app accepts an
open Session (tests load a model once per module) or a Setup to load in a worker.
"""

from __future__ import annotations

import argparse
import io
import threading
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from rich.console import Console
from textual import on, work
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.theme import Theme
from textual.widgets import Footer, Header, Static

from spectui import history, presets
from spectui.engine import GenerationLimits, Session
from spectui.errors import UserError
from spectui.events import Round, StopReason
from spectui.launch import Setup, open_session, resolve
from spectui.resources import describe_gpu, process_rss
from spectui.settings import load_settings, save_settings
from spectui.spec_config import N_MAX_LIMIT, SpecConfig
from spectui.themes import load_themes
from spectui.tui.ab_screen import ABScreen
from spectui.tui.chat_input import ChatInput
from spectui.tui.commands import SpecCommands, bindings, chat_entries
from spectui.tui.help_screen import HelpScreen
from spectui.tui.message_view import AssistantMessage, UserMessage
from spectui.tui.name_screen import NameScreen
from spectui.tui.overlay_view import legend_lines
from spectui.tui.redraw import update_in_place
from spectui.tui.stats_view import PanelState, render
from spectui.tui.streaming import TurnEvents, TurnFailed, run_turn
from spectui.tui.turn import LiveTurn

DEFAULT_THEME = "spectui-dark"
SAVE_EVERY_S = 2.0  # the partial answer is saved this often while it streams
PANEL_EVERY_S = 1.0  # the stats panel redraws this often while an answer streams
BASELINES_KEPT = 5  # recent `none` turns remembered per target model
MIN_BASELINE_TOKENS = 16  # shorter `none` turns are too noisy to compare against
# Flags a preset switch drops: the models and the speculation are what a preset chooses.
PRESET_OWNED = {"preset", "model", "model_draft", "n_gpu_layers", "n_gpu_layers_draft", "cache_type_k_draft",
                "cache_type_v_draft", "spec_type", "spec_default", "spec_draft_n_max", "spec_draft_n_min",
                "spec_draft_p_min", "spec_draft_sampling", "spec_verify"}


def memory_text() -> str:
    """VRAM per GPU (or "GPU: none (CPU)") and this process's resident memory."""
    return f"{describe_gpu()}\nRSS {process_rss() / 2**20:.0f} MiB"


@dataclass
class SessionLoading(Message):
    status: str


@dataclass
class SessionLoaded(Message):
    session: Session
    setup: Setup


@dataclass
class SessionFailed(Message):
    error: str


@dataclass
class MemoryMeasured(Message):
    text: str


class SpecApp(App):
    CSS_PATH = "app.tcss"
    TITLE = "spectui"
    COMMANDS = App.COMMANDS | {SpecCommands}
    BINDINGS = bindings()

    def __init__(self, setup: Setup, session: Session | None = None, chat: history.Chat | None = None,
                 flags: dict | None = None):
        """`flags`: the setup flags given on the command line; a preset switch keeps those
        that are not the preset's business (sampling, context, system prompt)."""
        super().__init__()
        self.setup = setup
        self.flags = {k: v for k, v in (flags or {}).items() if k not in PRESET_OWNED}
        self.session = session
        self._owns_session = False  # only sessions this app loaded are closed by it
        self.chat = chat or history.new_chat(setup.preset)
        self.settings, self._settings_problem = load_settings()
        self.turn: LiveTurn | None = None  # the answer streaming now, or the last one
        self.baselines: dict[str, list[float]] = {}  # target model path -> recent `none` tok/s
        self.memory = ""
        self.models = ""  # "target ⇠ draft", for the header
        self._answer: AssistantMessage | None = None
        self._stop = threading.Event()
        self._last_save = self._last_panel = 0.0

    # --- layout -------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(icon="◆")
        with Horizontal(id="body"):
            with Vertical(id="chat"):
                yield VerticalScroll(id="transcript")
                yield Static(id="status")
                yield ChatInput(id="input", placeholder="Ask anything · enter sends · ctrl+j new line · ? help")
            with VerticalScroll(id="panel"):
                yield Static(id="stats")
        yield Footer()

    @property
    def transcript(self) -> VerticalScroll:
        return self.query_one("#transcript", VerticalScroll)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Overlay colours for themes without `spec-*` variables (Textual's own themes):
        taken from the theme's semantic colours, so they suit it."""
        v = self.current_theme.to_color_system().generate()
        return {"spec-draft": v["success"], "spec-ngram": v["primary"], "spec-target": v["foreground"],
                "spec-resampled": v["warning"], "spec-rejected": v["error"]}

    async def on_mount(self) -> None:
        themes, problems = load_themes()
        for theme in themes:
            self.register_theme(theme)
        for problem in problems + ([self._settings_problem] if self._settings_problem else []):
            self.notify(problem, severity="warning", timeout=8)
        wanted = self.settings["theme"]
        self.theme = wanted if wanted in self.available_themes else (
            DEFAULT_THEME if DEFAULT_THEME in self.available_themes else self.theme)
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        self.query_one("#panel").display = self.settings["show_panel"]
        await self._show_chat()
        self.set_interval(2.0, self._measure_memory)
        self._measure_memory()
        self.query_one(ChatInput).focus()
        if self.session is None:
            self._load(self.setup)
        else:
            self._session_ready()

    # --- loading ------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self, setup: Setup) -> None:
        post = self.post_message
        post(SessionLoading(f"preparing {setup.model}"))
        try:
            session = open_session(setup, status=lambda s: post(SessionLoading(s)),
                                   console=Console(file=io.StringIO()))
        except UserError as e:
            post(SessionFailed(str(e)))
        except Exception as e:  # a llama.cpp failure must leave the app usable (switch preset)
            post(SessionFailed(f"{type(e).__name__}: {e}"))
        else:
            post(SessionLoaded(session, setup))

    def on_session_loading(self, msg: SessionLoading) -> None:
        self.title, self.sub_title = "spectui", "loading…"
        self._status(Content.assemble(("◌ ", "$accent"), msg.status, "…"))

    def on_session_failed(self, msg: SessionFailed) -> None:
        self.title, self.sub_title = "spectui", "no model loaded"
        self._status(Content.styled(f"could not load the models: {msg.error}", "$error"))
        self.notify(msg.error, title="Loading failed", severity="error", timeout=15)

    def on_session_loaded(self, msg: SessionLoaded) -> None:
        self.session, self.setup, self._owns_session = msg.session, msg.setup, True
        self.chat.preset = self.chat.preset or msg.setup.preset
        self._session_ready()

    def _session_ready(self) -> None:
        s = self.session
        self.models = f"{s.target.name}" + (f" ⇠ draft {s.draft.name}" if s.draft else " (no draft model)")
        self._status("")
        self._config_changed()

    def _close_session(self) -> None:
        if self.session is not None and self._owns_session:
            self.session.close()
            for model in {id(m): m for m in (self.session.target, self.session.draft) if m}.values():
                model.close()
        self.session = None

    # --- spec configuration (applies at the next round, even mid-answer) ----------

    def available_types(self) -> tuple[str, ...]:
        return self.session.available_types() if self.session else ()

    def _need_session(self) -> bool:
        if self.session is None:
            self.notify("The models are still loading.", severity="warning")
        return self.session is not None

    def _configure(self, spec: SpecConfig) -> None:
        if self.comparing:
            self.notify("The A/B view uses the models: choose its configurations there, or close it (esc).",
                        severity="warning")
            return
        try:
            self.session.configure(spec)
        except UserError as e:
            self.notify(str(e), severity="error")
            return
        self._config_changed()

    def set_spec_type(self, spec_type: str) -> None:
        if self._need_session():
            self._configure(self.session.spec.with_types(spec_type))

    def action_spec_type(self, step: int) -> None:
        if not self._need_session():
            return
        types = self.available_types()
        current = self.session.spec.types[0]
        i = types.index(current) if current in types else 0
        self.set_spec_type(types[(i + step) % len(types)])

    def action_n_max(self, step: int) -> None:
        if self._need_session():
            spec = self.session.spec
            self._configure(spec.replace(draft_n_max=min(max(spec.draft_n_max + step, 1), N_MAX_LIMIT)))

    def _verify_mode(self, spec: SpecConfig) -> str:
        return "greedy" if self.session and self.session.sampling.greedy else spec.verify

    def _config_changed(self) -> None:
        spec = self.session.spec
        n_max = f"n-max {spec.draft_n_max} · " if spec.label != "none" else ""
        self.title = f"{spec.label} · {n_max}verify {self._verify_mode(spec)}"
        self.sub_title = self.models
        self._refresh_panel()

    # --- chat and generation ------------------------------------------------------

    @property
    def generating(self) -> bool:
        return self.turn is not None and self.turn.running

    @property
    def comparing(self) -> bool:
        """The A/B view is open: it runs the session, so the chat and its configuration wait."""
        return any(isinstance(s, ABScreen) for s in self.screen_stack)

    def _idle(self, doing: str) -> bool:
        if self.generating:
            self.notify(f"Stop the answer first (esc), then {doing}.", severity="warning")
        elif self.comparing:
            self.notify(f"Close the A/B view first (esc), then {doing}.", severity="warning")
        return not (self.generating or self.comparing)

    async def _show_chat(self) -> None:
        """Rebuild the transcript from self.chat (start, new chat, open chat)."""
        t = self.transcript
        await t.remove_children()
        if not self.chat.messages:
            await t.mount(Static(welcome(), id="welcome"))
        for m in self.chat.messages:
            if m.role == "user":
                await t.mount(UserMessage(m))
            elif m.role == "assistant":
                await t.mount(AssistantMessage(m, self.settings["show_overlay"], self.settings["show_rejected"]))
        t.scroll_end(animate=False)
        t.anchor()

    @on(ChatInput.Submitted)
    async def _ask(self, event: ChatInput.Submitted) -> None:
        if not self._need_session() or not self._idle("send"):
            return
        user = history.Message(role="user", content=event.text)
        self.chat.messages.append(user)
        await self._remove_welcome()
        await self.transcript.mount(UserMessage(user))
        await self._start_turn()

    async def _remove_welcome(self) -> None:
        for w in self.query("#welcome"):
            await w.remove()

    async def _start_turn(self) -> None:
        session = self.session
        self.turn = LiveTurn(session.spec)
        prompt = [{"role": m.role, "content": m.content} for m in self.chat.messages]
        if self.setup.system:
            prompt.insert(0, {"role": "system", "content": self.setup.system})
        self.chat.messages.append(self.turn.message)
        self._answer = AssistantMessage(self.turn.message, self.settings["show_overlay"],
                                        self.settings["show_rejected"], streaming=True)
        await self.transcript.mount(self._answer)
        self.transcript.scroll_end(animate=False)
        self.transcript.anchor()
        self._save()
        self._stop.clear()
        self.query_one(ChatInput).cursor_blink = False  # a blink is a repaint; keep the CPU for the model
        self._status(Content.assemble(("● ", "$success"), "generating", ("  esc stops", "$text-muted")))
        self._generate(session, prompt, GenerationLimits(n_predict=self.setup.n_predict))

    @work(thread=True, exclusive=True, group="generate", exit_on_error=False)
    def _generate(self, session: Session, prompt: list[dict], limits: GenerationLimits) -> None:
        run_turn(session, prompt, limits, self.post_message, self._stop)

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
        if now - self._last_panel >= PANEL_EVERY_S:
            self._refresh_panel()
        if now - self._last_save >= SAVE_EVERY_S:
            self._save()

    async def on_turn_failed(self, msg: TurnFailed) -> None:
        self.notify(msg.error, title="Generation failed", severity="error", timeout=10)
        self.query_one(ChatInput).cursor_blink = True
        turn, self.turn = self.turn, None
        if turn is not None and not turn.message.content:
            self.chat.messages.remove(turn.message)
            await self._answer.remove()
        elif turn is not None:
            await self._answer.finish()
        self._save()
        self._status("")

    async def _finish_turn(self) -> None:
        turn = self.turn
        self.query_one(ChatInput).cursor_blink = True
        await self._answer.finish()
        self._save()
        end = turn.end
        if end.error:
            self.notify(end.error, title=f"Answer ended: {end.stop_reason.value}", severity="error", timeout=10)
        self._record_baseline(turn)
        self._refresh_panel()
        self._status("")

    def _record_baseline(self, turn: LiveTurn) -> None:
        """A clean `none` turn on this target is the speedup baseline (best recent one)."""
        rounds = turn.rounds
        tok_s = turn.message.stats.get("tok_per_s")
        if (rounds and all(r.configured == "none" for r in rounds) and tok_s
                and turn.end.stop_reason in (StopReason.EOS, StopReason.N_PREDICT)
                and turn.message.stats.get("n_generated", 0) >= MIN_BASELINE_TOKENS):
            kept = self.baselines.setdefault(str(self.session.target.path), [])
            kept[:] = (kept + [tok_s])[-BASELINES_KEPT:]

    def baseline(self) -> float | None:
        kept = self.baselines.get(str(self.session.target.path)) if self.session else None
        return max(kept) if kept else None

    def _save(self) -> None:
        """Save the chat (atomically); a streaming answer is saved as stopped until it ends."""
        if self.turn is not None:
            self.turn.sync_stats()
        if not self.chat.messages:
            return
        try:
            history.save_chat(self.chat)
        except UserError as e:
            self.notify(str(e), title="Chat not saved", severity="error")
        self._last_save = time.monotonic()

    def action_stop(self) -> None:
        if self.generating:
            self._stop.set()
            self.session.cancel()
            self._status(Content.styled("stopping at the end of this round…", "$warning"))

    async def action_new_chat(self) -> None:
        if self._idle("start a new chat"):
            self.chat = history.new_chat(self.setup.preset)
            self.turn = None
            await self._show_chat()
            self._refresh_panel()

    async def action_regenerate(self) -> None:
        if not self._need_session() or not self._idle("regenerate"):
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
        if not self._idle("open another chat"):
            return
        try:
            self.chat = history.load_chat(chat_id)
        except UserError as e:
            self.notify(str(e), severity="error")
            return
        self.turn = None
        await self._show_chat()
        self._refresh_panel()
        self.notify(f"Opened “{self.chat.title or self.chat.id}”", timeout=3)

    def action_chats(self) -> None:
        entries = chat_entries(self)
        if not entries:
            self.notify("No saved chats yet.")
            return
        self.search_commands(entries, placeholder="Open a saved chat…")

    def action_export(self) -> None:
        if not self.chat.messages:
            self.notify("Nothing to export yet.", severity="warning")
            return
        name = f"spectui-chat-{self.chat.id}.md"
        try:
            path = history.export_markdown(self.chat, Path.cwd() / name)
        except UserError:  # the current dir is not writable: fall back to the data dir
            try:
                path = history.export_markdown(self.chat, history.data_dir() / "exports" / name)
            except UserError as e:
                self.notify(str(e), title="Export failed", severity="error")
                return
        self.notify(str(path), title="Exported to Markdown", timeout=8)

    def action_copy_answer(self) -> None:
        answer = next((m for m in reversed(self.chat.messages) if m.role == "assistant"), None)
        if answer is None or not answer.content:
            self.notify("No answer to copy yet.", severity="warning")
            return
        self.copy_to_clipboard(answer.content)
        self.notify(f"Copied the last answer ({len(answer.content)} characters).", timeout=3)

    # --- view toggles and settings ------------------------------------------------

    def _set(self, key: str, value) -> None:
        self.settings[key] = value
        try:
            save_settings(self.settings)
        except UserError as e:
            self.notify(str(e), title="Settings not saved", severity="warning")

    async def _redraw_answers(self) -> None:
        overlay, rejected = self.settings["show_overlay"], self.settings["show_rejected"]
        with self.batch_update():
            for w in self.query(AssistantMessage):
                await w.set_view(overlay, rejected)

    async def action_toggle_overlay(self) -> None:
        self._set("show_overlay", not self.settings["show_overlay"])
        await self._redraw_answers()
        self.notify("Overlay on" if self.settings["show_overlay"] else "Overlay off: answers as Markdown", timeout=2)

    async def action_toggle_rejected(self) -> None:
        self._set("show_rejected", not self.settings["show_rejected"])
        await self._redraw_answers()
        shown = self.settings["show_rejected"]
        note = "" if self.settings["show_overlay"] else " (visible with the overlay on)"
        self.notify(f"Rejected tokens {'shown' if shown else 'hidden'}{note}", timeout=2)

    def action_toggle_panel(self) -> None:
        panel = self.query_one("#panel")
        panel.display = not panel.display
        self._set("show_panel", panel.display)
        self._refresh_panel()

    def _remember_theme(self, theme: Theme) -> None:
        if theme.name != self.settings["theme"]:
            self._set("theme", theme.name)

    def action_cycle_theme(self) -> None:
        names = list(self.available_themes)
        self.theme = names[(names.index(self.theme) + 1) % len(names)] if self.theme in names else names[0]
        self.notify(f"Theme: {self.theme}", timeout=2)

    def action_choose_theme(self) -> None:
        self.search_themes()

    def action_compare(self) -> None:
        if not self.comparing and self._need_session() and self._idle("compare"):
            self.push_screen(ABScreen(self.session, self.setup.system, GenerationLimits(n_predict=self.setup.n_predict),
                                      self.settings["show_rejected"]))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    # --- presets ------------------------------------------------------------------

    def action_switch_preset(self) -> None:
        entries = [(name, partial(self.load_preset, name), f"{'shipped' if shipped else 'user'}: {path}")
                   for name, (path, shipped) in presets.available().items()]
        self.search_commands(entries, placeholder="Switch to preset…")

    def load_preset(self, name: str) -> None:
        """Resolve the preset now (bad files fail here, with the reason), load in a worker."""
        if not self._idle("switch presets"):
            return
        try:
            setup = resolve(argparse.Namespace(**self.flags, preset=name))
        except UserError as e:
            self.notify(str(e), title=f"Preset {name}", severity="error", timeout=10)
            return
        self._close_session()
        self._load(setup)

    def action_save_preset(self) -> None:
        if self._need_session():
            self.push_screen(NameScreen("Save the current configuration as a user preset named:",
                                        placeholder="e.g. my-ngram"), self._save_preset)

    def _save_preset(self, name: str | None) -> None:
        if not name:
            return
        spec = self.session.spec
        values = self.setup.values | {
            "spec_type": spec.label, "spec_draft_n_max": spec.draft_n_max, "spec_draft_n_min": spec.draft_n_min,
            "spec_draft_p_min": spec.draft_p_min, "spec_draft_sampling": spec.draft_sampling,
            "spec_verify": spec.verify,
        }
        try:
            path = presets.save_user(name, values, f"saved from the chat: {spec.label}, n-max {spec.draft_n_max}")
        except UserError as e:
            self.notify(str(e), severity="error")
            return
        self.notify(str(path), title=f"Saved preset {name}", timeout=6)

    # --- panel, status, memory ----------------------------------------------------

    def _status(self, content: Content | str) -> None:
        status = self.query_one("#status", Static)
        status.update(content)
        status.display = bool(content)

    @work(thread=True, exclusive=True, group="memory", exit_on_error=False)
    def _measure_memory(self) -> None:
        self.post_message(MemoryMeasured(memory_text()))

    def on_memory_measured(self, msg: MemoryMeasured) -> None:
        if msg.text != self.memory:
            self.memory = msg.text
            self._refresh_panel()

    def _refresh_panel(self) -> None:
        self._last_panel = time.monotonic()
        panel = self.query_one("#panel")
        if not panel.display:
            return
        session = self.session
        spec = session.spec if session else self.setup.spec()
        events = self.turn.events if self.turn else []
        rounds = [e for e in events if isinstance(e, Round)]
        if self.generating and rounds:
            n_past = rounds[-1].n_past
        else:
            n_past = session.ctx.n_past if session else 0
        state = PanelState(
            spec=spec, verify=self._verify_mode(spec), events=events, baseline=self.baseline(),
            n_ctx=session.ctx.n_ctx if session else 0, n_past=n_past, memory=self.memory,
        )
        update_in_place(self.query_one("#stats", Static), render(state))

    # --- leaving --------------------------------------------------------------------

    def on_unmount(self) -> None:
        self._save()  # however the app ends, what was shown is on disk

    async def action_quit(self) -> None:
        """Stop a running answer first, so the worker ends and the partial answer is saved."""
        if self.generating:
            self._stop.set()
            self.session.cancel()
        self._save()
        self.exit()


def welcome() -> Content:
    lines = [
        Content.styled("spectui", "bold $primary"),
        Content("Watch speculative decoding as the answer streams: drafted tokens the target accepted are "
                "coloured by where they came from; rejected drafts show struck through."),
        Content(""),
        *legend_lines(),
        Content(""),
        Content.styled("enter sends · ctrl+j new line · ctrl+t spec type · ctrl+↑/↓ n-max · "
                       "? help · ctrl+p commands", "$text-muted"),
    ]
    return Content("\n").join(lines)
