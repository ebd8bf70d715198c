"""Nothing lost, no crash: ctrl+c in the chat, the answer journal under kill -9, and
unreadable chat files in the picker. A FakeSession (a recorded SmolLM2 answer) stands in
for the model, which is not what is tested here."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from textual.widgets import OptionList

from spectui.engine.events import StopReason
from spectui.store import chat_store, chat_types
from spectui.tui.app import SpecApp
from spectui.tui.screens import chat as chat_screen
from tests.textual_private import notices
from tests.tui_helpers import LONG, answered, rounds_so_far, send, slow_app, sync, until

pytestmark = pytest.mark.usefixtures("dirs")  # conftest.py: own config and data dirs

ROOT = Path(__file__).resolve().parents[2]


@sync
async def test_ctrl_c_stops_the_answer_then_quits(monkeypatch):
    app = slow_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, LONG)
        await until(
            pilot,
            lambda: rounds_so_far(app) >= 2,
        )
        await pilot.press("ctrl+c")
        await answered(pilot, app)
        assert app.controller.conversation.turn.end.stop_reason == StopReason.CANCELLED and app.return_code is None
        later = chat_screen.QUIT_WINDOW_S + 1  # a while later, on the screen's clock: no wait
        monkeypatch.setattr(chat_screen, "time", SimpleNamespace(monotonic=lambda: time.monotonic() + later))
        await pilot.press("ctrl+c")  # one press only warns
        await pilot.pause()
        assert app.return_code is None
        assert any("ctrl+c again to quit" in n.message for n in notices(app))
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.return_code is not None
    saved = chat_store.load_chat(app.controller.state.chat.id).messages
    assert saved[-1].stopped and saved[-1].content == app.controller.state.chat.messages[-1].content != ""


@sync
async def test_an_unreadable_chat_is_in_the_picker_by_name(dirs):
    chats = dirs / "data" / "chats"
    chats.mkdir(parents=True)
    (chats / "bad.json").write_text(
        json.dumps({"id": "bad", "title": "t", "created": 1.0, "updated": "NaN", "messages": []}), encoding="utf-8"
    )
    app = slow_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+l")
        await pilot.pause()
        [row] = app.screen.query_one(OptionList).options  # the only entry: the unreadable file, and why
        assert row.disabled and "unreadable: bad.json" in str(row.prompt) and "not a time" in str(row.prompt)
        await pilot.press("enter")
        assert app.return_code is None


KILLED = """
import asyncio, json, sys
from tests.tui_helpers import slow_app
from tests.tui_helpers import rounds_so_far, send, until

async def main():
    app = slow_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, "Count")
        await until(pilot, lambda: rounds_so_far(app) >= 6)
        print(json.dumps([app.controller.state.chat.id, app.controller.conversation.turn.message.content]), flush=True)
        await asyncio.sleep(60)

asyncio.run(main())
"""


def test_kill_9_mid_answer_loses_nothing_shown(dirs):
    """The answer's row is stored as it streams, each update its own transaction: after a
    kill -9 the database holds at least what was shown."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SPECTUI_DATA_DIR": str(dirs / "data"),
        "SPECTUI_CONFIG_DIR": str(dirs / "config"),
    }
    p = subprocess.Popen([sys.executable, "-c", KILLED], stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    try:
        chat_id, shown = json.loads(p.stdout.readline())
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    assert shown
    answer = chat_store.load_chat(chat_id).messages[-1]
    assert answer.stopped and answer.content.startswith(shown)
    assert "".join(t for t, k in answer.segments if k != "rejected") == answer.content


@sync
async def test_quitting_with_unsaved_turns_keeps_them_in_a_file_and_exits_1(dirs, fake, setup, monkeypatch, capsys):
    """The database is locked by another writer (as a full disk fails a save): the chat says
    so, and quitting writes the chat beside the data dir and exits 1 with a line saying where."""
    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, "remember this")
        await answered(pilot, app)
        assert not app.controller.persistence.unsaved
        chat_store._db().execute("PRAGMA busy_timeout = 20")
        other = sqlite3.connect(chat_store.db_path())
        other.execute("BEGIN IMMEDIATE")  # holds the write lock
        await send(pilot, app, "and this too")
        await answered(pilot, app)
        assert app.controller.persistence.unsaved
        assert any("Chat not saved" in n.title for n in notices(app))
    monkeypatch.setattr(SpecApp, "run", lambda self: None)
    assert app.run_reporting() == 1
    kept = dirs / f"spectui-unsaved-{app.controller.state.chat.id}.md"
    err = capsys.readouterr().err
    assert f"kept in {kept}" in " ".join(err.split()) and "could not be saved" in err
    assert "and this too" in kept.read_text(encoding="utf-8") and oct(kept.stat().st_mode)[-3:] == "600"
    other.rollback()
    other.close()
    app.controller.save()  # the lock gone, the next save stores everything
    assert not app.controller.persistence.unsaved
    assert [m.content for m in chat_store.load_chat(app.controller.state.chat.id).messages][-2] == "and this too"


@sync
async def test_quitting_while_the_database_stays_locked_waits_for_it_once(dirs, fake, setup, monkeypatch, capsys):
    """Each save waits the busy timeout for another writer's lock: the quit's save may, the
    app's last save at unmount does not wait again; the chat goes to the unsaved file."""
    app = SpecApp(setup, session=fake)
    attempts = []
    real = chat_store.save_chat
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, app, "remember this")
        await answered(pilot, app)
        chat_store._db().execute("PRAGMA busy_timeout = 100")
        other = sqlite3.connect(chat_store.db_path())
        other.execute("BEGIN IMMEDIATE")  # holds the write lock
        monkeypatch.setattr(chat_store, "save_chat", lambda chat: attempts.append(chat) or real(chat))
        await app.action_quit()
    assert len(attempts) == 1 and app.controller.persistence.unsaved
    monkeypatch.setattr(SpecApp, "run", lambda self: None)
    assert app.run_reporting() == 1
    assert (dirs / f"spectui-unsaved-{app.controller.state.chat.id}.json").exists()
    assert "the next start adds them to the chat" in " ".join(capsys.readouterr().err.split())
    other.rollback()
    other.close()


@sync
async def test_a_chat_opened_with_unreadable_parts_says_so(dirs, fake, setup):
    """--resume hands the app a chat whose overlay column is corrupt: it shows, with a notice."""
    chat = chat_types.new_chat()
    chat.messages = [
        chat_types.Message("user", "q"),
        chat_types.Message("assistant", "zebraword", [("zebraword", "draft")]),
    ]
    chat_store.save_chat(chat)
    chat_store._db().execute("UPDATE messages SET segments = '{' WHERE role = 'assistant'")
    app = SpecApp(setup, session=fake, chat=chat_store.latest_chat(last=chat_store.SHOWN))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert any(n.title == "Chat partly unreadable" and "overlay" in n.message for n in notices(app))
        assert "zebraword" in app.export_screenshot()  # the message shows, as plain text
