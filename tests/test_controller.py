"""The chat controller without a screen: what it does and what it tells the screen, on the
replaying fake session (the model is not what is tested here)."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, replace

import pytest

from spectui.chat.ab import ABRun, default_types
from spectui.chat.controller import ChatController
from spectui.chat.conversation import GENERATING, STOPPING
from spectui.chat.streaming import stream_turn
from spectui.chat.updates import (
    AnswerEnded,
    AnswerStarted,
    ChatShown,
    ComposeText,
    ConfigShown,
    Generate,
    Load,
    MessageAdded,
    MessagesRemoved,
    Notice,
    OutboxChanged,
    SwitchFailed,
)
from spectui.config import paths
from spectui.config.settings import Settings
from spectui.engine.ab import Verdict
from spectui.engine.events import Round, StopReason, TurnEnd, TurnStart
from spectui.engine.interface import ChatSession, GenerationLimits
from spectui.store import chat_store, chat_types
from spectui.trace import format as trace_format
from spectui.tui.header import header, pair_line
from spectui.tui.widgets.verdict import render_verdict
from tests.fake_session import FakeSession, load_recording

pytestmark = pytest.mark.usefixtures("dirs")  # own data and config dirs (conftest.py)


class Screen:
    """Stands in for the chat screen: keeps every update, runs each `Generate` job as its
    worker would, one event at a time (`between(controller, event)` may act mid-answer)."""

    def __init__(self):
        self.updates: list = []
        self.done = 0  # the Generate jobs run so far

    def __call__(self, update) -> None:
        self.updates.append(update)

    def of(self, kind) -> list:
        return [u for u in self.updates if isinstance(u, kind)]

    def run(self, controller: ChatController, between=lambda c, e: None) -> None:
        """Run the pending jobs, and those their ends start (queued messages), to the last."""
        while len(jobs := self.of(Generate)) > self.done:
            job = jobs[self.done].job
            self.done += 1
            for event in job.session.generate(messages=job.messages, limits=job.limits):
                if job.stop.is_set():
                    job.session.cancel()
                controller.add_events([event])
                between(controller, event)


FAKE = object()  # make(): a FakeSession on the setup's speculation


def make(setup, session: ChatSession | None | object = FAKE) -> tuple[ChatController, Screen]:
    screen = Screen()
    session = FakeSession(spec=setup.spec) if session is FAKE else session
    return ChatController(setup, Settings(record_traces=False), screen, session=session), screen


def answer_text() -> str:
    return next(e for e in load_recording() if isinstance(e, TurnEnd)).text


def test_send_streams_an_answer_saves_it_and_keeps_its_trace(setup):
    controller, screen = make(setup)
    assert controller.submit("Write a python function that adds two numbers.")
    assert [type(u) for u in screen.updates[:2]] == [MessageAdded, AnswerStarted]
    assert screen.updates[2:] == [GENERATING, Generate(screen.of(Generate)[0].job)]
    assert controller.generating
    screen.run(controller)
    assert not controller.generating
    user, answer = controller.chat.messages
    assert (user.role, answer.role) == ("user", "assistant")
    assert answer.content == answer_text() and not answer.stopped
    assert answer.stats["n_generated"] == controller.turn.end.n_generated
    assert screen.of(AnswerEnded) == [AnswerEnded(removed=False)]
    saved = chat_store.load_chat(controller.chat.id)
    assert saved.messages[-1].content == answer.content
    assert saved.setup["spec_type"] == "draft-simple" and saved.setup["temp"] == 0.0
    config = saved.messages[-1].config  # what the answer was generated with, as data
    assert config == chat_types.AnswerConfig(
        ("draft-simple",), setup.spec.draft_n_max, setup.spec.verify, **asdict(setup.sampling())
    )
    assert len(controller.traced) == 1 and controller.traced[0].prompt == user.content


def test_the_engines_thread_path_delivers_the_same_answer(setup):
    """The worker's own path (stream_turn on the llama thread, events in batches)."""
    controller, screen = make(setup)
    controller.submit("hi")
    stream_turn(screen.of(Generate)[0].job, controller.add_events, controller.turn_failed)
    assert controller.chat.messages[-1].content == answer_text()
    recorded = next(e for e in load_recording() if isinstance(e, TurnEnd))
    assert controller.turn.end.stop_reason == recorded.stop_reason and not controller.turn.message.stopped


