"""The chat library (chat/library.py), the saved-chats screen's one hop to the store: listing,
searching, renaming and deleting chats, a long chat's earlier messages, the store's path."""

from __future__ import annotations

from spectui.chat.library import ChatLibrary
from spectui.config import paths
from spectui.store import chat_store, chat_types


def saved(*texts: str) -> chat_types.Chat:
    chat = chat_types.new_chat("smollm2")
    chat.messages = [chat_types.Message("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(texts)]
    chat_store.save_chat(chat)
    return chat


def test_the_library_lists_searches_renames_and_deletes_saved_chats():
    library = ChatLibrary()
    assert library.list_chats() == ([], [])
    rockets, hello = saved("Tell me", "Rockets push on exhaust."), saved("hello", "hi")
    assert {c.id for c in library.list_chats()[0]} == {rockets.id, hello.id}
    assert [c.id for c in library.search("exhaust")] == [rockets.id]
    assert library.rename(hello.id, "greeting").title == "greeting"
    assert [c.title for c in library.search("greeting")] == ["greeting"]
    library.delete(rockets.id)
    assert [c.id for c in library.list_chats()[0]] == [hello.id]
    assert library.store_path().is_relative_to(paths.data_dir()) and library.store_path().exists()


def test_the_earlier_messages_of_a_long_chat_come_from_the_store_once_the_loaded_ones_run_out():
    chat = saved(*(f"message {i}" for i in range(10)))
    opened = chat_store.load_chat(chat.id, last=4)
    library = ChatLibrary()
    assert [m.content for m in library.earlier_than(opened, opened.messages[2], 5)] == ["message 6", "message 7"]
    earlier = library.earlier_than(opened, opened.messages[0], 3)
    assert [m.content for m in earlier] == ["message 3", "message 4", "message 5"]
