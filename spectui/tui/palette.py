"""The command palette (ctrl+p): the command table's entries, then one per spec type, setting,
preset and saved chat."""

from __future__ import annotations

from functools import partial
from typing import Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from spectui.chat.controller import ChatController
from spectui.chat.library import ChatLibrary
from spectui.config import presets
from spectui.spec_config import types_label
from spectui.tui.commands import COMMANDS, key_display
from spectui.tui.screens.chats import when
from spectui.tui.screens.settings import FIELDS


class ChatApp(Protocol):
    """What the palette needs of the app besides Textual's (the app imports this module)."""

    controller: ChatController
    chat_screen: Screen

    def show_problem(self, message: str) -> None: ...


class SpecCommands(Provider):
    """The palette's spectui commands: the command table's, plus one entry per spec type,
    setting, preset and saved chat (so every choice is a few keystrokes away)."""

    async def startup(self) -> None:
        chat = cast(ChatApp, self.app)
        self._chats = chat_entries(chat.controller.open_chat, chat.show_problem, chat.controller.library)
        self._presets = presets.listed()  # read once per opening, not per keystroke

    def _entries(self, with_chats: bool):
        app, chat = self.app, cast(ChatApp, self.app)
        for c in COMMANDS:
            keys = f"  ({key_display(c.keys)})" if c.keys else ""
            where = chat.chat_screen if c.chat else app
            yield c.title, partial(app.run_action, c.action, where), c.help + keys
        switcher = chat.controller.switcher
        for choice in switcher.choices():
            yield (
                f"Spec type: {types_label(choice)}",
                partial(switcher.set_spec_type, choice),
                "Speculate with this type from the next round",
            )
        for f in FIELDS:
            yield (
                f"Setting: {f.label}…",
                partial(app.run_action, f"settings('{f.name}')"),
                f"{f.about} (f10 shows them all)",
            )
        for p in self._presets:
            yield f"Preset: {p.name}", partial(switcher.load_preset, p.name), p.about
        if with_chats:
            for title, callback, help_text in self._chats:
                yield f"Chat: {title}", callback, help_text

    async def discover(self) -> Hits:
        for title, callback, help_text in self._entries(with_chats=False):
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, callback, help_text in self._entries(with_chats=True):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


def chat_entries(open_chat, show_problem, library: ChatLibrary | None = None) -> list[tuple[str, object, str]]:
    """The saved chats for the "Open a saved chat" picker, newest first, then each file
    that cannot be read, by name: choosing it shows why (`show_problem(message)`)."""
    chats, problems = (library or ChatLibrary()).list_chats()
    return [(chat.title or chat.id, partial(open_chat, chat.id), when(chat)) for chat in chats] + [
        (f"unreadable: {path.name}", partial(show_problem, why), "cannot be read; choose it to see why")
        for path, why in problems
    ]