def test_messages_typed_while_an_answer_streams_are_sent_in_order_after_it(setup):
    controller, screen = make(setup)
    controller.submit("first")
    assert controller.submit("second") and controller.submit("third")
    assert screen.of(OutboxChanged)[-1] == OutboxChanged(("second", "third"))
    controller.edit_previous()  # ↑ takes the last queued one back into the box
    assert controller.queued == ["second"] and screen.of(ComposeText)[-1] == ComposeText("third")
    screen.run(controller)
    assert [m.content for m in controller.chat.messages if m.role == "user"] == ["first", "second"]
    assert screen.of(Generate)[1].job.messages[-1] == {"role": "user", "content": "second"}
    assert len(screen.of(Generate)[1].job.messages) == 3  # first, its answer, second
    assert controller.queued == [] and screen.of(OutboxChanged)[-1] == OutboxChanged(())


def test_stop_ends_the_answer_after_the_round_and_keeps_it_marked(setup):
    controller, screen = make(setup)
    controller.submit("hi")

    def stop_after_two_rounds(c, event):
        if isinstance(event, Round) and event.index == 1:
            c.stop_or_cancel_edit()

    screen.run(controller, stop_after_two_rounds)
    assert STOPPING in screen.updates
    assert controller.turn.end.stop_reason == StopReason.CANCELLED
    assert len(controller.turn.rounds) == 2
    answer = controller.chat.messages[-1]
    assert answer.stopped and answer.content and answer_text().startswith(answer.content)
    assert not controller.stop()  # nothing streams any more


def test_live_configure_applies_from_the_next_round_and_is_traced(setup):
    controller, screen = make(setup)
    controller.submit("hi")

    def more_n_max(c, event):
        if isinstance(event, Round) and event.index == 0:
            c.step_n_max(1)
            c.set_spec_type("ngram-mod")

    screen.run(controller, more_n_max)
    rounds = controller.turn.rounds
    assert (rounds[0].configured, rounds[0].n_max) == ("draft-simple", 3)
    assert {(r.configured, r.n_max) for r in rounds[1:]} == {("ngram-mod", 4)}
    assert controller.setup.spec.label == "ngram-mod" and controller.setup.spec.draft_n_max == 4
    assert [c.config["spec_type"] for c in controller.traced[0].changes] == ["draft-simple", "ngram-mod"]
    assert controller.chat.messages[-1].config_label == "draft-simple n-max 3 → ngram-mod"
    assert header(controller)[0].startswith("ngram-mod")
    assert chat_store.load_chat(controller.chat.id).setup["spec_type"] == "ngram-mod"


def test_the_header_names_the_models_as_people_write_them_in_one_form(setup):
    """A model keeps its name at any width: a narrow header cuts it (Textual's ellipsis), it
    never swaps it for a shorter form."""
    controller, _ = make(setup, FakeSession(spec=setup.spec))
    config, models = header(controller)
    assert config == "draft-simple · n-max 3 · verify greedy"
    assert models == "SmolLM2-135M-Instruct.Q4_1 ⇠ draft SmolLM2-135M-Instruct.Q4_1"  # a file: its stem
    assert header(controller, narrow=True) == (models, "")
    qwen = "Qwen2.5-Coder 1.5B Instruct Q4_K_M"
    assert pair_line(qwen, "Qwen2.5-Coder 0.5B Instruct Q4_K_M") == f"{qwen} ⇠ draft Qwen2.5-Coder 0.5B Instruct Q4_K_M"
    assert pair_line(qwen, None) == f"{qwen} (no draft model)"


def test_a_type_the_models_do_not_allow_is_refused_and_nothing_changes(setup):
    controller, screen = make(setup, FakeSession(spec=setup.spec, draft=False))
    before = controller.setup
    controller.set_spec_type("ngram-simple")
    assert controller.setup.spec.label == "ngram-simple"
    controller.configure(before.spec)  # draft-simple without a draft model
    assert screen.of(Notice)[-1].severity == "error" and "not available" in screen.of(Notice)[-1].text
    assert controller.setup.spec.label == "ngram-simple"


