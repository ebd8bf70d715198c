"""The panel's break-even rows (chat/panel.plan_reading, plan/loaded_pair.cached_for; the widget's rows and
strip): constructed curves and rounds, no model; one Pilot run on a FakeSession."""

from __future__ import annotations

from functools import partial

import pytest

from spectui.chat import panel
from spectui.chat.panel import PanelState, plan_reading
from spectui.config.setup import Setup
from spectui.engine import noise
from spectui.engine.auto import auto_costs
from spectui.engine.events import PromptDone, TurnStart
from spectui.engine.interface import SessionStatus
from spectui.plan import cache, identity, loaded_pair
from spectui.plan.observed import drafting_of
from spectui.plan.predict import Drafting, break_even, predict
from spectui.spec_config import SpecConfig
from spectui.tui.widgets.stats_panel import render, status_strip
from tests.helpers.curves import costs
from tests.helpers.events import a_round
from tests.tui_helpers import SHORT, answered, send, sync

CURVE = costs({1: 1.0, 2: 1.2, 3: 1.3, 4: 1.4, 9: 2.0}, draft=0.01)  # draft-simple n-max 3 breaks even at 23%
FLAT = costs({1: 1.0, 17: 1.0})  # a batch costs one step: a free n-gram draft pays at any α
DEAR = costs({1: 1.0, 17: 17.0}, draft=0.05)  # compute-bound, a dear draft: never pays
DRAFT3 = SpecConfig(types=("draft-simple",), draft_n_max=3)
NGRAM = SpecConfig(types=("ngram-simple",))


# the rounds a turn of DRAFT3 or NGRAM gives, at depth 100
draft3_round = partial(a_round, by=DRAFT3.label, n_max=DRAFT3.draft_n_max, n_past=100)
ngram_round = partial(a_round, by=NGRAM.label, n_max=0, n_past=100)


def test_none_shows_nothing_and_a_type_the_curve_cannot_price_says_why():
    assert plan_reading(CURVE, SpecConfig(types=("none",)), [], 0) is None
    assert plan_reading(CURVE, SpecConfig(types=("auto",)), [], 0).why == "break-even: not for auto"
    both = SpecConfig(types=("ngram-mod", "draft-simple"))
    assert plan_reading(CURVE, both, [], 0).why == "break-even: one type at a time"
    assert plan_reading(CURVE, SpecConfig(types=("draft-mtp",)), [], 0).why == "break-even: this type not timed"
    no_draft_timed = costs({1: 1.0, 4: 1.4})
    assert plan_reading(no_draft_timed, DRAFT3, [], 0).why == "break-even: this type not timed"


def test_a_draft_model_has_its_break_even_before_any_round():
    reading = plan_reading(CURVE, DRAFT3, [], 0)
    rate = break_even(CURVE, Drafting(1.0, 3.0, 0.0, True), 0)  # accepted / drafted
    assert 0.2 < rate < 0.3
    assert reading.break_even == rate
    assert (reading.speedup, reading.word) == (None, panel.NO_DRAFTS)
    deeper = plan_reading(CURVE, replace_n_max(5), [], 0)
    at5 = break_even(CURVE, Drafting(1.0, 5.0, 0.0, True), 0)  # n-max is read from the spec in force
    assert deeper.break_even == at5 != reading.break_even


def replace_n_max(n: int) -> SpecConfig:
    return DRAFT3.replace(draft_n_max=n)


@pytest.mark.parametrize(
    "accepted, word",
    [
        ([2] * 32, noise.PAYS),  # 67% ± 17% of the drafts accepted, break-even at 23%
        ([0] * 32, noise.LOSES),
        ([1, 1, 0] * 11, noise.WITHIN),  # 22% ± 14%
        ([3] * 10, panel.FEW),  # under MIN_DRAFTS drafting rounds
    ],
)
def test_the_word_says_which_side_of_break_even_the_measured_acceptance_is(accepted, word):
    rounds = [draft3_round(3, a) for a in accepted]
    reading = plan_reading(CURVE, DRAFT3, rounds, 64)
    d = drafting_of(rounds, True, 3)
    expected = predict(CURVE, "draft-simple", d, 3, depth=64)
    assert (reading.speedup, reading.word) == (expected.speedup, word)
    assert reading.break_even == expected.break_even
    if word == noise.PAYS:
        assert reading.speedup > 1 and d.alpha > reading.break_even
    if word == noise.LOSES:
        assert reading.speedup < 1 and d.alpha < reading.break_even


