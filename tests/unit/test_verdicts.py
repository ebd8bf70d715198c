"""The inspector's verdict helpers (engine/verdicts.py), without a model: what counts as a
near-tie and a confident draft error, the summary a bench, a run and the chat share, and
lines that never contradict their verdict: under rejection sampling the draw shown against
the acceptance decides, over a recorded SmolLM2 trace's every round too; sample-and-match
shows no comparison at all."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from spectui.engine.events import Round
from spectui.engine.verdicts import Verdict, confident_error, facts, near_tie, summarize
from spectui.llama.sampling import acceptance, verify_rejection
from spectui.trace import format as trace_format
from tests.helpers.events import INSPECTED, a_round


def judged_round(index: int, *verdicts: Verdict) -> Round:
    return a_round(tuple(v.token for v in verdicts), 0, index=index, n_max=8, verdicts=verdicts)


def _rejected(p: float, q: float | None, top: tuple[tuple[int, float], ...]) -> Verdict:
    return Verdict(1, 7, p=p, q=q, acceptance=None, draw=None, accepted=False, top=top, emitted=top[0][0])


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
        judged_round(0, ACCEPTED, _rejected(0.41, 0.5, ((5, 0.44), (7, 0.41)))),
        judged_round(1, _rejected(0.02, 0.93, ((5, 0.9), (7, 0.02)))),
        judged_round(2, ACCEPTED),
        judged_round(3, _rejected(0.2, None, ((5, 0.6), (7, 0.2)))),
    ]
    assert summarize(rounds) == (3, 1, 1, 0.2)


def test_summarize_without_verdicts_has_no_median():
    assert summarize([judged_round(0)]) == (0, 0, 0, None)


unit = st.floats(0, 1)


def _shown_comparison(v: Verdict, verify: str = "rejection") -> tuple[float, str, float]:
    [line] = [ln for ln in facts(v, verify) if ln.startswith("draw ")]
    m = re.fullmatch(r"draw ([0-9.e-]+) ([<≥]) acceptance ([0-9.e-]+)", line)
    assert m, line
    return float(m[1]), m[2], float(m[3])


@given(draw=st.floats(0, 1, exclude_max=True), accept=unit, p=unit, q=st.none() | unit)
def test_the_draw_and_acceptance_shown_compare_as_the_verdict_went(draw, accept, p, q):
    """Rounded to the shown decimals, the two numbers still compare as the verifier's did."""
    v = Verdict(0, 3, p, q, accept, draw, accepted=draw < accept)
    shown_draw, sign, shown_accept = _shown_comparison(v)
    assert (sign == "<") == v.accepted == (shown_draw < shown_accept)
    assert facts(v, "rejection")[0].startswith("accepted: " if v.accepted else "rejected: ")


@given(draw=st.none() | unit, accept=st.none() | unit, accepted=st.booleans())
def test_sample_and_match_and_greedy_show_no_draw_against_an_acceptance(draw, accept, accepted):
    """Whatever an older trace recorded there: these rules compare no draw with anything."""
    top, emitted = ((), None) if accepted else (((5, 0.6), (3, 0.5)), 5)
    v = Verdict(0, 3, 0.5, 0.4, accept, draw, accepted, top, emitted)
    for verify in ("match", "greedy"):
        assert not any("draw" in ln or "acceptance" in ln for ln in facts(v, verify))


@given(
    rows=st.lists(st.lists(st.floats(0.01, 1), min_size=4, max_size=4), min_size=2, max_size=5),
    qs=st.lists(st.lists(st.floats(0, 1), min_size=4, max_size=4), min_size=4, max_size=4),
    tokens=st.lists(st.integers(0, 3), min_size=4, max_size=4),
    seed=st.integers(0, 2**32 - 1),
)
def test_rejection_sampling_accepts_exactly_when_its_draw_is_below_the_acceptance(rows, qs, tokens, seed):
    """The verifier decides by the very comparison a verdict records and shows."""
    p_rows = [np.array(r) / sum(r) for r in rows]
    q_rows = [np.array(q) / sum(q) if sum(q) > 0 else np.full(4, 0.25) for q in qs]
    draft = tokens[: len(p_rows) - 1]
    draws: list[float] = []
    n_accepted, _, _ = verify_rejection(p_rows, q_rows, draft, np.random.default_rng(seed), draws)
    assert len(draws) == min(n_accepted + 1, len(draft))
    for i, (u, x) in enumerate(zip(draws, draft)):
        assert (u < acceptance(float(p_rows[i][x]), float(q_rows[i][x]))) == (i < n_accepted)


def test_every_recorded_rejection_sampling_verdict_is_decided_by_its_draw():
    """Over every round of a recorded run: draw < acceptance exactly when accepted, as shown."""
    trace = trace_format.read(INSPECTED)
    rounds = [e for t in trace.turns for e in t.events if isinstance(e, Round) and e.verdicts]
    by_rule = {verify: [r for r in rounds if r.verify == verify] for verify in ("rejection", "match")}
    judged = [v for r in by_rule["rejection"] for v in r.verdicts]
    assert sum(not v.accepted for v in judged) >= 3 and sum(v.accepted for v in judged) >= 3
    for v in judged:
        assert v.acceptance is not None and v.draw is not None
        assert (v.draw < v.acceptance) == v.accepted
        shown_draw, sign, shown_accept = _shown_comparison(v)
        assert (sign == "<") == v.accepted == (shown_draw < shown_accept)
    matched = [v for r in by_rule["match"] for v in r.verdicts]
    assert any(not v.accepted for v in matched)
    for v in matched:  # the target's own sample decided: its token and p, no draw
        assert v.acceptance is None and v.draw is None
        lines = facts(v, "match")
        assert not any("draw" in ln or "acceptance" in ln for ln in lines)
        if not v.accepted:
            assert v.emitted_p is not None and f"(p {v.emitted_p:.3f}) and emitted it instead" in lines[-1]
