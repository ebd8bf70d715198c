"""The chat controller: the one object the screens talk to, composing the chat's parts.

- `ChatState` (chat/state.py): the session, the setup, the chat shown, what runs, the A/B lock;
- `Conversation` (chat/conversation.py): sending, the queue, edits and each answer's life;
- `Persistence` (chat/persistence.py): saving, opening and exporting chats, traces, the store;
- `SetupSwitcher` (chat/switcher.py): the speculation, settings, presets and model switching.

It never touches a widget. Each method runs on the UI's thread and says what changed by
emitting updates (chat/updates.py); the work that blocks it hands on as an update whose
worker reports back: `Generate` to the chat screen (`add_events`, `turn_failed`), `Load` to
the app (`loading_status`, `session_loaded`, `session_failed`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from spectui.chat.conversation import Conversation
from spectui.chat.outlook import Outlook, outlook, plan_command
from spectui.chat.panel import PanelState
from spectui.chat.persistence import Persistence, Summary
from spectui.chat.state import ChatState
from spectui.chat.switcher import SetupSwitcher
from spectui.chat.turn import LiveTurn
from spectui.chat.updates import Update
from spectui.config.settings import Settings
from spectui.config.setup import Setup
from spectui.engine.events import Event, Round
from spectui.engine.interface import ChatSession, SessionStatus
from spectui.spec_config import SpecConfig
from spectui.store import chat_types
from spectui.trace.format import TraceTurn


class ChatController:
    def __init__(
        self,
        setup: Setup,
        settings: Settings,
        emit: Callable[[Update], object],
        chat: chat_types.Chat | None = None,
        session: ChatSession | None = None,
        environment: dict | None = None,
    ):
        """`settings`: the app's settings (read for `record_traces`); `session`: an
        open one to use (a test's), else the app loads `setup` on the first `Load`;
        `environment`: what traces record of that session's models and machine."""
        self.state = ChatState(
            setup=replace(setup, spec=session.spec) if session else setup,  # its spec is the session's
            settings=settings,
            emit=emit,
            chat=chat or chat_types.new_chat(setup.preset),
            session=session,
            environment=environment or {},
        )
        self.persistence = Persistence(self.state)
        self.conversation = Conversation(self.state, self.persistence)
        self.switcher = SetupSwitcher(self.state)

    # --- what the screens read (and the app sets) -------------------------------------

    @property
    def chat(self) -> chat_types.Chat:
        return self.state.chat

    @property
    def session(self) -> ChatSession | None:
        return self.state.session

    @property
    def setup(self) -> Setup:
        return self.state.setup

    @property
    def environment(self) -> dict:
        return self.state.environment

    @property
    def generating(self) -> bool:
        return self.state.generating

    @property
    def comparing(self) -> bool:
        return self.state.comparing

    @property
    def unsaved(self) -> bool:
        return self.state.unsaved

    @property
    def turn(self) -> LiveTurn | None:
        return self.conversation.turn

    @property
    def queued(self) -> list[str]:
        return self.conversation.queued

    @property
    def editing(self) -> chat_types.Message | None:
        return self.conversation.editing

    @property
    def answered(self) -> list[LiveTurn]:
        return self.conversation.answered

    @property
    def traced(self) -> list[TraceTurn]:
        return self.persistence.traced

    @property
    def inspect(self) -> bool:
        return self.switcher.inspect

    @property
    def loading(self) -> bool:
        return self.state.loading

    @loading.setter
    def loading(self, value: bool) -> None:
        self.state.loading = value

    @property
    def memory(self) -> str:
        return self.state.memory

    @memory.setter
    def memory(self, value: str) -> None:
        self.state.memory = value

    @property
    def quitting(self) -> bool:
        return self.state.quitting

    @quitting.setter
    def quitting(self, value: bool) -> None:
        self.state.quitting = value

    def status(self) -> SessionStatus | None:
        return self.state.status()

    def need_session(self) -> ChatSession | None:
        return self.state.need_session()

    def idle(self, doing: str) -> bool:
        return self.state.idle(doing)

    def panel_state(self) -> PanelState:
        return self.conversation.panel_state()

    def outlook(self) -> Outlook | None:
        """The welcome card's word on speed here, for the configuration in force."""
        s = self.state
        return outlook(s.setup.spec, s.curve, s.calibration, s.plannable, plan_command(s.setup))

    # --- the conversation ------------------------------------------------------------

    def submit(self, text: str) -> bool:
        return self.conversation.submit(text)

    def send_queued(self) -> None:
        self.conversation.send_queued()

    def edit_previous(self) -> None:
        self.conversation.edit_previous()

    def edit(self, message: chat_types.Message) -> None:
        self.conversation.edit(message)

    def cancel_edit(self) -> None:
        self.conversation.cancel_edit()

    def editable(self) -> list[tuple[str, chat_types.Message, str]]:
        return self.conversation.editable()

    def regenerate(self) -> None:
        self.conversation.regenerate()

    def add_events(self, events: list[Event]) -> None:
        self.conversation.add_events(events)

    def turn_failed(self, error: str) -> None:
        self.conversation.turn_failed(error)

    def stop(self) -> bool:
        return self.conversation.stop()

    def stop_or_cancel_edit(self) -> None:
        self.conversation.stop_or_cancel_edit()

    def last_answer(self) -> str | None:
        return self.conversation.last_answer()

    def last_rounds(self) -> tuple[list[Round], str] | None:
        return self.conversation.last_rounds()

    def new_chat(self) -> None:
        self.conversation.new_chat()

    # --- chats: saving, opening, exporting, traces -----------------------------------

    def save(self) -> None:
        self.persistence.save(self.conversation.turn)

    def keep_unsaved(self) -> Path | None:
        return self.persistence.keep_unsaved()

    def say_damage(self) -> None:
        self.persistence.say_damage()

    def export_markdown(self) -> None:
        self.persistence.export_markdown()

    def save_trace(self) -> None:
        self.persistence.save_trace()

    def trace_header(self, recorded_by: str) -> dict:
        return self.persistence.trace_header(recorded_by)

    def open_chat(self, chat_id: str) -> None:
        """Open a saved chat (its last messages) on the models and settings it ran with."""
        if not self.idle("open another chat") or (chat := self.persistence.open(chat_id)) is None:
            return
        self.conversation.show(chat)
        self.state.notify(f"Opened “{chat.title or chat.id}”", timeout=3)
        self.persistence.say_damage()
        self.switcher.restore(chat)

    def chats_changed(self, renamed: dict[str, str], deleted: set[str], open_id: str | None = None) -> None:
        """The saved chats picker renamed or deleted chats (keep the open one in step), and
        maybe picked one to open."""
        if self.chat.id in renamed:
            self.chat.title = renamed[self.chat.id]  # so its next save keeps the name
        if self.chat.id in deleted:
            self.stop()  # an answer to a deleted chat has nowhere to go
            self.conversation.show(chat_types.new_chat(self.setup.preset))
        if open_id is not None:
            self.open_chat(open_id)

    # --- the store, for the screens (they reach it only here) ---------------------------

    def list_chats(self) -> tuple[list[Summary], list[tuple[Path, str]]]:
        return self.persistence.list_chats()

    def search_chats(self, query: str) -> list[Summary]:
        return self.persistence.search(query)

    def rename_chat(self, chat_id: str, title: str) -> Summary:
        return self.persistence.rename_chat(chat_id, title)

    def delete_chat(self, chat_id: str) -> None:
        self.persistence.delete_chat(chat_id)

    def earlier_than(self, chat: chat_types.Chat, message: chat_types.Message, n: int) -> list[chat_types.Message]:
        return self.persistence.earlier_than(chat, message, n)

    def store_path(self) -> Path:
        return self.persistence.store_path()

    # --- the setup: speculation, loading, presets, settings ----------------------------

    def available_types(self) -> tuple[str, ...]:
        return self.switcher.available_types()

    def configure(self, spec: SpecConfig) -> bool:
        return self.switcher.configure(spec)

    def set_spec_type(self, spec_type: str) -> None:
        self.switcher.set_spec_type(spec_type)

    def cycle_spec_type(self, step: int) -> None:
        self.switcher.cycle_spec_type(step)

    def step_n_max(self, step: int) -> None:
        self.switcher.step_n_max(step)

    def toggle_inspect(self) -> None:
        self.switcher.toggle_inspect()

    def load(self, setup: Setup, models: tuple[str, str | None] | None = None, checked: bool = False) -> None:
        self.switcher.load(setup, models, checked)

    def loading_status(self, text: str) -> None:
        self.switcher.loading_status(text)

    def session_loaded(self, session: ChatSession, setup: Setup, environment: dict) -> None:
        self.switcher.session_loaded(session, setup, environment)
        self.conversation.send_queued()

    def measure(self) -> None:
        self.switcher.measure()

    def stop_measuring(self) -> None:
        """The chat ends: f6's plan, if it runs, ends with it."""
        if self.switcher.plan_run is not None:
            self.switcher.plan_run.stop()

    def measured(self, error: str | None) -> None:
        self.switcher.measured(error)
        self.conversation.send_queued()  # what waited for the plan

    def session_failed(self, error: str) -> None:
        self.switcher.session_failed(error)
        self.conversation.send_queued()  # a switch failed: the loaded pair takes what waited

    def close(self) -> None:
        self.switcher.close()

    def load_preset(self, name: str) -> None:
        self.switcher.load_preset(name)

    def save_preset(self, name: str) -> None:
        self.switcher.save_preset(name)

    def apply_settings(self, values: dict) -> None:
        self.switcher.apply_settings(values)

    def switch_models(self, target: str, draft: str | None) -> None:
        self.switcher.switch_models(target, draft)

    # --- the A/B view's lock ---------------------------------------------------------

    def start_compare(self) -> ChatSession | None:
        return self.state.start_compare()

    def end_compare(self) -> None:
        self.state.end_compare()
