"""The inspector's verdict helpers (engine/verdicts.py), without a model: what counts as a
near-tie and a confident draft error, and the summary a bench, a run and the chat share."""

from __future__ import annotations

from spectui.engine.events import Round
from spectui.engine.verdicts import Verdict, confident_error, near_tie, summarize


def _rejected(p: float, q: float | None, top: tuple[tuple[int, float], ...]) -> Verdict:
    return Verdict(1, 7, p=p, q=q, acceptance=None, draw=None, accepted=False, top=top, emitted=top[0][0])


def _round(index: int, *verdicts: Verdict) -> Round:
    return Round(
        index=index, t=0.0, spec_type="draft-simple", drafted=tuple(v.token for v in verdicts), n_accepted=0,
        rejected=(), rejected_text="", tokens=(), t_draft=0.0, t_verify=0.0, t_other=0.0, n_max=8,
        verify="greedy", n_past=0, verdicts=verdicts,
    )  # fmt: skip


ACCEPTED = Verdict(position=0, token=3, p=0.9, q=0.95, acceptance=None, draw=None, accepted=True)


def test_a_near_tie_is_a_rejection_the_target_won_by_less_than_a_tenth():
    assert near_tie(_rejected(0.41, None, ((5, 0.44), (7, 0.41), (9, 0.05))))
    assert not near_tie(_rejected(0.30, None, ((5, 0.40), (7, 0.30))))  # 0.10 apart: not under a tenth
    assert not near_tie(_rejected(0.0, None, ((5, 1.0),)))  # the target kept one candidate
    assert not near_tie(ACCEPTED)


def test_a_confident_error_is_a_sure_draft_the_target_gave_almost_nothing():
    assert confident_error(_rejected(0.02, 0.93, ((5, 0.9), (7, 0.02))))
    assert not confident_error(_rejected(0.02, 0.8, ((5, 0.9), (7, 0.02))))  # q must exceed 0.8
    assert not confident_error(_rejected(0.1, 0.93, ((5, 0.9), (7, 0.1))))  # p must be under 0.1
    assert not confident_error(_rejected(0.02, None, ((5, 0.9), (7, 0.02))))  # an n-gram has no q
    assert not confident_error(Verdict(0, 3, p=0.01, q=0.99, acceptance=0.01, draw=0.5, accepted=True))


def test_summarize_counts_rejections_ties_and_errors_with_the_median_rejected_p():
    rounds = [
        _round(0, ACCEPTED, _rejected(0.41, 0.5, ((5, 0.44), (7, 0.41)))),
        _round(1, _rejected(0.02, 0.93, ((5, 0.9), (7, 0.02)))),
        _round(2, ACCEPTED),
        _round(3, _rejected(0.2, None, ((5, 0.6), (7, 0.2)))),
    ]
    assert summarize(rounds) == (3, 1, 1, 0.2)


def test_summarize_without_verdicts_has_no_median():
    assert summarize([_round(0)]) == (0, 0, 0, None)
