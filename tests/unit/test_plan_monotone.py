"""The cost curve kept is non-decreasing in b (spectui/plan/monotone.py, curve.fitted), which sizes are
timed and when a size has been timed enough (plan/decodes.py), and the phase lines a log gets
(cli/phases.py): all without a model."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from spectui.cli.phases import Phases
from spectui.engine import noise
from spectui.plan import curve, decodes
from spectui.plan.monotone import monotone, residuals
from spectui.plan.predict import Drafting, timing_spread

RECORDED = Path(__file__).parents[1] / "data" / "plan_smollm2.json"
times = st.lists(st.floats(min_value=1e-4, max_value=10.0, allow_nan=False), min_size=1, max_size=40)


@given(times)
def test_the_fit_is_non_decreasing_and_keeps_the_mean_of_what_it_pools(values):
    fit = monotone(values)
    assert len(fit) == len(values)
    assert all(a <= b * (1 + 1e-12) for a, b in zip(fit, fit[1:], strict=False))
    assert sum(fit) == pytest.approx(sum(values))  # least squares under an order: each pool's mean


@given(times)
def test_a_curve_already_non_decreasing_is_kept_as_measured(values):
    ordered = sorted(values)
    assert monotone(ordered) == ordered
    assert residuals(ordered, monotone(ordered)) == [0.0] * len(ordered)


@given(times)
def test_the_fitted_points_keep_their_residuals_and_fit_to_themselves(values):
    points = [curve.Point(b, v, 0.01) for b, v in enumerate(values, start=1)]
    fitted = curve.fitted(points)
    assert [p.measured for p in fitted] == pytest.approx(values)  # the measurement is recoverable
    again = curve.fitted(fitted)
    assert [p.median for p in again] == pytest.approx([p.median for p in fitted])
    assert [p.residual for p in again] == pytest.approx([p.residual for p in fitted], abs=1e-9)


def test_a_jagged_curve_is_pooled_where_it_dips():
    """The trial's curve: t(4) measured below t(3) (1.69 against 1.95 of t(1)): both become their mean."""
    fit = monotone([1.0, 1.5, 1.95, 1.69, 2.4])
    assert fit == pytest.approx([1.0, 1.5, 1.82, 1.82, 2.4])
    assert residuals([1.95, 1.69], fit[2:4]) == pytest.approx([0.13 / 1.82, -0.13 / 1.82])


def test_an_older_cached_curve_reads_back_fitted():
    """Three numbers a point (measured medians): t(14) below t(13) at depth 64 in the recording."""
    doc = json.loads(RECORDED.read_text())
    c = curve.Curve.from_dict(doc["curve"])
    for pts in c.target.values():
        assert all(a.median <= b.median for a, b in zip(pts, pts[1:], strict=False))
    by_b = {p.b: p for p in c.target[64]}
    assert by_b[13].median == by_b[14].median and by_b[13].residual > 0 > by_b[14].residual
    again = curve.Curve.from_dict(json.loads(json.dumps(c.as_dict())))  # four numbers a point
    for d, pts in c.target.items():  # the fit and its residuals round-trip
        assert [p.median for p in again.target[d]] == pytest.approx([p.median for p in pts])
        assert [p.residual for p in again.target[d]] == pytest.approx([p.residual for p in pts], abs=1e-9)


def test_only_the_sizes_the_predictions_read_are_timed():
    assert decodes.batch_sizes(64, 8) == (*range(1, 10), 17, 33, 65)  # n-max 1..8, knots, ngram-mod's 64 + 1
    assert decodes.batch_sizes(8, 8) == tuple(range(1, 10))
    assert decodes.batch_sizes(20, 3) == (1, 2, 3, 4, 17, 21)


@pytest.mark.parametrize(
    "samples, most, enough",
    [
        ([0.010], 3, False),  # one repeat is never enough
        ([0.010, 0.0104], 3, True),  # two within 5%
        ([0.010, 0.013], 3, False),
        ([0.010, 0.013, 0.0101], 5, True),  # one hiccup excused once there are three
        ([0.010, 0.013, 0.016], 5, False),
        ([0.010, 0.013, 0.016], 3, True),  # as many as the size may have
        ([2.0, 2.6], 2, True),  # a knot's two, whatever they say
    ],
)
def test_a_size_is_timed_until_its_repeats_agree(samples, most, enough):
    assert decodes.settled(samples, most) is enough


def test_t1_is_timed_most_and_a_knot_least():
    assert decodes.most_repeats(1) == 5 and decodes.most_repeats(9) == 3 and decodes.most_repeats(65, knot=True) == 2


