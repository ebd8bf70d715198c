"""The conversation (chat/conversation.py), driven through the controller without a screen on
the replaying fake session: sending and streaming an answer, what is typed ahead, stopping,
editing and regenerating, failures, the speed baseline and a long chat's cut."""

from __future__ import annotations

from dataclasses import asdict, replace

from spectui.chat.conversation import GENERATING, STOPPING, Conversation
from spectui.chat.persistence import Persistence
from spectui.chat.streaming import stream_turn
from spectui.chat.updates import (
    AnswerEnded,
    AnswerStarted,
    AnswerUpdated,
    ComposeText,
    Generate,
    MessageAdded,
    MessagesRemoved,
    Notice,
    OutboxChanged,
    StatusLine,
)
from spectui.engine.events import PromptDone, Round, StopReason, TurnEnd, TurnStart
from spectui.engine.overlay import add_segments
from spectui.store import chat_store, chat_types
from tests.chat.fake_screen import QUIET, answer_text, make, state_of
from tests.fake_session import FakeSession, load_recording


def test_send_streams_an_answer_saves_it_and_keeps_its_trace(setup):
    controller, screen = make(setup)
    conversation = controller.conversation
    assert conversation.submit("Write a python function that adds two numbers.")
    assert [type(u) for u in screen.updates[:2]] == [MessageAdded, AnswerStarted]
    assert screen.updates[2:] == [GENERATING, Generate(screen.of(Generate)[0].job)]
    assert controller.state.generating
    screen.run(controller)
    assert not controller.state.generating
    user, answer = controller.state.chat.messages
    assert (user.role, answer.role) == ("user", "assistant")
    assert answer.content == answer_text() and not answer.stopped
    assert answer.stats["n_generated"] == conversation.turn.end.n_generated
    assert screen.of(AnswerEnded) == [AnswerEnded(removed=False)]
    saved = chat_store.load_chat(controller.state.chat.id)
    assert saved.messages[-1].content == answer.content
    assert saved.setup["spec_type"] == "draft-simple" and saved.setup["temp"] == 0.0
    config = saved.messages[-1].config  # what the answer was generated with, as data
    assert config == chat_types.AnswerConfig(
        ("draft-simple",), setup.spec.draft_n_max, setup.spec.verify, **asdict(setup.sampling())
    )
    assert len(controller.persistence.traced) == 1 and controller.persistence.traced[0].prompt == user.content


def test_the_answers_updates_carry_its_text_and_colours(setup):
    """What the widget shows is what the updates carried: together, the stored answer."""
    controller, screen = make(setup)
    controller.conversation.submit("hi")
    screen.run(controller)
    answer = controller.state.chat.messages[-1]
    updated = screen.of(AnswerUpdated)
    segments: list[tuple[str, str]] = []
    for update in updated:
        add_segments(segments, update.growth.segments)
    assert "".join(u.growth.text for u in updated) == answer.content == answer_text()
    assert segments == answer.segments and len(segments) > 1
    assert updated[0].started and not any(u.started for u in updated[1:])


def test_the_engines_thread_path_delivers_the_same_answer(setup):
    """The chat screen's path (start_turn on the llama thread, events in batches), waited for here."""
    controller, screen = make(setup)
    conversation = controller.conversation
    conversation.submit("hi")
    stream_turn(screen.of(Generate)[0].job, conversation.add_events, conversation.turn_failed)
    assert controller.state.chat.messages[-1].content == answer_text()
    recorded = next(e for e in load_recording() if isinstance(e, TurnEnd))
    assert conversation.turn.end.stop_reason == recorded.stop_reason and not conversation.turn.message.stopped


def test_messages_typed_while_an_answer_streams_are_sent_in_order_after_it(setup):
    controller, screen = make(setup)
    conversation = controller.conversation
    conversation.submit("first")
    assert conversation.submit("second") and conversation.submit("third")
    assert screen.of(OutboxChanged)[-1] == OutboxChanged(("second", "third"))
    conversation.edit_previous()  # ↑ takes the last queued one back into the box
    assert conversation.queued == ["second"] and screen.of(ComposeText)[-1] == ComposeText("third")
    screen.run(controller)
    assert [m.content for m in controller.state.chat.messages if m.role == "user"] == ["first", "second"]
    assert screen.of(Generate)[1].job.messages[-1] == {"role": "user", "content": "second"}
    assert len(screen.of(Generate)[1].job.messages) == 3  # first, its answer, second
    assert conversation.queued == [] and screen.of(OutboxChanged)[-1] == OutboxChanged(())


def test_the_conversation_queues_while_loading_and_edits_without_a_screen(setup):
    state, updates = state_of(setup, None)
    conversation = Conversation(state, Persistence(state, QUIET))
    assert (
        conversation.submit("first")
        and conversation.queued == ["first"]
        and updates[-1] == OutboxChanged(("first",), "the models are loaded")
    )
    state.session = FakeSession(spec=setup.spec)
    conversation.send_queued()
    job = updates[-1].job
    assert updates[-2:] == [GENERATING, Generate(job)] and state.generating
    assert state.live is conversation.turn  # the answer whose worker runs: the switcher tells it of changes
    assert conversation.stop() and job.stop.is_set()
    conversation.stop_or_cancel_edit()
    assert updates[-1] == STOPPING
    for event in job.session.generate(messages=job.messages, limits=job.limits):  # the worker, asked to stop
        conversation.add_events([event])
    assert not state.generating and state.live is None
    conversation.edit(state.chat.messages[0])  # the question, with its answer after it
    assert updates[-2:] == [ComposeText("first"), StatusLine("editing", later=1)]
    conversation.cancel_edit()
    assert conversation.editing is None and updates[-1] == StatusLine()


