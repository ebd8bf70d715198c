"""Reading recorded rounds as a plan's Drafting (spectui/plan/observed.py): no model."""

from __future__ import annotations

import pytest

from spectui.engine.events import Round
from spectui.plan.observed import drafting_of


def rnd(drafted: int, accepted: int) -> Round:
    return Round(0, 0.0, "x" if drafted else None, tuple(range(drafted)), accepted, (), "", (), 0, 0, 0, 4, "greedy", 0)


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
