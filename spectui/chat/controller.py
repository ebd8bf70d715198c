"""The chat controller: builds the chat's parts and runs the steps that cross them. The app
holds it and hands each screen the part it needs (attributes down, messages up):

- `state` (chat/state.py `ChatState`): what the parts share: the session, the setup, the chat
  shown, the answer streaming now, the A/B view's lock, the channel to the screen;
- `conversation` (chat/conversation.py): sending, the queue, edits and each answer's life;
- `persistence` (chat/persistence.py): saving, opening and exporting the chat shown, its traces;
- `switcher` (chat/switcher.py `SetupSwitcher`): the speculation, settings, presets, loading
  and switching the models, f6's measuring;
- `library` (chat/library.py `ChatLibrary`): the saved chats, for the chats screen.

Callers use a part directly (`controller.switcher.cycle_spec_type(1)`); the controller keeps
only what takes two parts: showing a chat, opening one, answering the chats screen, saving with
the streaming answer, and sending what waited once a load, a plan or a failed switch ends. No part touches a widget:
each says what changed by emitting updates (chat/updates.py) on the UI's thread, which the app
posts to the chat screen as Textual messages; the work that blocks goes out as an update whose
worker reports back: `Generate` (the llama thread) to the chat screen, `Load` and `Measure` to the app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from spectui.chat.conversation import Conversation
from spectui.chat.library import ChatLibrary
from spectui.chat.persistence import Persistence
from spectui.chat.state import ChatState
from spectui.chat.switcher import SetupSwitcher
from spectui.chat.updates import Update
from spectui.config.settings import Settings
from spectui.config.setup import Setup
from spectui.engine.interface import ChatSession
from spectui.store import chat_types


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
            emit=emit,
            chat=chat or chat_types.new_chat(setup.preset),
            session=session,
            environment=environment or {},
        )
        self.persistence = Persistence(self.state, settings)
        self.conversation = Conversation(self.state, self.persistence)
        self.switcher = SetupSwitcher(self.state)
        self.library = ChatLibrary()

    # --- the chat shown ----------------------------------------------------------------

    def show(self, chat: chat_types.Chat) -> None:
        """Another chat replaces this one: its edit, answers and traced turns go with it."""
        self.conversation.show(chat)
        self.persistence.forget_traces()

    def new_chat(self) -> None:
        if self.state.idle("start a new chat"):
            self.show(chat_types.new_chat(self.state.setup.preset))

    def open_chat(self, chat_id: str) -> None:
        """Open a saved chat (its last messages) on the models and settings it ran with."""
        if not self.state.idle("open another chat") or (chat := self.persistence.open(chat_id)) is None:
            return
        self.show(chat)
        self.state.notify(f"Opened “{chat.title or chat.id}”", timeout=3)
        self.persistence.say_damage()
        self.switcher.restore(chat)

    def chats_changed(self, renamed: dict[str, str], deleted: set[str], open_id: str | None = None) -> None:
        """The saved chats picker renamed or deleted chats (keep the open one in step), and
        maybe picked one to open."""
        chat = self.state.chat
        if chat.id in renamed:
            chat.title = renamed[chat.id]  # so its next save keeps the name
        if chat.id in deleted:
            self.conversation.stop()  # an answer to a deleted chat has nowhere to go
            self.show(chat_types.new_chat(self.state.setup.preset))
        if open_id is not None:
            self.open_chat(open_id)

    def save(self) -> None:
        """Store the chat now (the app's quit), the streaming answer as stopped."""
        self.persistence.save(self.conversation.turn)

    # --- what waited for the models or the plan ----------------------------------------

    def session_loaded(self, session: ChatSession, setup: Setup, environment: dict) -> None:
        self.switcher.session_loaded(session, setup, environment)
        self.conversation.send_queued()

    def measured(self, error: str | None) -> None:
        self.switcher.measured(error)
        self.conversation.send_queued()  # what waited for the plan

    def session_failed(self, error: str) -> None:
        self.switcher.session_failed(error)
        self.conversation.send_queued()  # a switch failed: the loaded pair takes what waited
