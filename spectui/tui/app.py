"""The app: loads the session in a worker, owns presets, themes and settings, and pushes
the screens (chat, A/B, help). The chat itself lives in screens/chat.py.

The app accepts an open Session (tests load a model once per module) or a Setup to load.
What it learns (a loaded session, the memory in use) it sets on the chat screen.
"""

from __future__ import annotations

import io
from functools import partial

from rich.console import Console
from textual import work
from textual.app import App
from textual.content import Content

from spectui.bench.environment import collect
from spectui.config import history, presets
from spectui.config.launch import open_session, resolve
from spectui.config.setup import Setup, kept_across_presets
from spectui.engine.resources import memory_text
from spectui.engine.session import GenerationLimits, Session
from spectui.errors import UserError
from spectui.trace import format as trace_format
from spectui.tui.commands import SpecCommands, bindings
from spectui.tui.messages import MemoryMeasured, SessionFailed, SessionLoaded, SessionLoading
from spectui.tui.screens.ab import ABScreen
from spectui.tui.screens.chat import ChatScreen
from spectui.tui.screens.help import HelpScreen
from spectui.tui.screens.name import NameScreen
from spectui.tui.themed import ThemedApp


class SpecApp(ThemedApp):
    TITLE = "spectui"
    COMMANDS = App.COMMANDS | {SpecCommands}
    BINDINGS = bindings(chat=False)

    def __init__(self, setup: Setup, session: Session | None = None, chat: history.Chat | None = None,
                 overrides: dict | None = None, environment: dict | None = None):
        """`overrides`: the options given on the command line; a preset switch keeps those
        that are not the preset's business (sampling, context, system prompt).
        `environment`: what traces record of a given session's models and machine (the app
        collects it for the sessions it loads)."""
        super().__init__()
        self.setup = setup
        self.environment = environment or {}
        self.overrides = kept_across_presets(overrides or {})
        self.session = session
        self._owns_session = False  # only sessions this app loaded are closed by it
        self.chat_screen = ChatScreen(chat or history.new_chat(setup.preset), self.settings, setup)

    async def on_mount(self) -> None:
        self.apply_themes()
        self.set_interval(2.0, self._measure_memory)
        self._measure_memory()
        if self.session is None:
            self._load(self.setup)
        else:
            self.chat_screen.trace_header = self.trace_header("spectui chat")
            self.chat_screen.session = self.session

    def get_default_screen(self) -> ChatScreen:
        return self.chat_screen

    # --- loading ------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self, setup: Setup) -> None:
        post = self.post_message
        post(SessionLoading(f"preparing {setup.model}"))
        try:
            session = open_session(setup, status=lambda s: post(SessionLoading(s)),
                                   console=Console(file=io.StringIO()))
            environment = collect(session, setup, hash_files=False)
        except UserError as e:
            post(SessionFailed(str(e)))
        except Exception as e:  # a llama.cpp failure must leave the app usable (switch preset)
            post(SessionFailed(f"{type(e).__name__}: {e}"))
        else:
            post(SessionLoaded(session, setup, environment))

    def on_session_loading(self, msg: SessionLoading) -> None:
        self.chat_screen.title, self.chat_screen.sub_title = "spectui", "loading…"
        self.chat_screen.status_line = Content.assemble(("◌ ", "$accent"), msg.status, "…")

    def on_session_failed(self, msg: SessionFailed) -> None:
        self.chat_screen.title, self.chat_screen.sub_title = "spectui", "no model loaded"
        self.chat_screen.status_line = Content.styled(f"could not load the models: {msg.error}", "$error")
        self.notify(msg.error, title="Loading failed", severity="error", timeout=15)

    def on_session_loaded(self, msg: SessionLoaded) -> None:
        self.session, self.setup, self._owns_session = msg.session, msg.setup, True
        self.environment = msg.environment
        chat = self.chat_screen.chat
        chat.preset = chat.preset or msg.setup.preset
        self.chat_screen.setup = msg.setup
        self.chat_screen.trace_header = self.trace_header("spectui chat")
        self.chat_screen.session = msg.session

    def trace_header(self, recorded_by: str) -> dict:
        """A trace's first line: the models and machine, and the settings in force now."""
        return trace_format.header(recorded_by, self.environment, self.setup.with_spec(self.session.spec).values())

    def _close_session(self) -> None:
        """Free a session this app loaded (a test's own session stays open)."""
        if self.session is not None and self._owns_session:
            self.session.close()
        self.session = self.chat_screen.session = None

    # --- screens ------------------------------------------------------------------

    @property
    def comparing(self) -> bool:
        """The A/B view is open: it runs the session, so the chat and its configuration wait."""
        return any(isinstance(s, ABScreen) for s in self.screen_stack)

    def action_compare(self) -> None:
        chat = self.chat_screen
        if not self.comparing and chat.need_session() and chat.idle("compare"):
            self.push_screen(ABScreen(self.session, self.setup.system, GenerationLimits(n_predict=self.setup.n_predict),
                                      self.settings["show_rejected"], self.trace_header("A/B")))

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
        if not self.chat_screen.idle("switch presets"):
            return
        try:
            setup = resolve(name, self.overrides)
        except UserError as e:
            self.notify(str(e), title=f"Preset {name}", severity="error", timeout=10)
            return
        self._close_session()
        self._load(setup)

    def action_save_preset(self) -> None:
        if self.chat_screen.need_session():
            self.push_screen(NameScreen("Save the current configuration as a user preset named:",
                                        placeholder="e.g. my-ngram"), self._save_preset)

    def _save_preset(self, name: str | None) -> None:
        if not name:
            return
        spec = self.session.spec
        try:
            path = presets.save_user(name, self.setup.with_spec(spec).values(),
                                     f"saved from the chat: {spec.label}, n-max {spec.draft_n_max}")
        except UserError as e:
            self.notify(str(e), severity="error")
            return
        self.notify(str(path), title=f"Saved preset {name}", timeout=6)

    # --- memory and leaving -------------------------------------------------------

    @work(thread=True, exclusive=True, group="memory", exit_on_error=False)
    def _measure_memory(self) -> None:
        session = self.session
        self.post_message(MemoryMeasured(session.memory_text() if session is not None else memory_text()))

    def on_memory_measured(self, msg: MemoryMeasured) -> None:
        self.chat_screen.memory = msg.text

    def on_unmount(self) -> None:
        self.chat_screen.save()  # however the app ends, what was shown is on disk

    async def action_quit(self) -> None:
        """Stop a running answer first, so the worker ends and the partial answer is saved."""
        self.chat_screen.stop()
        self.chat_screen.save()
        self.exit()