def test_nothing_reconfigures_or_chats_while_the_ab_view_runs(setup):
    controller, screen = make(setup)
    assert controller.start_compare()
    assert not controller.configure(setup.spec)
    assert not controller.submit("hi") and not controller.chat.messages
    controller.new_chat()
    assert "Close the A/B view" in screen.of(Notice)[-1].text
    controller.end_compare()
    assert controller.submit("hi") and controller.generating


def test_model_switch_loads_in_the_background_messages_wait_and_a_failure_keeps_the_old_pair(setup):
    controller, screen = make(setup, session=None)
    controller.load(setup)
    assert screen.of(Load)[-1] == Load(setup, None) and header(controller) == ("spectui", "loading…")
    controller.submit("queued while loading")
    assert controller.queued == ["queued while loading"] and not screen.of(Generate)
    first = FakeSession(spec=setup.spec)
    controller.session_loaded(first, setup, {"models": "first"})
    screen.run(controller)  # the queued message went as soon as the models were ready
    assert controller.chat.messages[-1].content == answer_text()

    controller.switch_models("other.gguf", None)
    load = screen.of(Load)[-1]
    assert load.models == ("other.gguf", None) and controller.loading
    controller.session_failed("other.gguf: not a GGUF file")
    assert controller.session is first and not controller.loading
    assert screen.of(SwitchFailed)[-1] == SwitchFailed("other.gguf: not a GGUF file")

    controller.switch_models("other.gguf", None)
    second = FakeSession(spec=replace(setup.spec, types=("ngram-mod",)), draft=False)
    controller.session_loaded(second, replace(setup, model="other.gguf", model_draft=None), {"models": "second"})
    assert first.closed and controller.session is second and not second.closed
    assert controller.setup.spec.label == "ngram-mod" and controller.environment == {"models": "second"}
    assert controller.trace_header("spectui chat")["environment"] == {"models": "second"}
    assert isinstance(screen.updates[-1], ConfigShown)


def test_a_preset_switch_keeps_what_the_preset_does_not_set_and_says_what_changed(setup):
    """f5: the preset's models and speculation; the temperature from f10, the system prompt
    and n-predict of a resumed chat stay; the notice once loaded lists the changes."""
    controller, screen = make(replace(setup, n_predict=7, system="be brief"))
    controller.apply_settings({"temp": 0.5})
    controller.load_preset("ngram")
    load = screen.of(Load)[-1]
    assert (load.setup.temp, load.setup.n_predict, load.setup.system) == (0.5, 7, "be brief")
    assert load.setup.spec.types == ("ngram-mod",) and load.setup.model_draft is None
    [said] = [n for n in load.setup.notes if n.startswith("Preset ngram: ")]
    lines = said.splitlines()[1:]  # one change a line, in the words the chat uses
    assert "spec type draft-simple → ngram-mod" in lines and "draft model: none" in lines
    assert "ngram-mod n-match 24 → 4" in lines and not any("temperature" in line for line in lines)
    assert "None" not in said and "spec_" not in said and "target model: Qwen2.5-Coder 1.5B Instruct Q4_K_M" in lines
    controller.session_loaded(FakeSession(spec=load.setup.spec, draft=False), load.setup, {})
    assert said in [n.text for n in screen.of(Notice)]
    controller.load_preset("no-such-preset")  # resolved first: an error loads nothing
    assert screen.of(Load)[-1] is load and "no-such-preset" in screen.of(Notice)[-1].text


def test_open_chat_shows_it_and_restores_its_settings(setup):
    controller, screen = make(setup)
    saved = chat_types.new_chat("smollm2")
    saved.messages = [chat_types.Message("user", "old question"), chat_types.Message("assistant", "old answer")]
    saved.setup = replace(setup, temp=0.7, spec=setup.spec.replace(draft_n_max=5)).values()
    chat_store.save_chat(saved)
    controller.open_chat(saved.id)
    assert screen.of(ChatShown)[-1].chat.id == saved.id
    assert controller.session.sampling.temp == 0.7 and controller.session.spec.draft_n_max == 5
    assert not screen.of(Load)  # the same models: no reload
    controller.submit("new question")
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
    assert controller.session.sampling.temp == 0.0  # the current settings stay


