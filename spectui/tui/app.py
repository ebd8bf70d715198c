"""The app: owns the chat controller (spectui/chat/) and hands each screen the chat's part it
needs, runs the blocking work (loading a pair) in workers, holds themes and settings, and pushes
the screens (chat, A/B, help, settings). The parts' updates go to the chat screen as Textual messages;
what it does not show bubbles up here: notices (toasts), and the loading and measuring it runs.
It accepts an open session (tests load a model once per module) or a Setup to load."""

from __future__ import annotations

import asyncio
import io
import signal
from collections.abc import Callable
from functools import partial
from pathlib import Path

from rich.console import Console
from textual import work
from textual.app import App

from spectui.chat.controller import ChatController
from spectui.chat.loading import load_session
from spectui.chat.memory_check import PickerFit
from spectui.chat.updates import Load, Measure, Notice, SwitchFailed, Update
from spectui.config import paths, presets
from spectui.config.assembly import TextReport
from spectui.config.embedded import CATALOG
from spectui.config.model_choice import draft_misfit, model_name, not_a_model
from spectui.config.recent import recent_models
from spectui.config.setup import Setup
from spectui.engine.interface import ChatSession
from spectui.engine.resources import memory_text
from spectui.errors import UserError
from spectui.store import chat_types
from spectui.tui.commands import bindings
from spectui.tui.header import header
from spectui.tui.measuring import Measuring
from spectui.tui.messages import ChatUpdate, MemoryMeasured, SessionFailed, SessionLoaded, SessionLoading
from spectui.tui.palette import SpecCommands
from spectui.tui.screens.ab import ABScreen
from spectui.tui.screens.chat import ChatScreen
from spectui.tui.screens.help import HelpScreen
from spectui.tui.screens.name import NameScreen
from spectui.tui.screens.settings import SettingsScreen
from spectui.tui.themed import ThemedApp


