"""The controller's steps across parts: opening a saved chat (shown, its settings restored or
its models reloaded, what of it is unreadable said), and nothing replacing or deleting the chat
shown while its answer streams."""

from __future__ import annotations

from dataclasses import replace

from spectui.chat.updates import ChatShown, Generate, Load, Notice
from spectui.store import chat_store, chat_types
from tests.chat.fake_screen import make


def test_open_chat_shows_it_and_restores_its_settings(setup):
    controller, screen = make(setup)
    saved = chat_types.new_chat("smollm2")
    saved.messages = [chat_types.Message("user", "old question"), chat_types.Message("assistant", "old answer")]
    saved.setup = replace(setup, temp=0.7, spec=setup.spec.replace(draft_n_max=5)).values()
    chat_store.save_chat(saved)
    controller.open_chat(saved.id)
    assert screen.of(ChatShown)[-1].chat.id == saved.id
    assert controller.state.session.sampling.temp == 0.7 and controller.state.session.spec.draft_n_max == 5
    assert not screen.of(Load)  # the same models: no reload
    controller.conversation.submit("new question")
    assert [m["content"] for m in screen.of(Generate)[-1].job.messages] == [
        "old question",
        "old answer",
        "new question",
    ]


def test_opening_a_chat_whose_stored_columns_are_corrupt_shows_it_and_says_what_is_missing(setup):
    controller, screen = make(setup)
    saved = chat_types.new_chat("smollm2")
    saved.messages = [chat_types.Message("user", "q"), chat_types.Message("assistant", "a", [("a", "draft")])]
    saved.setup = replace(setup, temp=0.7).values()
    chat_store.save_chat(saved)
    chat_store._db().execute("UPDATE messages SET segments = 'x', stats = '[' WHERE role = 'assistant'")
    chat_store._db().execute("UPDATE chats SET setup = '{\"temp\": '")
    controller.open_chat(saved.id)
    shown = screen.of(ChatShown)[-1].chat
    assert [(m.content, m.segments) for m in shown.messages] == [("q", []), ("a", [("a", "target")])]
    notice = screen.of(Notice)[-1]
    assert notice.title == "Chat partly unreadable" and notice.severity == "warning"
    assert all(w in notice.text for w in ("overlay", "statistics", "settings"))
    assert controller.state.session.sampling.temp == 0.0  # the current settings stay


def test_opening_a_chat_that_ran_on_other_models_reloads_them(setup, tmp_path):
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF")
    controller, screen = make(setup)
    saved = chat_types.new_chat("smollm2")
    saved.messages = [chat_types.Message("user", "q")]
    saved.setup = replace(setup, model=str(other)).values()
    chat_store.save_chat(saved)
    controller.open_chat(saved.id)
    assert screen.of(Load)[-1].setup.model == str(other)


def test_nothing_replaces_the_chat_while_an_answer_streams(setup):
    controller, screen = make(setup)
    controller.conversation.submit("hi")
    chat = controller.state.chat
    controller.new_chat()
    controller.open_chat(chat.id)
    assert controller.state.chat is chat and not screen.of(ChatShown)
    assert [n.text for n in screen.of(Notice)] == [
        "Stop the answer first (esc), then start a new chat.",
        "Stop the answer first (esc), then open another chat.",
    ]


def test_deleting_the_open_chat_mid_answer_stops_it_and_nothing_else_runs_until_it_ends(setup):
    controller, screen = make(setup)
    controller.conversation.submit("hi")
    job = screen.of(Generate)[0].job
    other = chat_types.new_chat("smollm2")
    other.messages = [chat_types.Message("user", "q")]
    chat_store.save_chat(other)
    controller.chats_changed({}, {controller.state.chat.id})
    assert job.stop.is_set() and controller.state.generating  # asked to stop; its worker still runs
    assert screen.of(ChatShown)[-1].chat is controller.state.chat and not controller.state.chat.messages
    controller.open_chat(other.id)  # refused until the old answer's worker ends
    assert controller.state.chat.id != other.id
    controller.conversation.submit("queued behind the stopping answer")
    assert controller.conversation.queued == ["queued behind the stopping answer"]
    for event in job.session.generate(messages=job.messages, limits=job.limits):
        job.session.cancel()
        controller.conversation.add_events([event])  # dropped: their chat is gone
    # the old answer's end freed the session: the queued message went, into the new chat only
    assert screen.of(Generate)[-1].job is not job and controller.conversation.queued == []
    assert [m.content for m in controller.state.chat.messages] == ["queued behind the stopping answer", ""]


def test_a_reopened_chats_panel_shows_its_last_stored_answer_until_this_session_answers(setup):
    """Its rounds are not stored (f7, f11 have nothing), its statistics are: the panel shows them."""
    from spectui.tui.widgets.stats_panel import render

    controller, screen = make(setup)
    controller.conversation.submit("hi")
    screen.run(controller)
    answer = controller.state.chat.messages[-1]
    chat_id = controller.state.chat.id
    controller.new_chat()
    assert "no answer yet" in render(controller.conversation.panel_state()).plain
    controller.open_chat(chat_id)
    state = controller.conversation.panel_state()
    assert state.stored is not None and state.stored.stats == answer.stats
    shown = render(state).plain
    accepted = f"{answer.stats['n_accepted']}/{answer.stats['n_drafted']}"
    assert (
        "no answer yet" not in shown
        and f"the saved answer, {answer.stats['n_generated']} tokens" in shown
        and accepted in shown
    )
    assert f"mean acc. len {answer.stats['mean_acceptance_length']:.2f}" in " ".join(shown.split())
    controller.conversation.submit("again")
    screen.run(controller)
    assert controller.conversation.panel_state().stored is None  # this session's answer, with its rounds