def test_a_chat_that_could_not_be_saved_is_kept_at_quit_and_restored_whole_at_the_next_start(setup, monkeypatch):
    controller, screen = make(setup)
    controller.submit("first")
    screen.run(controller)
    real = chat_store._values

    def full(m):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(chat_store, "_values", full)
    controller.submit("second")
    screen.run(controller)
    assert controller.unsaved and len(chat_store.load_chat(controller.chat.id).messages) == 2
    kept = controller.keep_unsaved()
    assert kept == paths.data_dir().parent / f"spectui-unsaved-{controller.chat.id}.md"
    assert "## User\n\nsecond" in kept.read_text() and kept.with_suffix(".json").exists()
    monkeypatch.setattr(chat_store, "_values", real)
    chat_store.close()  # the next start
    notes, problems = chat_store.import_unsaved()
    assert problems == [] and len(notes) == 1
    assert chat_store.latest_chat().messages == controller.chat.messages  # overlay and statistics too


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


def test_a_killed_answer_is_replayed_from_its_journal(setup):
    controller, screen = make(setup)
    controller.submit("hi")
    job = screen.of(Generate)[0].job
    events = list(job.session.generate(messages=job.messages, limits=job.limits))
    rounds = [i for i, e in enumerate(events) if isinstance(e, Round)]
    for event in events[: rounds[3] + 1]:
        controller.add_events([event])
    partial = controller.chat.messages[-1].content
    assert partial and partial != answer_text()
    # the process dies here: no clean save; a new controller opens the chat
    again, screen = make(setup)
    again.open_chat(controller.chat.id)
    answer = again.chat.messages[-1]
    assert answer.content == partial and answer.stopped


def test_edit_resends_and_replaces_what_followed(setup):
    controller, screen = make(setup)
    controller.submit("first")
    screen.run(controller)
    controller.submit("second")
    screen.run(controller)
    first = controller.chat.messages[0]
    controller.edit(first)
    assert screen.of(ComposeText)[-1] == ComposeText("first")
    assert controller.submit("first, edited")
    removed = screen.of(MessagesRemoved)[-1].ids
    assert id(first) in removed and len(removed) == 4
    assert [m.content for m in controller.chat.messages] == ["first, edited", ""]
    screen.run(controller)
    assert controller.chat.messages[-1].content == answer_text()


def listed_title(chat_id: str) -> str:
    """The chat's title as the saved chats (ctrl+l) list it."""
    return next(c.title for c in chat_store.list_chats()[0] if c.id == chat_id)


def test_the_title_follows_an_edited_first_message_but_a_given_name_stays(setup):
    controller, screen = make(setup)
    for text in ("first", "second"):
        controller.submit(text)
        screen.run(controller)
    chat_id = controller.chat.id
    controller.edit(controller.chat.messages[2])  # a later message: the title stays
    controller.submit("second, edited")
    screen.run(controller)
    assert listed_title(chat_id) == "first"
    controller.edit(controller.chat.messages[0])
    controller.submit("first, edited")
    screen.run(controller)
    assert listed_title(chat_id) == controller.chat.title == "first, edited"
    chat_store.rename_chat(chat_id, "my name")  # ctrl+l renames the open chat
    controller.chats_changed(renamed={chat_id: "my name"}, deleted=set())
    controller.edit(controller.chat.messages[0])
    controller.submit("first, edited again")
    screen.run(controller)
    assert listed_title(chat_id) == controller.chat.title == "my name"


def test_a_failed_turn_leaves_no_empty_answer(setup):
    controller, screen = make(setup)
    controller.submit("hi")
    controller.turn_failed("RuntimeError: llama_decode returned -1")
    assert [m.role for m in controller.chat.messages] == ["user"]
    assert screen.of(AnswerEnded)[-1] == AnswerEnded(removed=True)
    assert screen.of(Notice)[-1].title == "Generation failed" and not controller.generating


def test_a_none_turn_becomes_the_speed_baseline(setup):
    # paced past the recorded prompt time, so the replay has a tok/s
    controller, screen = make(setup, FakeSession(spec=setup.spec, round_s=0.03))
    controller.set_spec_type("none")
    controller.submit("hi")
    screen.run(controller)
    assert controller.panel_state().baseline.tok_s == controller.turn.message.stats["tok_per_s"] > 0


