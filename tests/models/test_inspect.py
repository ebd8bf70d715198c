"""Inspect mode on real models: each round's Verdicts hold exactly the numbers the verifier
used, checked against the verify batch's full rows (keep_logits), at greedy and at
temperature 0.8 (rejection sampling: accepted exactly when draw < acceptance; sample-and-match:
no draw, the sampled token's p), for draft-simple (SmolLM2 drafting for itself), an n-gram
type and an EAGLE-3 head (the synthetic checkpoints); with inspect off, rounds carry none and
run the same."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spectui.engine.events import Round
from spectui.engine.interface import GenerationLimits
from spectui.engine.session import Session
from spectui.llama.context_params import ContextParams
from spectui.llama.model import Model
from spectui.llama.sampling import SamplingParams, dist
from spectui.spec_config import SpecConfig
from tests.helpers.prompts import REWRITE

pytestmark = pytest.mark.model

GREEDY = SamplingParams(temp=0.0)
WARM = SamplingParams(temp=0.8, seed=11)
HIDDEN_PROMPT = "the quick brown fox jumps over the lazy dog. the quick brown fox"


def _softmax(row: np.ndarray) -> np.ndarray:
    z = row.astype(np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


def _inspected(
    s: Session, spec: SpecConfig, n: int = 40, keep: bool = True, **prompt
) -> list[tuple[Round, np.ndarray]]:
    """Each round with its verify batch's rows (copied by keep_logits)."""
    s.reset()
    s.configure(spec)
    s.inspect, s.keep_logits = True, keep
    out = []
    limits = GenerationLimits(n_predict=n, ignore_eos="tokens" in prompt)
    for e in s.generate(limits=limits, **(prompt or {"messages": REWRITE})):
        if isinstance(e, Round):
            out.append((e, s.last_logits.copy() if keep and e.drafted else np.empty(0)))
    s.inspect = s.keep_logits = False
    return out


def _check(rounds: list[tuple[Round, np.ndarray]], sampling: SamplingParams, verify: str, model_q: bool) -> int:
    """Every verdict against the rows; returns how many rejections were checked."""
    n_rejected = 0
    for r, rows in rounds:
        judged = min(r.n_accepted + 1, r.n_drafted)
        assert [v.position for v in r.verdicts] == list(range(judged))
        for i, v in enumerate(r.verdicts):
            x = r.drafted[i]
            assert v.token == x and v.accepted == (i < r.n_accepted)
            assert (v.q is not None) == model_q and (v.q is None or 0 < v.q <= 1)
            if sampling.greedy:
                p = _softmax(rows[i])
                assert math.isclose(v.p, p[x], rel_tol=1e-6, abs_tol=1e-12)
                assert v.accepted == (x == int(np.argmax(rows[i])))
                assert v.draw is None and v.acceptance is None
                ranked = np.argsort(-p, kind="stable")
            else:
                d = dist(rows[i], sampling)
                assert v.p == d[x]
                if verify == "rejection":  # one-hot drafts here: the verifier's q is 1
                    assert 0 <= v.draw < 1 and v.acceptance == min(1.0, v.p)
                    assert v.accepted == (v.draw < v.acceptance)
                else:  # sample-and-match: the target's own sample decided, no draw against anything
                    assert v.draw is None and v.acceptance is None
                p = d.dense()
                ranked = np.argsort(-p, kind="stable")
            if v.accepted:
                assert v.top == () and v.emitted is None
            else:
                n_rejected += 1
                top = [int(t) for t in ranked[:3] if p[t] > 0]
                assert [t for t, _ in v.top] == top
                assert all(math.isclose(pt, p[t], rel_tol=1e-6) for t, pt in v.top)
                assert v.emitted_p is not None and math.isclose(v.emitted_p, p[v.emitted], rel_tol=1e-6)
                if sampling.greedy:
                    assert v.emitted == top[0]
                if r.tokens and len(r.tokens) == r.n_accepted + 1:  # not cut by the answer's end
                    assert v.emitted == r.tokens[-1].id
    return n_rejected


@pytest.fixture(scope="module")
def smol_pair(smol):
    s = Session(smol, smol, ContextParams(n_ctx=2048), sampling=GREEDY)
    yield s
    s.close()


CASES = [
    ("draft-simple", GREEDY, "match"),
    ("draft-simple", WARM, "match"),
    ("draft-simple", WARM, "rejection"),
    ("ngram-simple", GREEDY, "match"),
    ("ngram-simple", WARM, "rejection"),
]