def test_never_and_any_are_said_before_enough_drafts_and_the_judges_word_after():
    never = plan_reading(DEAR, DRAFT3, [draft3_round(3, 3)] * 10, 64)
    assert (never.break_even, never.word) == (None, panel.NEVER) and never.speedup < 1
    assert never.shown == ("never", f"×{never.speedup:.2f}")
    measured = plan_reading(DEAR, DRAFT3, [draft3_round(3, 3)] * 20, 64)
    assert (measured.word, measured.shown) == (noise.LOSES, never.shown)  # the plan row's word, as the card's
    strip = status_strip(PanelState(spec=DRAFT3, verify="greedy", curve=DEAR, events=[draft3_round(3, 3)] * 10))
    assert f"never pays ×{never.speedup:.2f}" in strip.plain  # the 80-column strip's "never" says what it is
    anyway = plan_reading(FLAT, NGRAM, [ngram_round(4, 1), ngram_round(0, 0)] * 5, 64)
    assert (anyway.break_even, anyway.word) == (0.0, panel.ANY) and anyway.speedup > 1
    measured = plan_reading(FLAT, NGRAM, [ngram_round(4, 1), ngram_round(0, 0)] * 20, 64)
    assert (measured.break_even, measured.word) == (0.0, noise.PAYS)


def test_an_ngram_type_is_priced_from_its_measured_drafts_only():
    assert plan_reading(CURVE, NGRAM, [], 0) == panel.PlanReading(None, None, panel.NO_DRAFTS)
    state = PanelState(spec=NGRAM, verify="greedy", curve=CURVE)
    assert "break-even       -" in render(state).plain and "≥" not in status_strip(state).plain
    assert plan_reading(CURVE, NGRAM, [ngram_round(0, 0)] * 5, 0).word == panel.NO_DRAFTS
    rounds = [ngram_round(4, 4), ngram_round(0, 0)] * 12 + [ngram_round(2, 0)] * 8
    reading = plan_reading(CURVE, NGRAM, rounds, 300)
    d = drafting_of(rounds, model=False)
    assert not d.model and d.share == pytest.approx(20 / 32)
    expected = predict(CURVE, "ngram-simple", d, None, depth=300)
    assert reading.speedup == expected.speedup
    assert reading.break_even == expected.break_even


def test_rounds_of_another_configuration_do_not_count_and_a_larger_n_max_is_read_capped():
    other = [ngram_round(3, 0)] * 20  # the last turn ran ngram-simple: draft-simple has no rounds yet
    assert plan_reading(CURVE, DRAFT3, other, 64).word == panel.NO_DRAFTS
    smaller = [draft3_round(2, 2, n_max=2)] * 20  # n-max 2's drafts say nothing of a third token
    assert plan_reading(CURVE, DRAFT3, smaller, 64).speedup is None
    at8 = [draft3_round(8, 2, n_max=8), draft3_round(8, 7, n_max=8)] * 10
    reading = plan_reading(CURVE, DRAFT3, at8, 64)
    assert reading.speedup == predict(CURVE, "draft-simple", drafting_of(at8, True, 3), 3, depth=64).speedup


def status(target: str, draft: str | None = None) -> SessionStatus:
    return SessionStatus("t", target, None, 4096, 0, True, DRAFT3, ("none", "draft-simple"), draft)


def test_the_chat_reads_the_curve_plan_cached_and_never_a_foreign_or_corrupt_one(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path / "cache"))
    target = tmp_path / "t.gguf"
    target.write_bytes(b"GGUF")
    setup = Setup()
    assert loaded_pair.cached_for(setup, status(str(tmp_path / "gone.gguf"))) == (None, False)  # not a file here
    assert loaded_pair.cached_for(Setup(server="http://localhost:8080"), status(str(target))) == (None, False)
    assert loaded_pair.cached_for(setup, status(str(target))) == (None, True)  # plan not run: the panel says so
    key = identity.key(setup, target, None)
    cache.store(key, {"curve": CURVE.as_dict()})
    assert loaded_pair.cached_for(setup, status(str(target))) == (CURVE, True)
    cache.cache_path(key).write_text("{not json")
    assert loaded_pair.cached_for(setup, status(str(target))) == (None, True)
    cache.store({**key, "threads": 99}, {"curve": CURVE.as_dict()})  # another identity's file
    assert loaded_pair.cached_for(setup, status(str(target))) == (None, True)