class SpecApp(ThemedApp, Measuring):
    TITLE = "spectui"
    COMMANDS = App.COMMANDS | {SpecCommands}
    BINDINGS = bindings(chat=False)

    def __init__(
        self,
        setup: Setup,
        session: ChatSession | None = None,
        chat: chat_types.Chat | None = None,
        environment: dict | None = None,
        fit_checked: bool = False,
    ):
        """`environment`: what traces record of a given session's models and machine (collected
        for sessions loaded here); `fit_checked`: the setup's memory was projected before it opened."""
        super().__init__()
        self.controller = ChatController(setup, self.settings, self._post, chat, session, environment)
        self.chat_screen = ChatScreen(self.controller, self.settings)
        self.fit_checked = fit_checked
        self.picker_fit = PickerFit()

    async def on_mount(self) -> None:
        self.apply_themes()
        self.set_interval(2.0, self._measure_memory)
        self._measure_memory()
        if self.controller.state.session is None:
            self.controller.switcher.load(self.controller.state.setup, checked=self.fit_checked)
        self.controller.persistence.say_damage()
        try:  # a closed terminal, a kill or an interrupt ends the chat as ctrl+c twice does: saved, terminal restored
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                asyncio.get_running_loop().add_signal_handler(sig, self.call_next, self.action_quit)
        except (RuntimeError, ValueError):  # not the main thread (a test's app): no handlers
            pass

    def get_default_screen(self) -> ChatScreen:
        return self.chat_screen

    def _post(self, update: Update) -> None:
        """The chat's parts' one channel to the screen (chat/updates.py)."""
        self.chat_screen.post_message(ChatUpdate(update))

    def on_chat_update(self, msg: ChatUpdate) -> None:
        """The updates the chat screen lets bubble up: notices, and the work that blocks."""
        update = msg.update
        if isinstance(update, Notice):
            self.notify(update.text, title=update.title, severity=update.severity, timeout=update.timeout)
        elif isinstance(update, SwitchFailed):
            models = header(self.controller.state)[1]
            self.notify(
                f"{update.error}\nStill on {models}.", title="Models not switched", severity="error", timeout=15
            )
        elif isinstance(update, Load):
            self._load(update.setup, update.models, update.fitted)
        elif isinstance(update, Measure):
            self._measure(update.run)

    # --- loading ------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self, setup: Setup, models: tuple[str, str | None] | None, fitted: Setup | None) -> None:
        post = self.post_message
        post(SessionLoading(f"preparing {model_name(models[0] if models else setup.model or '')}"))
        try:
            # an embedded model's assembly progress goes nowhere: the status line shows the load
            quiet = TextReport(io.StringIO())
            session, setup, environment = load_session(setup, models, lambda s: post(SessionLoading(s)), quiet, fitted)
        except UserError as e:
            post(SessionFailed(str(e)))
        except Exception as e:  # a llama.cpp failure must leave the app usable (switch preset)
            post(SessionFailed(f"{type(e).__name__}: {e}"))
        else:
            post(SessionLoaded(session, setup, environment))

    def on_session_loading(self, msg: SessionLoading) -> None:
        self.controller.switcher.loading_status(msg.status)

    def on_session_failed(self, msg: SessionFailed) -> None:
        self.controller.session_failed(msg.error)

    def on_session_loaded(self, msg: SessionLoaded) -> None:
        self.controller.session_loaded(msg.session, msg.setup, msg.environment)

    # --- screens ------------------------------------------------------------------

    def action_compare(self) -> None:
        state, persistence = self.controller.state, self.controller.persistence
        if (session := state.start_compare()) is not None:
            self.push_screen(
                ABScreen(session, state.setup, self.settings.show_rejected, persistence.trace_header("A/B")),
                lambda _: state.end_compare(),
            )

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_toggle_record_traces(self) -> None:
        self.remember("record_traces", not self.settings.record_traces)
        self.notify(
            f"Every answer is now appended to {paths.traces_dir()}/<chat id>.jsonl"
            if self.settings.record_traces
            else "Chats are no longer recorded (f3 still saves this chat's trace)",
            timeout=5,
        )

    def show_problem(self, message: str) -> None:
        self.notify(message, title="Unreadable chat", severity="error", timeout=10)

    # --- presets ------------------------------------------------------------------

    def action_switch_preset(self) -> None:
        entries = [(p.name, partial(self.controller.switcher.load_preset, p.name), p.about) for p in presets.listed()]
        self.search_commands(entries, placeholder="Switch to preset…")

    def action_save_preset(self) -> None:
        if self.controller.state.need_session():
            self.push_screen(
                NameScreen(
                    "Save the current configuration as a user preset named:",
                    placeholder="e.g. my-ngram",
                    refuse=presets.name_problem,
                ),
                lambda name: self.controller.switcher.save_preset(name) if name else None,
            )

    # --- settings and models ---------------------------------------------------------

    def action_settings(self, focus: str | None = None) -> None:
        """Open any time but during a load or the A/B view (which runs the session itself)."""
        state = self.controller.state
        busy = (
            "The A/B view is open: close it (esc) first."
            if state.comparing
            else ("The models are loading: change settings when they are ready." if state.loading else "")
        )
        if busy:
            self.notify(busy, severity="warning")
        elif state.need_session():
            self.push_screen(SettingsScreen(self.controller.switcher, focus))

    def action_switch_models(self) -> None:
        if self.controller.state.idle("switch models"):
            self.search_commands(
                self._model_entries(self._pick_draft), placeholder="Target model (the one that answers)…"
            )

    def _model_entries(
        self, then, target: str | None = None, fits: dict[str | None, str | None] | None = None
    ) -> list[tuple[str, Callable[[], object], str]]:
        """The picker's rows: the embedded models, recent GGUF files, another file; drafts for
        `target`, with those that cannot draft for it marked, and whether each pair `fits`."""
        fits = fits or {}
        rows: list[tuple[str, Callable[[], object], str]] = []
        if target is not None:
            about = _with_fit(fits.get(None), "n-gram types and auto only")
            rows.append(("No draft model", partial(then, None), about))
        for title, value, about in _choices():
            misfit = draft_misfit(target, value) if target is not None else None
            rows.append((title, partial(then, value), f"✗ {misfit}" if misfit else _with_fit(fits.get(value), about)))
        rows.append(("Another GGUF file…", partial(self._ask_file, then), "type its path"))
        return rows

    def _ask_file(self, then) -> None:
        def entered(path: str | None) -> None:
            if path and (why := not_a_model(path)):
                self.notify(why, title="Another GGUF file", severity="error", timeout=10)
            elif path:
                then(path)

        self.push_screen(NameScreen("Path of the GGUF file:", placeholder="~/models/model.gguf"), entered)

    def _pick_draft(self, target: str) -> None:
        """The drafts for `target`, each said to fit or not: projected in a worker the first
        time, at once from then on (for the same memory settings)."""
        drafts = [None, *(v for _, v, _ in _choices() if draft_misfit(target, v) is None)]
        setup = self.controller.state.setup
        if self.picker_fit.known(setup, target, drafts):
            self._show_drafts(target, drafts)
        else:
            self.notify("checking memory…", timeout=2)
            self._fit_drafts(setup, target, drafts)

    @work(thread=True, exclusive=True, group="fit", exit_on_error=False)
    def _fit_drafts(self, setup: Setup, target: str, drafts: list[str | None]) -> None:
        for draft in drafts:
            self.picker_fit.said(setup, target, draft)
        self.call_from_thread(self._show_drafts, target, drafts)

    def _show_drafts(self, target: str, drafts: list[str | None]) -> None:
        setup = self.controller.state.setup
        fits = {d: self.picker_fit.said(setup, target, d) for d in drafts}  # known by now: no projection here
        self.call_later(
            self.search_commands,
            self._model_entries(partial(self.controller.switcher.switch_models, target), target, fits),
            placeholder=f"Draft model for {model_name(target)}…",
        )

    # --- memory and leaving -------------------------------------------------------

    @work(thread=True, exclusive=True, group="memory", exit_on_error=False)
    def _measure_memory(self) -> None:
        session = self.controller.state.session
        self.post_message(MemoryMeasured(session.memory_text() if session is not None else memory_text()))

    def on_memory_measured(self, msg: MemoryMeasured) -> None:
        self.controller.state.memory = msg.text
        if not self.controller.state.generating:  # while an answer streams, its next panel redraw shows it
            self.chat_screen.refresh_panel()

    def on_unmount(self) -> None:
        self.controller.save()  # however the app ends, what was shown is on disk
        self.controller.switcher.stop_measuring()

    def run_reporting(self) -> int:
        """As the app's, and when the chat could not be saved, keep it in a Markdown file and
        exit 1 with a line saying where (the terminal is the user's again by then)."""
        code = super().run_reporting()
        if not self.controller.persistence.unsaved:
            return code
        kept = self.controller.persistence.keep_unsaved()
        where = f"kept in {kept}; the next start adds them to the chat" if kept else "and could not be written anywhere"
        Console(stderr=True, soft_wrap=True).print(
            f"error: the chat could not be saved to {self.controller.library.store_path()}; its messages are {where}",
            highlight=False,
        )
        return code or 1

    async def action_quit(self) -> None:
        """Stop a running answer first, so the worker ends and the partial answer is saved."""
        self.controller.conversation.stop()
        self.controller.save()
        self.controller.persistence.quitting = True  # the save at unmount is not retried if this one failed
        self.exit()


def _choices() -> list[tuple[str, str, str]]:
    """The models the picker offers: (title, value, what it is)."""
    choices = [(m.title, name, f"embedded ({name}): {m.description}") for name, m in CATALOG.items()]
    return choices + [(Path(p).name, p, f"recent: {p}") for p in recent_models()]


def _with_fit(fit: str | None, about: str) -> str:
    return f"{fit} · {about}" if fit else about
