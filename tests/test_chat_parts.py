"""The chat controller's parts, each on its own (no controller, no screen): the shared state
and its A/B lock, the conversation, persistence and the setup switcher; and how the TUI
words and styles what they emit."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spectui.chat.conversation import GENERATING, STOPPING, Conversation
from spectui.chat.persistence import Persistence
from spectui.chat.state import ChatState
from spectui.chat.switcher import SetupSwitcher
from spectui.chat.updates import (
    ComposeText,
    ConfigShown,
    Generate,
    Notice,
    OutboxChanged,
    PanelChanged,
    StatusLine,
    SwitchFailed,
)
from spectui.config.settings import Settings
from spectui.engine.interface import ChatSession
from spectui.spec_config import N_MAX_LIMIT
from spectui.store import chat_types
from spectui.tui.header import status_spans
from tests.fake_session import FakeSession

pytestmark = pytest.mark.usefixtures("dirs")  # own data and config dirs (conftest.py)


def state_of(setup, session: ChatSession | None) -> tuple[ChatState, list]:
    updates: list = []
    chat = chat_types.new_chat(setup.preset)
    return ChatState(setup, Settings(record_traces=False), updates.append, chat, session), updates


def test_the_ab_lock_holds_the_session_until_it_is_given_back(setup):
    state, updates = state_of(setup, FakeSession(spec=setup.spec))
    assert state.idle("compare")
    session = state.start_compare()
    assert session is state.session and state.comparing
    assert state.start_compare() is None  # one A/B view at a time
    assert not state.idle("start a new chat")
    assert updates[-1] == Notice("Close the A/B view first (esc), then start a new chat.", severity="warning")
    state.end_compare()
    assert not state.comparing and updates[-1] == PanelChanged() and state.idle("compare")


def test_the_conversation_queues_while_loading_and_edits_without_a_screen(setup):
    state, updates = state_of(setup, None)
    talk = Conversation(state, Persistence(state))
    assert talk.submit("first") and talk.queued == ["first"] and updates[-1] == OutboxChanged(("first",))
    state.session = FakeSession(spec=setup.spec)
    talk.send_queued()
    assert updates[-2:] == [GENERATING, Generate(state.job)] and state.generating
    assert talk.stop() and state.job is not None and state.job.stop.is_set()
    talk.stop_or_cancel_edit()
    assert updates[-1] == STOPPING
    state.job = None
    talk.edit(state.chat.messages[0])  # the question, with its answer after it
    assert updates[-2:] == [ComposeText("first"), StatusLine("editing", later=1)]
    talk.cancel_edit()
    assert talk.editing is None and updates[-1] == StatusLine()


def test_persistence_saves_opens_and_says_what_it_cannot_read(setup):
    state, updates = state_of(setup, FakeSession(spec=setup.spec))
    records = Persistence(state)
    records.save()  # an empty chat is not stored
    assert records.list_chats() == ([], [])
    state.chat.messages.append(chat_types.Message(role="user", content="hello"))
    records.save()
    assert not state.unsaved and [c.id for c in records.list_chats()[0]] == [state.chat.id]
    opened = records.open(state.chat.id)
    assert opened is not None and [m.content for m in opened.messages] == ["hello"]
    assert opened.setup == setup.values()  # what resuming it restores
    assert records.open("no-such-chat") is None and updates[-1].severity == "error"
    records.save_trace()
    assert "nothing to trace yet" in updates[-1].text
    assert records.rename_chat(state.chat.id, "greeting").title == "greeting"
    records.delete_chat(state.chat.id)
    assert records.list_chats() == ([], [])


def test_the_switcher_keeps_the_loaded_pair_when_a_switch_fails(setup):
    state, updates = state_of(setup, FakeSession(spec=setup.spec))
    switcher = SetupSwitcher(state)
    switcher.switch_models("other.gguf", None)
    assert state.loading
    switcher.session_failed("other.gguf: not a GGUF file")
    assert not state.loading and state.session is not None
    assert updates[-2:] == [StatusLine(), SwitchFailed("other.gguf: not a GGUF file")]
    switcher.step_n_max(1000)
    assert state.setup.spec.draft_n_max == N_MAX_LIMIT and updates[-1] == ConfigShown()
    state.comparing = True
    assert not switcher.configure(setup.spec) and "A/B view" in updates[-1].text


def test_a_first_load_that_fails_leaves_no_session_and_says_why(setup):
    state, updates = state_of(setup, None)
    switcher = SetupSwitcher(state)
    switcher.load(setup)
    switcher.session_failed("model.gguf: not a GGUF file")
    assert updates[-2] == StatusLine("failed", "model.gguf: not a GGUF file")
    assert (updates[-1].title, updates[-1].severity) == ("Loading failed", "error")


def test_the_status_line_reads_and_is_styled_as_before():
    assert status_spans(GENERATING) == (("● ", "$success"), ("generating", ""), ("  esc stops", "$text-muted"))
    assert status_spans(STOPPING) == (("stopping at the end of this round…", "$warning"),)
    assert [t for t, _ in status_spans(StatusLine("editing", later=2))] == [
        "✎ ",
        "editing: enter resends",
        " and replaces the 2 messages after it",
        "  esc cancels",
    ]
    assert status_spans(StatusLine("editing"))[2] == ("", "$text-muted")  # the last message: nothing replaced
    assert status_spans(StatusLine("loading", "reading the target")) == (
        ("◌ ", "$accent"),
        ("reading the target", ""),
        ("…", ""),
    )
    assert status_spans(StatusLine("failed", "bad")) == (("could not load the models: bad", "$error"),)
    assert status_spans(StatusLine()) == ()


def test_a_round_in_words_says_its_rejected_draft_and_note_whole_where_its_cells_cut_them():
    from dataclasses import replace

    from spectui.chat.rounds import REJECTED_CHARS, cells, detail
    from spectui.engine.events import Round
    from tests.tui.test_tui_snapshots import recorded

    long = "word\n" * 10
    drafted, plain = (
        e for e in recorded("ngram-mod", [([" a"], long, " b"), ([], "", " c")], 20.0) if isinstance(e, Round)
    )
    drafted = replace(drafted, note="auto: ngram-mod k=4, expected 1.30x over what the draft model gives")
    cell = cells(drafted)
    assert len(cell[-2]) == REJECTED_CHARS and cell[-2].endswith("…") and cell[-1] == drafted.note
    said = detail(drafted)
    assert repr(long.replace("\n", "↵")) in said and said.endswith("\n" + drafted.note)
    assert said.startswith("round 1: ngram-mod drafted 2 tokens, 1 accepted, 1 rejected: ")
    assert detail(plain) == "round 2: nothing drafted; 1 token emitted"


def test_a_count_of_one_reads_in_the_singular_wherever_the_chat_shows_it():
    """'1 token', never '1 tokens': the answer's line, the panel's state, the verdict, the round
    details and the saved chats' list all count through words.plural."""
    from spectui.chat.rounds import detail
    from spectui.engine.events import Round
    from spectui.store.chat_store import Summary
    from spectui.tui.screens.chats import when
    from spectui.tui.widgets.message import meta_line
    from spectui.words import plural
    from tests.tui.test_tui_snapshots import recorded

    assert (plural(1, "token"), plural(2, "token"), plural(0, "match", "matches")) == (
        "1 token",
        "2 tokens",
        "0 matches",
    )
    one = chat_types.Message("assistant", "a", stats={"n_generated": 1, "stop_reason": "eos"})
    assert meta_line(one, streaming=False).plain == "1 token"
    (r,) = (e for e in recorded("none", [([], "", "a")], 20.0) if isinstance(e, Round))
    assert detail(r) == "round 1: nothing drafted; 1 token emitted"
    assert when(Summary("id", "title", 0.0, 0.0, 1)).endswith(" · 1 answer")


