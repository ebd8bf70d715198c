"""The saved chats as the screens read them: listed, searched, renamed, deleted, and the
earlier messages of a long chat as its reader scrolls up. One hop to the store; what it
refuses (a UserError) is the calling screen's to show, next to what was asked."""

from __future__ import annotations

from pathlib import Path

from spectui.store import chat_store
from spectui.store.chat_types import Chat, Message

SHOWN = chat_store.SHOWN  # messages read when a chat opens, and at a time as the reader scrolls up
Summary = chat_store.Summary  # a saved chat as the chats screen lists it


class ChatLibrary:
    """Stateless: the chats screen, the palette and the transcripts each take one."""

    def list_chats(self) -> tuple[list[Summary], list[tuple[Path, str]]]:
        """Every saved chat, newest first, and each file that could not be read (and why)."""
        return chat_store.list_chats()

    def search(self, query: str) -> list[Summary]:
        return chat_store.search(query)

    def rename(self, chat_id: str, title: str) -> Summary:
        return chat_store.rename_chat(chat_id, title)

    def delete(self, chat_id: str) -> None:
        chat_store.delete_chat(chat_id)

    def earlier_than(self, chat: Chat, message: Message, n: int) -> list[Message]:
        """Up to `n` of the chat's messages just before `message` (read from the store when
        the loaded ones run out)."""
        return chat_store.earlier_than(chat, message, n)

    def store_path(self) -> Path:
        return chat_store.db_path()