def test_stop_ends_the_answer_after_the_round_and_keeps_it_marked(setup):
    controller, screen = make(setup)
    conversation = controller.conversation
    conversation.submit("hi")

    def stop_after_two_rounds(c, event):
        if isinstance(event, Round) and event.index == 1:
            c.conversation.stop_or_cancel_edit()

    screen.run(controller, stop_after_two_rounds)
    assert STOPPING in screen.updates
    assert conversation.turn.end.stop_reason == StopReason.CANCELLED
    assert len(conversation.turn.rounds) == 2
    answer = controller.state.chat.messages[-1]
    assert answer.stopped and answer.content and answer_text().startswith(answer.content)
    assert not conversation.stop()  # nothing streams any more


def test_edit_resends_and_replaces_what_followed(setup):
    controller, screen = make(setup)
    conversation = controller.conversation
    conversation.submit("first")
    screen.run(controller)
    conversation.submit("second")
    screen.run(controller)
    first = controller.state.chat.messages[0]
    conversation.edit(first)
    assert screen.of(ComposeText)[-1] == ComposeText("first")
    assert conversation.submit("first, edited")
    removed = screen.of(MessagesRemoved)[-1].ids
    assert id(first) in removed and len(removed) == 4
    assert [m.content for m in controller.state.chat.messages] == ["first, edited", ""]
    screen.run(controller)
    assert controller.state.chat.messages[-1].content == answer_text()


def test_regenerate_replaces_the_last_answer(setup):
    controller, screen = make(setup)
    conversation = controller.conversation
    conversation.submit("hi")
    screen.run(controller)
    first = controller.state.chat.messages[-1]
    conversation.regenerate()
    assert id(first) in screen.of(MessagesRemoved)[-1].ids
    screen.run(controller)
    assert [m.role for m in controller.state.chat.messages] == ["user", "assistant"]
    assert (
        controller.state.chat.messages[-1] is not first and controller.state.chat.messages[-1].content == answer_text()
    )
    assert screen.of(Generate)[-1].job.messages == [{"role": "user", "content": "hi"}]


def test_a_failed_turn_leaves_no_empty_answer(setup):
    controller, screen = make(setup)
    conversation = controller.conversation
    conversation.submit("hi")
    conversation.turn_failed("RuntimeError: llama_decode returned -1")
    assert [m.role for m in controller.state.chat.messages] == ["user"]
    assert screen.of(AnswerEnded)[-1] == AnswerEnded(removed=True)
    assert screen.of(Notice)[-1].title == "Generation failed" and not controller.state.generating


def test_an_answer_ended_by_an_engine_error_is_kept_and_said(setup):
    session = FakeSession(spec=setup.spec)
    recorded = load_recording()
    end = next(e for e in recorded if isinstance(e, TurnEnd))
    session.events = [*recorded[:-1], replace(end, stop_reason=StopReason.ERROR, error="llama_decode returned -3")]
    controller, screen = make(setup, session)
    conversation = controller.conversation
    conversation.submit("hi")
    screen.run(controller)
    notice = screen.of(Notice)[-1]
    assert (notice.title, notice.text, notice.severity) == ("Answer ended: error", "llama_decode returned -3", "error")
    assert controller.state.chat.messages[-1].stopped and controller.state.chat.messages[-1].content


def test_a_none_turn_becomes_the_speed_baseline(setup):
    # paced past the recorded prompt time, so the replay has a tok/s
    controller, screen = make(setup, FakeSession(spec=setup.spec, round_s=0.03))
    conversation = controller.conversation
    controller.switcher.set_spec_type("none")
    conversation.submit("hi")
    screen.run(controller)
    assert conversation.panel_state().baseline.tok_s == conversation.turn.message.stats["tok_per_s"] > 0


def test_a_long_chats_cut_is_said_when_it_first_happens_and_when_it_moves(setup):
    controller, screen = make(setup)
    conversation = controller.conversation
    conversation.submit("hi")
    start = TurnStart(t=0.0, n_prompt=150, n_prompt_decoded=150, n_ctx=256, config={}, n_left_out=6)
    for event in (start, start, replace(start, n_left_out=10)):
        conversation.add_events([event])
    said = [n.text for n in screen.of(Notice) if n.title == "Long chat"]
    assert len(said) == 2 and "first 6 messages" in said[0] and "first 10 messages" in said[1]
    assert "-c 256" in said[0]


def test_a_long_prompts_reading_is_said_until_the_tokens_come(setup):
    """A reopened chat is read whole before its first token (seconds on a CPU): the status
    line says so instead of a bare "generating", and goes back once it is read."""
    controller, screen = make(setup)
    conversation = controller.conversation
    conversation.submit("hi")
    start = TurnStart(t=0.0, n_prompt=1200, n_prompt_decoded=1100, n_ctx=4096, config={})
    conversation.add_events([start])
    assert screen.updates[-2] == StatusLine("generating", "reading 1100 tokens of the chat first")
    conversation.add_events([PromptDone(t=1.0, t_prompt=1.0)])
    assert screen.of(StatusLine)[-1] == GENERATING
    short = make(setup)
    short[0].conversation.submit("hi")
    short[0].conversation.add_events([replace(start, n_prompt_decoded=40), PromptDone(t=1.0, t_prompt=0.1)])
    assert all(not line.text for line in short[1].of(StatusLine))  # a short prompt: nothing to say