def test_ab_runs_both_sides_cold_restores_the_configuration_and_judges(setup):
    session = FakeSession(spec=setup.spec)
    run = ABRun(session, None, GenerationLimits(n_predict=48), trace_format.header("A/B", {}, setup.values()))
    a, b = default_types(session.available_types(), "ngram-mod")
    assert (a, b) == ("none", "ngram-mod")  # the baseline against the chat's own type
    assert default_types(session.available_types(), "none") == ("none", "draft-simple")
    a, b = "ngram-mod", "draft-simple"
    specs = [session.spec.with_types(a), session.spec.with_types(b).replace(draft_n_max=5)]
    run.start("Write a python function that adds two numbers.", specs)
    started = []
    run.run(specs, lambda side, spec: started.append(run.side_started(side, spec)), run.add, pytest.fail)
    verdict = run.ended()
    assert isinstance(verdict, Verdict) and verdict.identical
    assert [t.message.config_label for t in started] == ["ngram-mod", "draft-simple n-max 5"]
    assert session.resets == 2 and session.spec == setup.spec  # cold each, then restored
    assert [p[-1]["content"] for p in session.prompts] == [run.prompt] * 2
    path = run.save_trace()
    assert path.parent == paths.traces_dir()  # the data folder's, as the README says, not the current folder
    assert path.parent.stat().st_mode & 0o777 == 0o700
    trace = trace_format.read(path)
    assert [t.side for t in trace.turns] == ["A", "B"]


def test_the_same_ab_pair_again_runs_the_other_way_round_and_pools_its_speedups(setup):
    run = ABRun(FakeSession(spec=setup.spec), None, GenerationLimits(), {})
    specs = [setup.spec.with_types("ngram-mod"), setup.spec]
    recorded = load_recording()  # a real turn, with its own times: a tok/s
    orders, verdicts = [], []
    for prompt in ("hi", "hi", "hi", "another"):
        run.start(prompt, specs)
        orders.append(run.order)  # what run.run walks
        for side in run.order:
            run.side_started(side, specs[side])
            run.add(recorded)
        verdicts.append(run.ended())
    assert orders == [(0, 1), (1, 0), (0, 1), (0, 1)]  # interleaved; a new prompt starts over
    assert [len(v.speedups) for v in verdicts] == [1, 2, 3, 1]
    assert verdicts[2].speedups[-1] == verdicts[2].speedup  # each verdict's own run last
    assert "over 3 interleaved runs" in render_verdict(verdicts[2], ["ngram-mod", "draft-simple"]).plain


def test_an_ab_run_stopped_before_b_has_no_verdict(setup):
    session = FakeSession(spec=setup.spec)
    run = ABRun(session, None, GenerationLimits(), {})
    run.start("hi", [setup.spec.with_types("ngram-mod"), setup.spec])

    def started(side, spec):
        run.side_started(side, spec)
        run.stop()

    run.run([setup.spec.with_types("ngram-mod"), setup.spec], started, run.add, pytest.fail)
    assert run.ended() == "No verdict: B did not finish (stopped or failed)."
    assert session.spec == setup.spec


def test_regenerate_replaces_the_last_answer(setup):
    controller, screen = make(setup)
    controller.submit("hi")
    screen.run(controller)
    first = controller.chat.messages[-1]
    controller.regenerate()
    assert id(first) in screen.of(MessagesRemoved)[-1].ids
    screen.run(controller)
    assert [m.role for m in controller.chat.messages] == ["user", "assistant"]
    assert controller.chat.messages[-1] is not first and controller.chat.messages[-1].content == answer_text()
    assert screen.of(Generate)[-1].job.messages == [{"role": "user", "content": "hi"}]


def test_nothing_replaces_the_chat_while_an_answer_streams(setup):
    controller, screen = make(setup)
    controller.submit("hi")
    chat = controller.chat
    controller.new_chat()
    controller.open_chat(chat.id)
    assert controller.chat is chat and not screen.of(ChatShown)
    assert [n.text for n in screen.of(Notice)] == [
        "Stop the answer first (esc), then start a new chat.",
        "Stop the answer first (esc), then open another chat.",
    ]