class _Clocked:
    """A context whose decodes advance a fake clock by b x 10 ms, 30-60% off by turns (a machine
    that never settles), and that records its fills and timed batches."""

    def __init__(self, tokens, devices):
        self.model = SimpleNamespace(devices=devices)  # the GPU devices its layers are on
        self.tokens, self.now, self.fills, self.timed = list(tokens), 0.0, [], []
        self.per_size: dict[int, int] = {}

    @property
    def n_past(self):
        return len(self.tokens)

    def common_prefix(self, tokens):
        same = (i for i, (a, b) in enumerate(zip(self.tokens, tokens, strict=False)) if a != b)
        return next(same, min(len(self.tokens), len(tokens)))

    def truncate(self, n):
        del self.tokens[n:]

    def decode(self, tokens):
        self.fills.append(len(tokens))
        self.tokens += tokens

    def decode_argmax(self, tokens, rows):
        self.timed.append((self.n_past, len(tokens)))
        k = self.per_size[len(tokens)] = self.per_size.get(len(tokens), -1) + 1
        self.now += 0.01 * len(tokens) * (1.0, 1.3, 0.7, 1.6, 0.4)[k % 5]


@pytest.mark.parametrize("devices", [(), ("Vulkan0",)])
def test_a_noisy_machine_times_t1_five_times_the_table_three_and_a_knot_two_from_the_context_there(
    monkeypatch, devices
):
    filler = list(range(1000, 1100))
    ctx = _Clocked(filler[:70] + [7, 7], devices)  # the calibration's last answer, and then some
    monkeypatch.setattr(decodes.time, "perf_counter", lambda: ctx.now)
    decodes.decode_times(ctx, (1, 2, 3, 17), filler, depths=(64, 96), knots=(17,))
    assert ctx.fills == [32]  # the first depth was there: only the second is filled
    warm = 1 if devices else 0  # a GPU's warm-up of the largest shape, untimed; the CPU needs none
    assert (ctx.timed[0] == (64, 17)) is bool(devices)
    for depth in (64, 96):
        counts = {b: sum(1 for d, n in ctx.timed[warm:] if d == depth and n == b) for b in (1, 2, 3, 17)}
        assert counts[17] == 2 and counts[3] == 3
    assert sum(1 for d, n in ctx.timed if d == 96 and n == 1) == 5  # t(1); at 64 its re-check adds to it
    assert ctx.n_past == 0


def test_one_outlier_among_the_repeats_no_longer_blows_up_the_noise_and_a_busy_machine_is_said():
    # t(1) on a quiet run: two repeats agree, one is 11x their median (another process's burst)
    quiet = [0.0100, 0.0102, 0.1165]
    assert noise.spread(quiet) > 10  # the old figure, (max - min) / median: over 1000%
    p = curve.Point.of(1, quiet)
    assert p.spread == pytest.approx(0.0002 / 0.0101) and p.median == 0.0102  # the two that agree
    assert p.hiccup == pytest.approx((0.1165 - 0.0102) / 0.0102)  # kept beside it, not lost
    assert curve.Point.of(1, [0.010, 0.011]).spread == pytest.approx(0.001 / 0.0105)  # two: nothing to excuse
    # the prediction resting on it is judged by the steady figure
    others = (curve.Point.of(b, [0.005 * b, 0.00501 * b, 0.005 * b]) for b in range(2, 6))
    steady = curve.Curve({64: (p, *others)}, {}, 0.0, 0.0)
    assert timing_spread(steady, Drafting(1.0, 3.0, 2.0, False)) < 0.05
    assert steady.unsteady() is None  # one size's hiccup is not the machine
    # a hiccup in most sizes is: the plan says the machine was busy, though each spread is steady
    busy = curve.Curve({64: tuple(curve.Point.of(b, [0.01 * b, 0.0101 * b, 0.03 * b]) for b in (1, 2, 3))}, {}, 0, 0)
    assert busy.noise < 0.02
    said = busy.unsteady()
    assert said is not None and "the machine was busy: 3 of 3 sizes had a repeat up to 197% off the others" in said
    # the hiccup survives the cache file; an older file's point (no hiccup) reads as none
    assert curve.Curve.from_dict(busy.as_dict()) == busy
    old = busy.as_dict()
    old["target"]["64"] = [pt[:4] for pt in old["target"]["64"]]
    assert curve.Curve.from_dict(old).unsteady() is None


def test_the_time_left_falls_as_passes_are_timed():
    left = decodes.Left(decodes.batch_sizes(64), draft=True)
    before = left.units()
    left.passed(0, 50.0, 2.0, [9, 17])
    assert 0 < left.units() < before and left.seconds() == pytest.approx(left.units() * 2.0 / 50.0)
    assert decodes.prior_seconds(0.04, decodes.batch_sizes(64), True) == pytest.approx(0.04 * before)


def test_in_a_log_each_phase_is_one_whole_line_with_the_time_elapsed_and_left():
    out = io.StringIO()
    phases = Phases(Console(file=out, width=40, force_terminal=False))
    with phases.live():
        phases.step("calibrating: starter prompt 1/3")
        phases.done("calibration", "calibration: starter prompt 1/3 with draft-simple n-max 8", 45.0)
        phases.done("curve", None)  # counted, not told
        phases.done("curve", "target depth 64, pass 1 (12 sizes)", 200.0)
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and len(lines) == 2  # whole lines, wider than the console, no bar
    assert lines[0].startswith("calibration: starter prompt 1/3 with draft-simple n-max 8: ")
    assert "elapsed 0 s, about 45 s left" in lines[0] and "about 3.3 min left" in lines[1]
    assert set(phases.as_dict()) == {"calibration", "curve", "total"}
