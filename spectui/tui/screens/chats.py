"""The saved chats (ctrl+l): open, rename or delete one, or search them all (/ or ctrl+f).

A modal list rather than the command palette, because a row takes more than one action.
It dismisses with what the chat screen must do: the chat to open, and the chats deleted
(the open one among them means a new chat). Typing in the search box only filters: the
list takes the keys again on ↓, tab or enter, and a delete always asks, naming the chat.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from spectui.chat.library import ChatLibrary, Summary
from spectui.errors import UserError
from spectui.tui.screens.confirm import ConfirmScreen
from spectui.tui.screens.name import NameScreen
from spectui.tui.widgets.keys import run_own_binding
from spectui.words import plural


@dataclass
class Picked:
    open: str | None = None  # the chat to open
    deleted: set[str] = field(default_factory=set)
    renamed: dict[str, str] = field(default_factory=dict)  # chat id -> its new title


def when(chat: Summary) -> str:
    return f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(chat.updated))} · {plural(chat.answers, 'answer')}"


def row(chat: Summary, current: bool) -> Content:
    return Content.assemble(
        (chat.title or chat.id, "bold" if current else ""),
        ("  " + when(chat), "$text-muted"),
        ("  (open now)" if current else "", "$accent"),
    )


class SearchBox(Input):
    async def _on_key(self, event: events.Key) -> None:
        await run_own_binding(self, event)  # backspace, the arrows: in the order typed


class ChatsScreen(ModalScreen[Picked]):
    DEFAULT_CSS = """
    ChatsScreen {
        align: center middle;
    }
    #chats {
        width: 100;
        max-width: 100%;
        height: 80%;
        padding: 0 1;
        background: $panel;
        border: round $primary;
    }
    #chats OptionList {
        height: 1fr;
        border: none;
        background: $panel;
    }
    #chats Input {
        display: none;
        border: tall $primary 50%;
    }
    #chats.-searching Input {
        display: block;
    }
    #chats .hint {
        color: $text-muted;
    }
    """
    BINDINGS = [
        Binding("escape", "close", "close"),
        Binding("r,f2", "rename", "rename"),
        Binding("d,delete", "delete", "delete"),
        # priority: the box has the focus before the app hands on the keys typed next
        Binding("slash,ctrl+f", "search", "search", priority=True),
        Binding("down", "to_list", show=False),  # from the search box (the list's own ↓ comes first)
    ]

    def __init__(self, library: ChatLibrary, current: str):
        """`current`: the open chat's id (marked, and highlighted first)."""
        super().__init__()
        self.library = library
        self.current = current
        self.picked = Picked()
        self._titles: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="chats"):
            yield Label(Content.styled("Saved chats", "bold $primary"))
            yield SearchBox(placeholder="search every chat's words…", id="search")
            yield OptionList()
            yield Label("enter opens · r renames · d deletes · / searches · esc closes", classes="hint")

    def on_mount(self) -> None:
        self._fill()
        self.query_one(OptionList).focus()

    def _fill(self, highlight: str | None = None) -> None:
        query = self.query_one(Input).value if self.query_one("#chats").has_class("-searching") else ""
        try:
            chats, problems = (self.library.search(query), []) if query.strip() else self.library.list_chats()
        except UserError as e:
            self.notify(str(e), severity="error")
            chats, problems = [], []
        self._titles = {c.id: c.title for c in chats}
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(row(c, c.id == self.current), id=c.id) for c in chats])
        options.add_options(
            [
                Option(
                    Content.assemble((f"unreadable: {path.name}", "$error"), (f"  {why}", "$text-muted")), disabled=True
                )
                for path, why in problems
            ]
        )
        if not chats and not problems:
            none = "No chat holds those words." if query.strip() else "No saved chats yet."
            options.add_option(Option(Content.styled(none, "$text-muted"), disabled=True))
        if chats:  # the given chat, else the open one, else the newest
            options.highlighted = next((i for i, c in enumerate(chats) if c.id == (highlight or self.current)), 0)

    def action_search(self) -> None:
        self.query_one("#chats").add_class("-searching")
        self.set_focus(self.query_one(Input))  # at once: focus() would wait behind the keys already queued

    def action_to_list(self) -> None:
        self.query_one(OptionList).focus()

    def on_input_changed(self) -> None:
        self._fill()

    def on_input_submitted(self) -> None:
        self.query_one(OptionList).focus()

    def _chosen(self) -> str | None:
        option = self.query_one(OptionList).highlighted_option
        return option.id if option is not None and not option.disabled else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.picked.open = event.option.id
            self.dismiss(self.picked)

    def action_close(self) -> None:
        """esc: leave the search (all chats again), else close."""
        box = self.query_one("#chats")
        if box.has_class("-searching"):
            box.remove_class("-searching")
            self.query_one(Input).value = ""
            self._fill()
            self.query_one(OptionList).focus()
            return
        self.dismiss(self.picked)

    def action_rename(self) -> None:
        chat_id = self._chosen()
        if chat_id is None:
            return
        self.app.push_screen(
            NameScreen("Rename the chat to:", value=self._titles[chat_id]), lambda name: self._rename(chat_id, name)
        )

    def _rename(self, chat_id: str, name: str | None) -> None:
        if not name:
            return
        try:
            chat = self.library.rename(chat_id, name)
        except UserError as e:
            self.notify(str(e), severity="error")
            return
        self.picked.renamed[chat_id] = chat.title
        self._fill(highlight=chat_id)

    def action_delete(self) -> None:
        chat_id = self._chosen()
        if chat_id is None:
            return
        name = f"“{self._titles[chat_id] or chat_id}”"
        question = Content.assemble("Delete ", (name, "bold"), "?")
        self.app.push_screen(ConfirmScreen(question, "deletes it"), lambda yes: self._delete(chat_id, name, yes))

    def _delete(self, chat_id: str, name: str, yes: bool | None) -> None:
        if not yes:
            return
        try:
            self.library.delete(chat_id)
        except UserError as e:
            self.notify(str(e), severity="error")
            return
        self.picked.deleted.add(chat_id)
        self.notify(f"Deleted {name}.", timeout=3)
        self._fill()
