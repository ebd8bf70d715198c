"""The setup switcher (chat/switcher.py): the speculation mid-answer (told to the live turn),
refused types, n-max keys, loading and switching models, presets and settings; on the fake
session, except the build warning, which needs a loaded pair."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spectui.chat.switcher import SetupSwitcher
from spectui.chat.updates import ConfigShown, Generate, Load, Notice, StatusLine, SwitchFailed
from spectui.engine.events import Round
from spectui.spec_config import N_MAX_LIMIT
from spectui.store import chat_store
from spectui.tui.header import header
from tests.chat.fake_screen import answer_text, make, state_of
from tests.fake_session import FakeSession


def test_live_configure_applies_from_the_next_round_and_is_traced(setup):
    controller, screen = make(setup)
    controller.conversation.submit("hi")

    def more_n_max(c, event):
        if isinstance(event, Round) and event.index == 0:
            c.switcher.step_n_max(1)
            c.switcher.set_spec_type("ngram-mod")

    screen.run(controller, more_n_max)
    rounds = controller.conversation.turn.rounds
    assert (rounds[0].configured, rounds[0].n_max) == (("draft-simple",), 3)
    assert {(r.configured, r.n_max) for r in rounds[1:]} == {(("ngram-mod",), 4)}
    assert controller.state.setup.spec.label == "ngram-mod" and controller.state.setup.spec.draft_n_max == 4
    assert [c.config["spec_type"] for c in controller.persistence.traced[0].changes] == ["draft-simple", "ngram-mod"]
    assert controller.state.chat.messages[-1].config_label == "draft-simple n-max 3 → ngram-mod"
    assert header(controller.state)[0].startswith("ngram-mod")
    assert chat_store.load_chat(controller.state.chat.id).setup["spec_type"] == "ngram-mod"


def test_a_type_the_models_do_not_allow_is_refused_and_nothing_changes(setup):
    controller, screen = make(setup, FakeSession(spec=setup.spec, draft=False))
    switcher = controller.switcher
    before = controller.state.setup
    switcher.set_spec_type("ngram-simple")
    assert controller.state.setup.spec.label == "ngram-simple"
    switcher.configure(before.spec)  # draft-simple without a draft model
    assert screen.of(Notice)[-1].severity == "error" and "not available" in screen.of(Notice)[-1].text
    assert controller.state.setup.spec.label == "ngram-simple"


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


def test_n_max_keys_under_auto_without_a_draft_model_say_n_max_does_nothing(setup):
    """Auto with no draft model drafts n-grams only, which n-max does not bound."""
    spec = setup.spec.with_types("auto")
    state, updates = state_of(replace(setup, spec=spec), FakeSession(spec=spec, draft=False))
    SetupSwitcher(state).step_n_max(1)
    assert updates[-1] == Notice(
        "Draft n-max 4: auto without a draft model drafts n-grams to their own sizes; it bounds a draft model's",
        timeout=4,
    )
    state, updates = state_of(replace(setup, spec=spec), FakeSession(spec=spec))
    SetupSwitcher(state).step_n_max(1)
    assert not isinstance(updates[-1], Notice)  # auto with a draft model: n-max bounds its drafts


def test_model_switch_loads_in_the_background_messages_wait_and_a_failure_keeps_the_old_pair(setup):
    controller, screen = make(setup, session=None)
    switcher = controller.switcher
    switcher.load(setup)
    assert screen.of(Load)[-1] == Load(setup, None) and header(controller.state) == ("spectui", "loading…")
    controller.conversation.submit("queued while loading")
    assert controller.conversation.queued == ["queued while loading"] and not screen.of(Generate)
    first = FakeSession(spec=setup.spec)
    controller.session_loaded(first, setup, {"models": "first"})
    screen.run(controller)  # the queued message went as soon as the models were ready
    assert controller.state.chat.messages[-1].content == answer_text()

    switcher.switch_models("other.gguf", None)
    load = screen.of(Load)[-1]
    assert load.models == ("other.gguf", None) and controller.state.loading
    controller.session_failed("other.gguf: not a GGUF file")
    assert controller.state.session is first and not controller.state.loading
    assert screen.of(SwitchFailed)[-1] == SwitchFailed("other.gguf: not a GGUF file")

    switcher.switch_models("other.gguf", None)
    second = FakeSession(spec=replace(setup.spec, types=("ngram-mod",)), draft=False)
    controller.session_loaded(second, replace(setup, model="other.gguf", model_draft=None), {"models": "second"})
    assert first.closed and controller.state.session is second and not second.closed
    assert controller.state.setup.spec.label == "ngram-mod" and controller.state.environment == {"models": "second"}
    assert controller.persistence.trace_header("spectui chat")["environment"] == {"models": "second"}
    assert isinstance(screen.updates[-1], ConfigShown)


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


def test_a_first_load_that_fails_says_so_and_keeps_the_text(setup):
    controller, screen = make(setup, session=None)
    switcher = controller.switcher
    switcher.load(setup)
    controller.conversation.submit("my question")
    controller.session_failed("model.gguf: not a GGUF file")
    assert header(controller.state) == ("spectui", "no model loaded") and not controller.state.loading
    assert screen.of(StatusLine)[-1] == StatusLine("failed", "model.gguf: not a GGUF file")
    assert (screen.of(Notice)[-1].title, screen.of(Notice)[-1].severity) == ("Loading failed", "error")
    assert controller.conversation.queued == ["my question"] and not screen.of(Generate)


def test_a_preset_switch_keeps_what_the_preset_does_not_set_and_says_what_changed(setup):
    """f5: the preset's models and speculation; the temperature from f10, the system prompt
    and n-predict of a resumed chat stay; the notice once loaded lists the changes."""
    controller, screen = make(replace(setup, n_predict=7, system="be brief"))
    switcher = controller.switcher
    switcher.apply_settings({"temp": 0.5})
    switcher.load_preset("ngram")
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
    switcher.load_preset("no-such-preset")  # resolved first: an error loads nothing
    assert screen.of(Load)[-1] is load and "no-such-preset" in screen.of(Notice)[-1].text


def test_settings_apply_to_the_loaded_session_without_a_reload(setup):
    controller, screen = make(setup)
    switcher = controller.switcher
    switcher.apply_settings({"temp": 0.5, "spec_draft_n_max": 6, "n_predict": 9})
    assert controller.state.session.sampling.temp == 0.5 and controller.state.session.spec.draft_n_max == 6
    assert controller.state.setup.n_predict == 9 and not screen.of(Load)
    notice = screen.of(Notice)[-1]
    assert notice.title == "Settings changed"
    assert notice.text.splitlines() == ["draft n-max 3 → 6", "n-predict 48 → 9", "temperature 0.0 → 0.5"]
    switcher.apply_settings({"system": "Answer in one short sentence, always.", "seed": None})
    assert screen.of(Notice)[-1].text == "system prompt none → “Answer in one short sen…”"
    controller.conversation.submit("hi")
    assert screen.of(Generate)[-1].job.limits.n_predict == 9


def test_settings_the_setup_refuses_are_said_and_change_nothing(setup):
    controller, screen = make(setup)
    switcher = controller.switcher
    switcher.apply_settings({"spec_type": "no-such-type"})
    notice = screen.of(Notice)[-1]
    assert (notice.title, notice.severity) == ("Settings not changed", "error") and "no-such-type" in notice.text
    assert controller.state.setup == setup


@pytest.mark.model
def test_a_build_that_may_crash_is_said_when_the_pair_loads(setup, session, monkeypatch):
    """Before the first decode, as the CLI's warning (tests/unit/test_build_warning.py)."""
    from spectui.chat import switcher as switcher_module

    monkeypatch.setattr(switcher_module, "crash_risk", lambda: "may crash; the cure")
    state, updates = state_of(setup, None)
    SetupSwitcher(state).session_loaded(session, setup, {})  # nothing closes it: the module's session stays open
    said = [u for u in updates if isinstance(u, Notice) and u.text == "may crash; the cure"]
    assert len(said) == 1 and said[0].severity == "warning"
