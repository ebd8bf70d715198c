"""How the TUI words what the chat's parts emit, without Pilot: the status line, the header's
model names, and a count of one in the singular wherever the chat shows one."""

from __future__ import annotations

from spectui.chat.conversation import GENERATING, STOPPING
from spectui.chat.updates import StatusLine
from spectui.engine.events import Round
from spectui.store import chat_types
from spectui.tui.header import header, pair_line, status_spans
from tests.chat.fake_screen import make
from tests.fake_session import FakeSession


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


def test_the_header_names_the_models_as_people_write_them_in_one_form(setup):
    """A model keeps its name at any width: a narrow header cuts it (Textual's ellipsis), it
    never swaps it for a shorter form."""
    controller, _ = make(setup, FakeSession(spec=setup.spec))
    config, models = header(controller.state)
    assert config == "draft-simple · n-max 3 · verify greedy"
    assert models == "SmolLM2-135M-Instruct.Q4_1 ⇠ draft SmolLM2-135M-Instruct.Q4_1"  # a file: its stem
    assert header(controller.state, narrow=True) == (models, "")
    qwen = "Qwen2.5-Coder 1.5B Instruct Q4_K_M"
    assert pair_line(qwen, "Qwen2.5-Coder 0.5B Instruct Q4_K_M") == f"{qwen} ⇠ draft Qwen2.5-Coder 0.5B Instruct Q4_K_M"
    assert pair_line(qwen, None) == f"{qwen} (no draft model)"


def test_the_header_names_the_gpu_devices_the_models_run_on(setup, monkeypatch):
    """At any width the header says where the layers went; on the CPU it says nothing more."""
    from dataclasses import replace

    session = FakeSession(spec=setup.spec)
    status = session.status()
    monkeypatch.setattr(session, "status", lambda: replace(status, devices=("Vulkan0",)))
    controller, _ = make(setup, session)
    assert header(controller.state)[1].endswith("SmolLM2-135M-Instruct.Q4_1 on Vulkan0")
    assert header(controller.state, narrow=True)[0].endswith(" on Vulkan0")


def test_a_count_of_one_reads_in_the_singular_wherever_the_chat_shows_it():
    """'1 token', never '1 tokens': the answer's line, the panel's state, the verdict, the round
    details and the saved chats' list all count through words.plural."""
    from spectui.chat.rounds import detail
    from spectui.store.chat_store import Summary
    from spectui.tui.screens.chats import when
    from spectui.tui.widgets.message import meta_line
    from spectui.words import plural
    from tests.helpers.events import recorded

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
