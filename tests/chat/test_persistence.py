"""Persistence (chat/persistence.py): saving the chat shown and its streaming answer, opening
it again, what a failed save keeps at quit, a journal replayed after a kill, titles, and the
traces that keep each turn with its own configuration changes."""

from __future__ import annotations

import sqlite3

from spectui.chat.persistence import Persistence
from spectui.chat.updates import Generate
from spectui.config import paths
from spectui.engine.events import Round
from spectui.store import chat_store, chat_types
from tests.chat.fake_screen import QUIET, answer_text, make, state_of
from tests.fake_session import FakeSession


def test_persistence_saves_opens_and_says_what_it_cannot_read(setup):
    state, updates = state_of(setup, FakeSession(spec=setup.spec))
    persistence = Persistence(state, QUIET)
    persistence.save()  # an empty chat is not stored
    assert chat_store.list_chats() == ([], [])
    state.chat.messages.append(chat_types.Message(role="user", content="hello"))
    persistence.save()
    assert not persistence.unsaved and [c.id for c in chat_store.list_chats()[0]] == [state.chat.id]
    opened = persistence.open(state.chat.id)
    assert opened is not None and [m.content for m in opened.messages] == ["hello"]
    assert opened.setup == setup.values()  # what resuming it restores
    assert persistence.open("no-such-chat") is None and updates[-1].severity == "error"
    persistence.save_trace()
    assert "nothing to trace yet" in updates[-1].text


def test_each_answers_trace_keeps_the_changes_made_while_it_streamed_and_no_others(setup):
    """The switcher tells the live turn; Persistence traces each turn with its own log."""
    controller, screen = make(setup)
    controller.switcher.step_n_max(1)  # before any answer: no answer's
    controller.conversation.submit("hi")
    assert controller.state.live is controller.conversation.turn
    controller.switcher.set_spec_type("ngram-mod")
    screen.run(controller)
    assert controller.state.live is None
    controller.switcher.set_spec_type("none")  # between answers: no answer's
    controller.conversation.submit("again")
    screen.run(controller)
    first, second = controller.persistence.traced
    assert [c.config["spec_type"] for c in first.changes] == ["ngram-mod"] and second.changes == []


def test_a_chat_that_could_not_be_saved_is_kept_at_quit_and_restored_whole_at_the_next_start(setup, monkeypatch):
    controller, screen = make(setup)
    controller.conversation.submit("first")
    screen.run(controller)
    real = chat_store._values

    def full(m):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(chat_store, "_values", full)
    controller.conversation.submit("second")
    screen.run(controller)
    assert controller.persistence.unsaved and len(chat_store.load_chat(controller.state.chat.id).messages) == 2
    kept = controller.persistence.keep_unsaved()
    assert kept == paths.data_dir().parent / f"spectui-unsaved-{controller.state.chat.id}.md"
    assert "## User\n\nsecond" in kept.read_text() and kept.with_suffix(".json").exists()
    monkeypatch.setattr(chat_store, "_values", real)
    chat_store.close()  # the next start
    notes, problems = chat_store.import_unsaved()
    assert problems == [] and len(notes) == 1
    assert chat_store.latest_chat().messages == controller.state.chat.messages  # overlay and statistics too


def test_a_killed_answer_is_replayed_from_its_journal(setup):
    controller, screen = make(setup)
    controller.conversation.submit("hi")
    job = screen.of(Generate)[0].job
    events = list(job.session.generate(messages=job.messages, limits=job.limits))
    rounds = [i for i, e in enumerate(events) if isinstance(e, Round)]
    for event in events[: rounds[3] + 1]:
        controller.conversation.add_events([event])
    partial = controller.state.chat.messages[-1].content
    assert partial and partial != answer_text()
    # the process dies here: no clean save; a new controller opens the chat
    again, screen = make(setup)
    again.open_chat(controller.state.chat.id)
    answer = again.state.chat.messages[-1]
    assert answer.content == partial and answer.stopped


def listed_title(chat_id: str) -> str:
    """The chat's title as the saved chats (ctrl+l) list it."""
    return next(c.title for c in chat_store.list_chats()[0] if c.id == chat_id)


def test_the_title_follows_an_edited_first_message_but_a_given_name_stays(setup):
    controller, screen = make(setup)
    for text in ("first", "second"):
        controller.conversation.submit(text)
        screen.run(controller)
    chat_id = controller.state.chat.id
    controller.conversation.edit(controller.state.chat.messages[2])  # a later message: the title stays
    controller.conversation.submit("second, edited")
    screen.run(controller)
    assert listed_title(chat_id) == "first"
    controller.conversation.edit(controller.state.chat.messages[0])
    controller.conversation.submit("first, edited")
    screen.run(controller)
    assert listed_title(chat_id) == controller.state.chat.title == "first, edited"
    controller.library.rename(chat_id, "my name")  # ctrl+l renames the open chat
    controller.chats_changed(renamed={chat_id: "my name"}, deleted=set())
    controller.conversation.edit(controller.state.chat.messages[0])
    controller.conversation.submit("first, edited again")
    screen.run(controller)
    assert listed_title(chat_id) == controller.state.chat.title == "my name"
