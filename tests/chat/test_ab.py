"""The A/B view without its screen: the lock that keeps the chat off the session, and an A/B
run (chat/ab.py) on the fake session: both sides cold, the configuration restored, the verdict,
the pair again the other way round, a run stopped before B."""

from __future__ import annotations

import dataclasses

import pytest

from spectui.chat.ab import ABRun, default_types
from spectui.chat.updates import Notice, PanelChanged
from spectui.config import paths
from spectui.engine.ab import Verdict
from spectui.engine.events import StopReason
from spectui.engine.interface import GenerationLimits
from spectui.spec_types import Spec
from spectui.trace import format as trace_format
from spectui.tui.widgets.verdict import render_verdict
from tests.chat.fake_screen import make, state_of
from tests.fake_session import FakeSession, load_recording


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


def test_nothing_reconfigures_or_chats_while_the_ab_view_runs(setup):
    controller, screen = make(setup)
    assert controller.state.start_compare()
    assert not controller.switcher.configure(setup.spec)
    assert not controller.conversation.submit("hi") and not controller.state.chat.messages
    controller.new_chat()
    assert "Close the A/B view" in screen.of(Notice)[-1].text
    controller.state.end_compare()
    assert controller.conversation.submit("hi") and controller.state.generating


def test_ab_runs_both_sides_cold_restores_the_configuration_and_judges(setup):
    session = FakeSession(spec=setup.spec)
    run = ABRun(session, None, GenerationLimits(n_predict=48), trace_format.header("A/B", {}, setup.values()))
    a, b = default_types(session.choices(), (Spec.NGRAM_MOD,))
    assert (a, b) == ((Spec.NONE,), (Spec.NGRAM_MOD,))  # the baseline against the chat's own type
    assert default_types(session.choices(), (Spec.NONE,)) == ((Spec.NONE,), (Spec.DRAFT_SIMPLE,))
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
    assert run.ended() == "No verdict: A, B did not finish (stopped or failed)."  # A stopped midway too
    assert session.spec == setup.spec


def test_a_side_stopped_midway_is_left_out_of_the_pooled_speedups(setup):
    """esc during B ends B's turn, cancelled: it ended, yet did not finish, so no speedup of a
    whole A against a few tokens of B joins the pool."""
    run = ABRun(FakeSession(spec=setup.spec), None, GenerationLimits(), {})
    specs = [setup.spec.with_types("ngram-mod"), setup.spec]
    recorded = load_recording()
    cancelled = [*recorded[:6], dataclasses.replace(recorded[-1], stop_reason=StopReason.CANCELLED)]
    results = []
    for b_events in (recorded, cancelled, recorded):
        run.start("hi", specs)
        for side in run.order:
            run.side_started(side, specs[side])
            run.add(b_events if side == 1 else recorded)
        results.append(run.ended())
    assert results[1] == "No verdict: B did not finish (stopped or failed); left out of this pair's speedups."
    assert isinstance(results[2], Verdict) and len(results[2].speedups) == 2