@pytest.mark.parametrize("spec_type,sampling,verify", CASES)
def test_verdicts_are_the_verifiers_numbers(smol_pair, spec_type, sampling, verify):
    s = smol_pair
    s.sampling = sampling
    s._drafting.built.pop("draft-simple", None)  # its sampler follows the session's
    spec = SpecConfig(types=(spec_type,), draft_n_max=4, ngram_simple_size_n=2, ngram_simple_size_m=8, verify=verify)
    rounds = _inspected(s, spec)
    assert sum(r.n_drafted for r, _ in rounds) > 0
    n_rejected = _check(rounds, sampling, verify, model_q=spec_type == "draft-simple")
    # (SmolLM2 drafting for itself at greedy agrees with itself: the n-gram case rejects)
    assert n_rejected > 0 or (spec_type, sampling) == ("draft-simple", GREEDY)
    # the same run without copying the rows (the rows read in place): the same verdicts
    assert [r.verdicts for r, _ in _inspected(s, spec, keep=False)] == [r.verdicts for r, _ in rounds]


def test_inspect_off_records_nothing_and_changes_no_token(smol_pair):
    s = smol_pair
    s.sampling = GREEDY
    spec = SpecConfig(types=("draft-simple",), draft_n_max=4)
    on = _inspected(s, spec, keep=False)
    s.reset()
    off = [e for e in s.generate(messages=REWRITE, limits=GenerationLimits(n_predict=40)) if isinstance(e, Round)]
    assert all(r.verdicts == () for r in off)
    assert [(r.drafted, r.n_accepted, r.tokens) for r in off] == [(r.drafted, r.n_accepted, r.tokens) for r, _ in on]


def test_a_probabilistic_draft_gives_the_q_it_was_drawn_from(smol_pair):
    """Rejection sampling with the draft's own distribution: the verdict's q is the verifier's."""
    s = smol_pair
    s.sampling = WARM
    s._drafting.built.pop("draft-simple", None)
    spec = SpecConfig(types=("draft-simple",), draft_n_max=4, verify="rejection", draft_sampling="probabilistic")
    n = 0
    for r, rows in _inspected(s, spec):
        for v in r.verdicts:
            assert v.p == dist(rows[v.position], WARM)[v.token] and v.q is not None
            assert v.acceptance == (min(1.0, v.p / v.q) if v.q > 0 else float(v.p > 0))
            assert v.accepted == (v.draw < v.acceptance)
            n += 1
    assert n > 0


@pytest.mark.parametrize("sampling", [GREEDY, WARM], ids=["greedy", "temp-0.8"])
def test_an_eagle3_head_gives_verdicts_with_its_q(synthetic, sampling):
    s = Session(
        Model(synthetic("target")),
        Model(synthetic("eagle3")),
        ContextParams(n_ctx=512),
        spec=SpecConfig(types=("draft-eagle3",), draft_n_max=3),
        sampling=sampling,
        owns_models=True,
    )
    try:
        spec = SpecConfig(types=("draft-eagle3",), draft_n_max=3, verify="rejection")
        rounds = _inspected(s, spec, n=24, tokens=s.target.tokenize(HIDDEN_PROMPT))
    finally:
        s.close()
    assert sum(len(r.verdicts) for r, _ in rounds) > 0
    _check(rounds, sampling, "rejection", model_q=True)


def test_a_draft_model_s_greedy_rejections_give_the_target_s_top_3(synthetic):
    """Two different synthetic models, greedy: the target often disagrees with the draft."""
    s = Session(
        Model(synthetic("target-mtp")),
        Model(synthetic("target")),
        ContextParams(n_ctx=512),
        spec=SpecConfig(types=("draft-simple",), draft_n_max=3),
        sampling=GREEDY,
        owns_models=True,
    )
    try:
        rounds = _inspected(
            s, SpecConfig(types=("draft-simple",), draft_n_max=3), n=24, tokens=s.target.tokenize(HIDDEN_PROMPT)
        )
    finally:
        s.close()
    assert _check(rounds, GREEDY, "match", model_q=True) > 0


def test_auto_s_rounds_carry_verdicts_with_q_only_from_the_draft_model(smol_pair):
    s = smol_pair
    s.sampling = WARM
    s._drafting.built.pop("draft-simple", None)
    rounds = [r for r, _ in _inspected(s, SpecConfig(types=("auto",), draft_n_max=3), n=48, keep=False)]
    judged = [r for r in rounds if r.verdicts]
    assert judged and all(len(r.verdicts) == min(r.n_accepted + 1, r.n_drafted) for r in rounds)
    assert all((v.q is None) == r.spec_type.startswith("ngram") for r in judged for v in r.verdicts)