def test_the_n_max_keys_stop_at_n_min(setup):
    """Below --spec-draft-n-min no draft is kept: the keys stop there rather than fail."""
    spec = setup.spec.replace(draft_n_min=2, draft_n_max=3)
    state, _ = state_of(replace(setup, spec=spec), FakeSession(spec=spec))
    SetupSwitcher(state).step_n_max(-5)
    assert state.setup.spec.draft_n_max == 2


def test_n_max_keys_on_a_type_that_ignores_n_max_say_so(setup):
    """Under none or an n-gram type the panel and header show no n-max: the key says what it did."""
    spec = setup.spec.with_types("none")
    state, updates = state_of(replace(setup, spec=spec), FakeSession(spec=spec))
    SetupSwitcher(state).step_n_max(1)
    assert state.setup.spec.draft_n_max == spec.draft_n_max + 1
    assert updates[-1] == Notice("Draft n-max 4: none does not use it; draft-* types and auto do", timeout=4)
    state.setup = setup
    SetupSwitcher(state).step_n_max(1)
    assert not isinstance(updates[-1], Notice)  # draft-simple: the header and panel show it


@pytest.mark.model
def test_a_build_that_may_crash_is_said_when_the_pair_loads(setup, session, monkeypatch):
    """Before the first decode, as the CLI's warning (tests/unit/test_build_warning.py)."""
    from spectui.chat import switcher as switcher_module

    monkeypatch.setattr(switcher_module, "crash_risk", lambda: "may crash; the cure")
    state, updates = state_of(setup, None)
    SetupSwitcher(state).session_loaded(session, setup, {})
    state.owns_session = False  # the module's session stays open for the other tests
    said = [u for u in updates if isinstance(u, Notice) and u.text == "may crash; the cure"]
    assert len(said) == 1 and said[0].severity == "warning"