def test_the_panel_shows_break_even_and_the_prediction_in_its_width():
    events = [TurnStart(t=0.0, n_prompt=5, n_prompt_decoded=5, n_ctx=100, config={}), PromptDone(t=0.5, t_prompt=0.5)]
    events += [draft3_round(3, 0)] * 20
    state = PanelState(spec=DRAFT3, verify="greedy", events=events, n_ctx=4096, n_past=100, curve=CURVE)
    text = render(state).plain
    assert "break-even     23%" in text and "predicted" in text and noise.LOSES in text
    assert max(len(line) for line in text.splitlines()) <= PanelState.width
    assert "acc 0% ≥23% ×0." in status_strip(state).plain
    state.curve, state.plannable = None, True
    assert "press f6 to measure break-even" in render(state).plain and "≥" not in status_strip(state).plain
    state.spec = SpecConfig(types=("auto",))  # a curve gives auto no break-even: nothing to promise
    assert "break-even" not in render(state).plain
    state.spec = DRAFT3
    state.plannable = False  # a server, a replay: nothing to run
    assert "break-even" not in render(state).plain


@pytest.mark.usefixtures("dirs")  # conftest.py: own config, data and cache dirs
@sync
async def test_the_chat_panel_and_strip_show_break_even_with_a_cached_curve(fake, setup):
    from spectui.tui.app import SpecApp

    app = SpecApp(setup, session=fake)
    async with app.run_test(size=(120, 40)) as pilot:
        app.controller.state.curve = CURVE
        await send(pilot, app, SHORT)
        await answered(pilot, app)
        await pilot.pause()
        text = app.query_one("#stats").visual.plain
        be = plan_reading(CURVE, setup.spec, app.controller.conversation.turn.rounds, 0).shown[0]
        assert f"break-even    {be:>4}" in text and "predicted     ×" in text
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        strip = app.query_one("#compact").visual.plain
        assert f"≥{be} ×" in strip and len(strip) <= app.query_one("#compact").content_region.width, strip


@pytest.mark.parametrize("spec", [DRAFT3, NGRAM])
def test_a_live_turns_break_even_rows_never_change_the_panels_height(spec):
    """Each change of height is a layout pass while the model needs the CPU (stats_panel):
    the rows are two lines from the turn's start, whatever they say."""
    spec_round = partial(a_round, by=spec.label, n_max=spec.draft_n_max, n_past=100)
    events = [TurnStart(t=0.0, n_prompt=5, n_prompt_decoded=5, n_ctx=100, config={})]
    added = []
    for more in ([], [PromptDone(t=0.5, t_prompt=0.5)], [spec_round(0, 0)], [spec_round(3, 2)] * 20):
        events += more
        state = PanelState(spec=spec, verify="greedy", events=list(events), n_ctx=100, n_past=20)
        without = len(render(state).plain.splitlines())
        state.curve = CURVE
        added.append(len(render(state).plain.splitlines()) - without)
    assert added == [2, 2, 2, 2]


def test_auto_starts_from_the_curves_costs_at_every_size_it_measured():
    verify, step = auto_costs(CURVE, 64)
    assert verify == {b: pytest.approx(0.1 * r) for b, r in {1: 1.0, 2: 1.2, 3: 1.3, 4: 1.4, 9: 2.0}.items()}
    assert step == pytest.approx(0.01)
    assert auto_costs(FLAT, 64)[1] is None  # no draft model timed


def test_a_loaded_pair_with_a_cached_curve_seeds_auto(setup, monkeypatch):
    from spectui.chat import switcher
    from spectui.chat.state import ChatState
    from spectui.store import chat_types
    from tests.fake_session import FakeSession

    seeded = []
    monkeypatch.setattr(switcher.loaded_pair, "for_pair", lambda setup, status, prompts: (CURVE, None, True))
    monkeypatch.setattr(switcher, "Session", FakeSession)  # the fake stands for a local Session
    monkeypatch.setattr(FakeSession, "seed_auto", lambda self, *costs: seeded.append(costs), raising=False)
    state = ChatState(setup, lambda update: None, chat_types.new_chat("x"), None)
    switcher.SetupSwitcher(state).session_loaded(FakeSession(spec=setup.spec), setup, {})
    assert state.curve is CURVE and seeded == [auto_costs(CURVE)]


@pytest.mark.parametrize(("drafted", "said"), [(9, " #9: 100%"), (11, " #9-11: mean 100%")])
def test_positions_past_the_bars_are_named_as_one_or_a_range(drafted, said):
    """The panel named one position past its bars "#9-9: mean 100%", a range of one."""
    spec = SpecConfig(types=("draft-simple",), draft_n_max=drafted)
    text = render(PanelState(spec=spec, verify="greedy", events=[a_round(drafted, drafted, n_max=drafted)])).plain
    assert said in text.splitlines()
