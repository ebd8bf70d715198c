"""The plan's model (spectui/plan/predict.py) on constructed curves and a recorded one: no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spectui.plan import predict
from spectui.plan.curve import Curve, Point
from spectui.plan.predict import (
    Drafting,
    accepted_at,
    break_even,
    model_drafting,
    round_overhead,
    speedup,
    tok_per_s,
)
from spectui.plan.report import Plan, curve_lines, picture_lines, render
from tests.helpers.curves import costs

RECORDED = Path(__file__).parents[1] / "data" / "plan_smollm2.json"


FLAT = costs({1: 1.0, 17: 1.0})  # a GPU-like batch: 17 tokens cost one step
LINEAR = costs({1: 1.0, 17: 17.0})  # compute-bound: each token costs a step


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.64, 0.9])
@pytest.mark.parametrize("k", [1, 3, 8])
def test_a_round_yields_the_closed_form_at_a_constant_acceptance(alpha, k):
    assert 1 + accepted_at(alpha, k) == pytest.approx((1 - alpha ** (k + 1)) / (1 - alpha))


def test_a_free_batch_pays_at_any_acceptance_and_its_speedup_is_the_tokens_per_round():
    d = Drafting(1.0, 3.0, 0.0, False)
    assert break_even(FLAT, d) == 0.0
    assert speedup(FLAT, d.at(0.5)) == pytest.approx(1 + 0.5 + 0.25 + 0.125)


def test_a_compute_bound_target_never_gains_from_a_free_draft():
    d = Drafting(1.0, 4.0, 0.0, False)
    assert speedup(LINEAR, d.at(1.0)) == pytest.approx(1.0)
    assert speedup(LINEAR, d.at(0.9)) < 1
    assert break_even(LINEAR, d) == pytest.approx(1.0)


def test_break_even_is_where_the_speedup_crosses_one_and_a_dearer_draft_moves_it_up():
    cpu = {1: 1.0, 2: 1.6, 3: 1.9, 4: 2.2, 9: 3.5}
    cheap, dear = costs(cpu, draft=0.02), costs(cpu, draft=0.04)
    d = Drafting(1.0, 3.0, 0.0, True)
    be = break_even(cheap, d)
    assert be is not None and 0 < be < 1
    assert speedup(cheap, d.at_rate(be)) == pytest.approx(1.0, abs=1e-6)
    assert speedup(cheap, d.at_rate(be - 0.05)) < 1 < speedup(cheap, d.at_rate(min(1.0, be + 0.05)))
    dear_be = break_even(dear, d)
    assert dear_be is None or dear_be > be


def test_break_even_is_an_acceptance_rate_accepted_over_drafted():
    """At the break-even rate r a 3-token draft accepts 3r tokens, its positions each at one α."""
    d = Drafting(1.0, 3.0, 0.0, True)
    be = break_even(costs({1: 1.0, 2: 1.6, 3: 1.9, 4: 2.2}, draft=0.02), d)
    at = d.at_rate(be)
    alpha = at.whole ** (1 / 3)
    assert at.accepted == pytest.approx(3 * be) == pytest.approx(alpha + alpha**2 + alpha**3)
    assert d.at_rate(0.0).accepted == 0.0 and d.at_rate(1.0).accepted == pytest.approx(3.0)


def test_a_drafting_that_loses_even_at_full_acceptance_has_no_break_even():
    assert break_even(costs({1: 1.0, 9: 9.0}, draft=0.05), Drafting(1.0, 8.0, 0.0, True)) is None


def test_the_what_if_at_a_smaller_n_max_keeps_the_measured_positions():
    positions = (0.8, 0.6, 0.45, 0.3, 0.2, 0.15, 0.1, 0.05)
    d3 = model_drafting(positions, 3)
    assert (d3.length, d3.accepted, d3.whole) == (3.0, pytest.approx(1.85), 0.45)
    with pytest.raises(ValueError):
        model_drafting(positions[:2], 3)


def test_an_ngram_type_drafts_only_in_its_share_of_rounds():
    """Half the rounds draft 4 tokens, 2 accepted: 2 tokens a drafting round, 1 otherwise."""
    d = Drafting(0.5, 4.0, 2.0, False)
    t1, t5 = FLAT.t(1, 64), FLAT.t(5, 64)
    assert tok_per_s(FLAT, d) == pytest.approx((1 + 0.5 * 2) / (0.5 * t1 + 0.5 * t5))


def test_a_curve_interpolates_between_sizes_and_depths_and_round_trips_through_json():
    c = Curve(
        {64: (Point(1, 0.1, 0.0), Point(3, 0.3, 0.1)), 512: (Point(1, 0.2, 0.0), Point(3, 0.4, 0.0))},
        {},
        0.001,
        0.002,
    )
    assert c.t(2, 64) == pytest.approx(0.2)
    assert c.t(1, 288) == pytest.approx(0.15)
    assert c.t(1, 0) == pytest.approx(0.1)  # never below the shallowest depth measured
    assert c.t_draft(1, 64) == 0.0
    assert Curve.from_dict(json.loads(json.dumps(c.as_dict()))) == c


def test_a_draft_models_overhead_grows_with_its_draft_and_an_ngram_round_costs_nones():
    """Calibrated at 8 tokens: 1 ms without a draft, 5 ms with one (0.5 ms a draft step)."""
    c = Curve({64: (Point(1, 0.1, 0.0),)}, {}, 0.001, 0.005, 8.0)
    assert round_overhead(c, Drafting(1.0, 8.0, 0.0, True)) == pytest.approx(0.005)
    assert round_overhead(c, Drafting(1.0, 2.0, 0.0, True)) == pytest.approx(0.002)
    assert round_overhead(c, Drafting(0.5, 6.0, 0.0, False)) == pytest.approx(0.001)
    old = c.as_dict()
    del old["overhead_spec_length"]  # a cache written before the length was kept: calibrated at 8
    assert Curve.from_dict(old) == c


@pytest.mark.parametrize(
    "broken",
    [
        {"target": {}, "draft": {}, "overhead_none_s": 0, "overhead_spec_s": 0},
        {"target": {"64": [[2, 0.1, 0]]}, "draft": {}, "overhead_none_s": 0, "overhead_spec_s": 0},
        {"target": {"64": [[1, -0.1, 0]]}, "draft": {}, "overhead_none_s": 0, "overhead_spec_s": 0},
        {"target": {"64": [[1, 0.1, 0], [1, 0.1, 0]]}, "draft": {}, "overhead_none_s": 0, "overhead_spec_s": 0},
        {"target": {"64": [[1, 0.1, 0]]}, "draft": {}, "overhead_none_s": -1, "overhead_spec_s": 0},
        {"target": {"64": [[1, 0.1]]}, "draft": {}, "overhead_none_s": 0, "overhead_spec_s": 0},
        {
            "target": {"64": [[1, 0.1, 0]]},
            "draft": {},
            "overhead_none_s": 0,
            "overhead_spec_s": 0,
            "overhead_spec_length": 0,
        },
        {"target": {"64": [[1, 0.1, 0]]}},
    ],
)
def test_a_broken_curve_is_refused(broken):
    with pytest.raises((ValueError, KeyError, TypeError)):
        Curve.from_dict(broken)


@pytest.mark.parametrize("width", [80, 100])
def test_the_recorded_plan_renders_within_a_terminals_width_with_every_section_and_every_word(width):
    doc = json.loads(RECORDED.read_text())
    c = Curve.from_dict(doc["curve"])
    ngram = {"ngram-simple": Drafting(0.1, 14.6, 2.9, False), "ngram-mod": Drafting(0.0, 0.0, 0.0, False)}
    positions = (0.7, 0.5, 0.35, 0.25, 0.2, 0.15, 0.1, 0.08)
    plan = Plan(c, 256, "draft-simple", positions, ngram, {"draft-simple": "calibration"})
    lines = render(plan, ["memory: not available"], width)
    assert max(len(line) for line in lines) <= width
    whole = render(plan, ["memory: not available"])  # a file: lines whole, the same words
    assert " ".join(lines).split() == " ".join(whole).split() and max(len(line) for line in whole) > 80
    text = "\n".join(lines)
    for section in ("Cost curve", "memory: not available", "break-even α", "Speedup against α", "α of draft-simple"):
        assert section in text
    rows = plan.rows
    assert [r.n_max for r in rows] == [*predict.N_MAX, None, None]
    assert rows[-1].break_even is None and rows[-1].speedup is None  # ngram-mod never drafted
    assert plan.as_dict()["table"][2]["alpha"] == pytest.approx(sum(positions[:3]) / 3)


def test_the_picture_draws_the_break_even_row_and_each_line_by_its_mark():
    lines = picture_lines({"1": [0.5, 1.0, 1.5], "ngram-mod": [1.5, 1.5, 1.5]}, height=7)
    grid = [line.split("|", 1)[1] for line in lines[:7]]
    even = next(i for i, line in enumerate(lines) if line.startswith("  1.00x"))
    assert grid[even] == "-1-"  # the break-even row, crossed by n-max 1 at its middle α
    assert grid[0] == "mmm"  # 1.5x at the top: ngram-mod drawn over n-max 1's last point
    assert [i for i, g in enumerate(grid) if g == "1  "] == [even + 2]  # 0.5x, two rows below 1.0x


def test_a_curve_scaled_to_the_loops_single_step_keeps_its_shape_and_says_so():
    c = Curve({64: (Point(1, 0.1, 0.1), Point(4, 0.2, 0.0))}, {64: (Point(1, 0.05, 0.0),)}, 0.001, 0.002)
    loop = c.scaled_to_loop(0.093, 64)
    assert loop.t(1, 64) == pytest.approx(0.093) and loop.t(4, 64) / loop.t(1, 64) == pytest.approx(2.0)
    assert loop.t_draft(1, 64) == pytest.approx(0.0465) and loop.loop_scale == pytest.approx(0.93)
    assert Curve.from_dict(json.loads(json.dumps(loop.as_dict()))) == loop
    assert "scaled by 0.93" in "\n".join(curve_lines(loop)) and "scaled" not in "\n".join(curve_lines(c))


def test_the_draft_models_overhead_is_reported_only_for_a_pair_with_a_draft_model():
    """The fast pair (no draft model) said "1.6 ms with a draft model's draft of 8.0 tokens"."""
    with_model = costs({1: 1.0, 2: 1.5}, draft=0.02, overhead=0.001)
    assert "ms with a draft model's draft of 8.0 tokens" in curve_lines(with_model)[-1]
    assert curve_lines(costs({1: 1.0, 2: 1.5}, overhead=0.001))[-1].endswith("1.0 ms without a draft")
