"""build_plan chooses each type's acceptance in one order (a run's rounds, else the saved
answers, else the calibration) for the CLI, the card, the panel and the bench; model-free."""

from __future__ import annotations

from functools import partial

import pytest

from spectui.plan.acceptance import Calibration, Saved, replay_ngram
from spectui.plan.acceptance_sources import build_plan
from spectui.plan.curve import Curve, Point
from spectui.plan.observed import drafting_of, read_run
from spectui.plan.predict import Drafting, model_drafting, predict
from spectui.spec_config import NGRAM_TYPES, SpecConfig
from spectui.spec_types import Spec
from tests.helpers.events import a_round

CURVE = Curve(
    {64: tuple(Point(b, 0.01 * (1 + 0.1 * (b - 1)), 0.02) for b in (1, 2, 3, 4, 5, 6, 7, 8, 9, 17, 33, 65))},
    {64: (Point(1, 0.002, 0.02), Point(2, 0.003, 0.02))},
    0.0002,
    0.0004,
)
SPEC = SpecConfig(types=("draft-simple",), draft_n_max=3)
TEXT = (5, 6, 7, 8, 9) * 6  # repeats: every n-gram type finds matches
CAL = Calibration((0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05), ((TEXT[:10], TEXT),), 0.0002, 0.0004, 24)
SAVED = {
    "draft-simple": Saved(3, 40, positions=(0.5,) * 8),
    "ngram-mod": Saved(2, 30, drafting=Drafting(0.5, 4.0, 2.0, False)),
}


rnd = partial(a_round, t_verify=0.01, n_past=64)  # a draft-simple round at depth 64


def test_saved_answers_come_before_the_calibration_type_by_type():
    plan = build_plan(CURVE, SPEC, 64, model_type="draft-simple", saved=SAVED, calibration=CAL)
    assert plan.positions == (0.5,) * 8 and plan.sources["draft-simple"] == "your saved answers (3, 40 drafts)"
    assert plan.ngram["ngram-mod"] == SAVED["ngram-mod"].drafting
    assert plan.sources["ngram-mod"] == "your saved answers (2, 30 drafts)"
    assert plan.ngram["ngram-simple"] == replay_ngram("ngram-simple", SPEC, CAL.streams)
    assert plan.sources["ngram-simple"] == "replayed over the calibration's answers"
    assert list(plan.sources) == ["draft-simple", *NGRAM_TYPES]  # the table's order
    calibrated = build_plan(CURVE, SPEC, 64, model_type="draft-simple", calibration=CAL)
    assert calibrated.positions == CAL.positions
    assert calibrated.sources["draft-simple"] == "calibration on the starter prompts (24 rounds at n-max 8)"
    row = calibrated.row("draft-simple", 3)
    expected = predict(CURVE, "draft-simple", model_drafting(CAL.positions, 3), 3, depth=64)
    assert row is not None and row.speedup == expected.speedup


def test_a_runs_rounds_come_first_and_the_plan_is_of_its_one_type():
    rounds = [rnd(4, 2, n_max=4), rnd(3, 3), rnd(3, 1), rnd(2, 0, n_max=2), rnd(3, 0, configured=(Spec.NGRAM_MOD,))]
    run = read_run(rounds, SPEC)  # at n-max 3: n-max 4's round capped (the what-if), n-max 2's and ngram-mod's left out
    assert (run.n_max, run.drafts, run.depth) == (3, 3, 64)
    assert run.drafting == drafting_of(rounds[:3], True, 3)
    plan = build_plan(CURVE, SPEC, 64, run=run, saved=SAVED, calibration=CAL)
    assert [(p.spec_type, p.n_max) for p in plan.rows] == [("draft-simple", 3)]
    assert plan.rows[0].speedup == pytest.approx(predict(CURVE, "draft-simple", run.drafting, 3, depth=64).speedup)
    idle = build_plan(CURVE, SPEC, 64, run=read_run([rnd(0, 0)], SPEC)).rows[0]
    assert idle.speedup is None  # nothing drafted: break-even alone, for drafts of n-max tokens
    assert idle.break_even == predict(CURVE, "draft-simple", Drafting(1.0, 3.0, 0.0, True), 3, False, 64).break_even
    ngram = SpecConfig(types=("ngram-mod",))
    mod = build_plan(CURVE, ngram, 64, run=read_run(rounds, ngram))
    assert mod.ngram == {"ngram-mod": drafting_of(rounds[4:], False)}


def test_the_chat_reads_no_calibration_that_spectui_plan_would_measure_again(monkeypatch):
    """The card priced from a calibration measured for other sampling, which `spectui plan`
    called stale and measured again: both now read it by one key (plan/identity.py)."""
    import json

    from spectui.chat.starters import PROMPTS
    from spectui.config.setup import Setup
    from spectui.plan import loaded_pair
    from tests.conftest import RECORDED_CURVE

    doc = json.loads(RECORDED_CURVE.read_text())
    monkeypatch.setattr(loaded_pair, "cached_doc", lambda setup, status: (doc, True))
    as_measured = Setup().with_values({"temp": 0.8, "seed": 0})  # the recorded calibration's sampling
    curve, calibration, plannable = loaded_pair.for_pair(as_measured, None, PROMPTS)
    assert curve is not None and calibration is not None and plannable
    for other in ({"temp": 0.2}, {"system": "Be brief."}):
        curve, calibration, _ = loaded_pair.for_pair(as_measured.with_values(other), None, PROMPTS)
        assert curve is not None and calibration is None, other  # the curve still prices the panel
