"""A 20,000-message chat: opening it reads and mounts only its end, scrolling up mounts
earlier messages, and a long session keeps at most MOUNTED message widgets (so time per
turn and memory do not grow with the chat). Counts, not timings: see benchmarks/soak_chat.py."""

from __future__ import annotations

import sqlite3

import pytest

from spectui.store import chat_store
from spectui.store.chat_store import SHOWN
from spectui.store.chat_types import Message, new_chat
from spectui.tui.app import SpecApp
from spectui.tui.widgets.message import AssistantMessage, UserMessage
from spectui.tui.widgets.transcript import MOUNTED, Transcript
from tests.textual_private import orphaned_styles_with_lines
from tests.tui_helpers import answered, send, sync, until

pytestmark = pytest.mark.usefixtures("dirs")  # conftest.py: own config and data dirs

N = 20_000


def long_chat() -> str:
    chat = new_chat()
    for i in range(N // 2):
        answer = Message("assistant", f"answer {i}", [(f"answer {i}", "draft")])
        chat.messages += [Message("user", f"question {i}"), answer]
    chat_store.save_chat(chat)
    return chat.id


def mounted(app: SpecApp) -> list[UserMessage | AssistantMessage]:
    return list(app.query_one(Transcript).query("UserMessage, AssistantMessage").results())


def rows_read(statements: list[str]) -> int:
    return sum("FROM messages" in s and "SELECT role, content" not in s for s in statements)


@sync
async def test_a_20000_message_chat_opens_at_its_end_and_loads_earlier_ones_on_scrolling(fake, setup):
    chat_id = long_chat()
    chat = chat_store.latest_chat(last=SHOWN)  # as `spectui chat --resume` reads it
    assert chat is not None and len(chat.messages) == SHOWN and chat.earlier == N - SHOWN
    app = SpecApp(setup, session=fake, chat=chat)
    async with app.run_test(size=(120, 40)) as pilot:
        shown = mounted(app)
        assert len(shown) == SHOWN and shown[-1].message.content == f"answer {N // 2 - 1}"
        transcript = app.query_one(Transcript)
        assert transcript.query("#earlier")  # the line that says there is more
        transcript.scroll_home(animate=False)  # reaching the top loads the next page
        await until(pilot, lambda: len(mounted(app)) == 2 * SHOWN)
        assert mounted(app)[0].message.content == f"question {N // 2 - SHOWN}"
        assert app.controller.state.chat.earlier == N - 2 * SHOWN
        await until(pilot, lambda: transcript.scroll_y > 0)  # the reader's place is kept: the page is above it
        transcript.scroll_home(animate=False)
        await until(pilot, lambda: len(mounted(app)) == 3 * SHOWN)

        await send(pilot, app, "one more")  # the prompt still holds the whole chat
        await answered(pilot, app)
        assert len(fake.prompts[-1]) >= N + 1 and fake.prompts[-1][0]["content"] == "question 0"
        assert len(mounted(app)) <= MOUNTED
    saved = chat_store.load_chat(chat_id, last=2)
    assert saved.earlier == N and saved.messages[0].content == "one more"


@sync
async def test_a_long_session_keeps_at_most_mounted_widgets(fake, setup):
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        for i in range(MOUNTED // 2 + 5):
            await send(pilot, app, f"q{i}")
            await answered(pilot, app)
        assert len(mounted(app)) == MOUNTED
        assert mounted(app)[-2].message.content == f"q{MOUNTED // 2 + 4}"
        assert app.query_one(Transcript).query("#earlier")
        assert len(app.controller.state.chat.messages) == MOUNTED + 10  # every message kept, and stored
        kept = orphaned_styles_with_lines()
        # Textual's lru_cache keeps unmounted widgets' caches: the 20 messages unmounted hold no lines
        # (a notice elsewhere in the app may)
        assert len(kept) <= 2, kept
    assert len(chat_store.load_chat(app.controller.state.chat.id).messages) == MOUNTED + 10


def test_opening_reads_only_the_rows_it_shows(dirs):
    chat_id = long_chat()
    chat_store.close()
    statements: list[str] = []
    chat_store._db().set_trace_callback(statements.append)
    summaries, _ = chat_store.list_chats()  # the picker: one row per chat, no message text
    assert [s.answers for s in summaries] == [N // 2]
    assert not any("content" in s for s in statements)
    statements.clear()
    chat = chat_store.load_chat(chat_id, last=SHOWN)
    assert len(chat.messages) == SHOWN and rows_read(statements) == 2  # a count, then the last SHOWN rows
    with sqlite3.connect(chat_store.db_path()) as db:
        plan = " ".join(r[-1] for r in db.execute(f"EXPLAIN QUERY PLAN {statements[-1].split(';')[0]}"))
    assert "messages_by_chat" in plan or "PRIMARY KEY" in plan
