"""Reading recorded rounds as a plan's Drafting (spectui/plan/observed.py): no model."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import pytest

from spectui.plan.observed import drafting_of
from tests.helpers.events import a_round

rnd = partial(a_round, n_max=4)  # a draft-simple round at n-max 4


def test_an_ngram_run_is_its_share_of_drafting_rounds_their_length_and_accepted_tokens():
    d = drafting_of([rnd(0, 0), rnd(4, 1), rnd(0, 0), rnd(2, 2)], model=False)
    assert (d.share, d.length, d.accepted, d.whole, d.model) == (0.5, 3.0, 1.5, 0.5, False)
    assert d.alpha == pytest.approx(0.5)


def test_a_smaller_n_max_reads_each_draft_capped_at_it():
    rounds = [rnd(8, 8), rnd(8, 2), rnd(8, 0)]
    d = drafting_of(rounds, model=True, n_max=3)
    assert (d.length, d.accepted) == (3.0, pytest.approx(5 / 3))
    assert d.whole == pytest.approx(1 / 3)  # only the first is accepted whole at 3
    assert drafting_of(rounds, model=True, n_max=1).whole == pytest.approx(2 / 3)


def test_rounds_without_a_draft_read_as_no_drafting():
    d = drafting_of([rnd(0, 0)], model=True)
    assert (d.share, d.length, d.alpha) == (0.0, 0.0, None)


def test_the_calibration_keeps_the_loops_single_step_and_reads_a_cache_without_it():
    from spectui.plan.acceptance import Calibration, _loop_step

    rounds = [replace(rnd(0, 0), t_llama=t, n_past=100 + i) for i, t in enumerate([0.03] * 9 + [0.5])]
    assert _loop_step(rounds) == (0.03, 104) and _loop_step(rounds[:5]) is None
    cal = Calibration((0.5,), (((1, 2), (3,)),), 0.001, 0.002, 10, 8.0, (0.03, 104))
    assert Calibration.from_dict(cal.as_dict()) == cal
    old = cal.as_dict()
    del old["loop_step"]
    assert Calibration.from_dict(old).loop_step is None