def test_deleting_the_open_chat_mid_answer_stops_it_and_nothing_else_runs_until_it_ends(setup):
    controller, screen = make(setup)
    controller.submit("hi")
    job = screen.of(Generate)[0].job
    other = chat_types.new_chat("smollm2")
    other.messages = [chat_types.Message("user", "q")]
    chat_store.save_chat(other)
    controller.chats_changed({}, {controller.chat.id})
    assert job.stop.is_set() and controller.generating  # asked to stop; its worker still runs
    assert screen.of(ChatShown)[-1].chat is controller.chat and not controller.chat.messages
    controller.open_chat(other.id)  # refused until the old answer's worker ends
    assert controller.chat.id != other.id
    controller.submit("queued behind the stopping answer")
    assert controller.queued == ["queued behind the stopping answer"]
    for event in job.session.generate(messages=job.messages, limits=job.limits):
        job.session.cancel()
        controller.add_events([event])  # dropped: their chat is gone
    # the old answer's end freed the session: the queued message went, into the new chat only
    assert screen.of(Generate)[-1].job is not job and controller.queued == []
    assert [m.content for m in controller.chat.messages] == ["queued behind the stopping answer", ""]


def test_settings_apply_to_the_loaded_session_without_a_reload(setup):
    controller, screen = make(setup)
    controller.apply_settings({"temp": 0.5, "spec_draft_n_max": 6, "n_predict": 9})
    assert controller.session.sampling.temp == 0.5 and controller.session.spec.draft_n_max == 6
    assert controller.setup.n_predict == 9 and not screen.of(Load)
    notice = screen.of(Notice)[-1]
    assert notice.title == "Settings changed"
    assert notice.text.splitlines() == ["draft n-max 3 → 6", "n-predict 48 → 9", "temperature 0.0 → 0.5"]
    controller.apply_settings({"system": "Answer in one short sentence, always.", "seed": None})
    assert screen.of(Notice)[-1].text == "system prompt none → “Answer in one short sen…”"
    controller.submit("hi")
    assert screen.of(Generate)[-1].job.limits.n_predict == 9


def test_a_first_load_that_fails_says_so_and_keeps_the_text(setup):
    controller, screen = make(setup, session=None)
    controller.load(setup)
    controller.submit("my question")
    controller.session_failed("model.gguf: not a GGUF file")
    assert header(controller) == ("spectui", "no model loaded") and not controller.loading
    assert screen.of(Notice)[-1].title == "Loading failed"
    assert controller.queued == ["my question"] and not screen.of(Generate)


def test_an_answer_ended_by_an_engine_error_is_kept_and_said(setup):
    session = FakeSession(spec=setup.spec)
    recorded = load_recording()
    end = next(e for e in recorded if isinstance(e, TurnEnd))
    session.events = [*recorded[:-1], replace(end, stop_reason=StopReason.ERROR, error="llama_decode returned -3")]
    controller, screen = make(setup, session)
    controller.submit("hi")
    screen.run(controller)
    notice = screen.of(Notice)[-1]
    assert (notice.title, notice.text, notice.severity) == ("Answer ended: error", "llama_decode returned -3", "error")
    assert controller.chat.messages[-1].stopped and controller.chat.messages[-1].content


def test_settings_the_setup_refuses_are_said_and_change_nothing(setup):
    controller, screen = make(setup)
    controller.apply_settings({"spec_type": "no-such-type"})
    notice = screen.of(Notice)[-1]
    assert (notice.title, notice.severity) == ("Settings not changed", "error") and "no-such-type" in notice.text
    assert controller.setup == setup


def test_a_long_chats_cut_is_said_when_it_first_happens_and_when_it_moves(setup):
    controller, screen = make(setup)
    controller.submit("hi")
    start = TurnStart(t=0.0, n_prompt=150, n_prompt_decoded=150, n_ctx=256, config={}, n_left_out=6)
    for event in (start, start, replace(start, n_left_out=10)):
        controller.add_events([event])
    said = [n.text for n in screen.of(Notice) if n.title == "Long chat"]
    assert len(said) == 2 and "first 6 messages" in said[0] and "first 10 messages" in said[1]
    assert "-c 256" in said[0]
