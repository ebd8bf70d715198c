"""Tests for spectui.sampling: the filter chain against hand-computed values, and the exactness of
both verifiers checked statistically (chi-square against the target distribution)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from spectui.llama import sampling
from spectui.llama.sampling import (
    SamplingParams,
    _top_k,
    dist,
    dist_of_candidates,
    draft_dist,
    make_rng,
    probs,
    sample,
    verify_match,
    verify_rejection,
)

N_DRAWS = 20_000
ALPHA = 1e-4

OFF = dict(top_k=0, top_p=1.0, min_p=0.0, temp=1.0)
"""All filters off at temperature 1: probs() is then a plain softmax."""


def params(**kw) -> SamplingParams:
    return SamplingParams(**{**OFF, **kw})


# ---------------------------------------------------------------------------------------------
# chi-square helpers


def chi2_critical(df: int, alpha: float = ALPHA) -> float:
    """Upper alpha quantile of chi-square(df) by Wilson-Hilferty (scipy is not a dependency)."""
    z = NormalDist().inv_cdf(1 - alpha)
    h = 2 / (9 * df)
    return df * (1 - h + z * math.sqrt(h)) ** 3


def chi2_stat(tokens: np.ndarray, p: np.ndarray) -> tuple[float, int]:
    """Pearson statistic of observed tokens against p, and its degrees of freedom. A token with
    p = 0 makes the statistic infinite: that is never allowed."""
    counts = np.bincount(tokens, minlength=p.size)
    support = p > 0
    if counts[~support].any():
        return math.inf, int(support.sum()) - 1
    expected = tokens.size * p[support]
    return float(((counts[support] - expected) ** 2 / expected).sum()), int(support.sum()) - 1


def assert_distributed_as(tokens, p) -> None:
    stat, df = chi2_stat(np.asarray(tokens), p)
    assert stat < chi2_critical(df), f"chi2 {stat:.1f} >= {chi2_critical(df):.1f} (df {df})"


def test_chi2_critical_is_close_to_tabulated_values():
    """The approximation must be near the true quantile (scipy values), and not below it by much,
    or the exactness tests would be flaky or toothless."""
    for df, exact in [(3, 21.1075), (5, 25.7448), (7, 29.8775), (9, 33.7199), (30, 67.6326)]:
        assert exact * 0.999 < chi2_critical(df) < exact * 1.05


# ---------------------------------------------------------------------------------------------
# probs(): the filter chain


def test_softmax_with_everything_off():
    got = probs(np.log([0.5, 0.3, 0.2]), params())
    np.testing.assert_allclose(got, [0.5, 0.3, 0.2])
    assert got.dtype == np.float64


def test_top_k_keeps_k_largest_and_renormalises():
    got = probs(np.array([1.0, 2.0, 3.0, 4.0, 0.0]), params(top_k=2))
    # e^4 / (e^3 + e^4) = 1 / (1 + e^-1)
    np.testing.assert_allclose(got, [0, 0, 0.2689414214, 0.7310585786, 0])


def test_top_k_larger_than_vocab_keeps_all():
    np.testing.assert_allclose(probs(np.log([0.5, 0.3, 0.2]), params(top_k=10)), [0.5, 0.3, 0.2])


@pytest.mark.parametrize(
    "top_p, expected",
    [
        (0.4, [1, 0, 0, 0]),  # the first token alone reaches 0.4
        (0.6, [0.625, 0.375, 0, 0]),  # 0.5 < 0.6 <= 0.8: the crossing token is kept
        (0.85, [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0]),
    ],
)
def test_top_p_keeps_smallest_prefix_reaching_p(top_p, expected):
    np.testing.assert_allclose(probs(np.log([0.5, 0.3, 0.15, 0.05]), params(top_p=top_p)), expected)


def test_top_p_is_measured_after_top_k():
    """After top-k 2 the masses are 4/7, 3/7, so top-p 0.55 keeps one token (over the full vocab
    it would need two: 0.4 < 0.55)."""
    got = probs(np.log([0.4, 0.3, 0.2, 0.1]), params(top_k=2, top_p=0.55))
    np.testing.assert_allclose(got, [1, 0, 0, 0])


def test_min_p_drops_tokens_below_fraction_of_max():
    # threshold 0.2 * 0.5 = 0.1 drops only the 0.05 token
    got = probs(np.log([0.5, 0.3, 0.15, 0.05]), params(min_p=0.2))
    np.testing.assert_allclose(got, [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0])


def test_top_p_runs_before_min_p():
    """llama.cpp order: top-p 0.82 on the full masses keeps 3 tokens (0.8 < 0.82), min-p 0.2 keeps
    them. The other order (min-p first, top-p on the renormalised 3) would keep only 2."""
    got = probs(np.log([0.5, 0.3, 0.15, 0.05]), params(top_p=0.82, min_p=0.2))
    np.testing.assert_allclose(got, [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0])


def test_temperature_scales_logits():
    # softmax([0, 1] / 0.5) = [1, e^2] / (1 + e^2)
    np.testing.assert_allclose(probs(np.array([0.0, 1.0]), params(temp=0.5)), [0.1192029220, 0.8807970780])


def test_filters_act_on_unscaled_logits():
    """top-p 0.6 on the unscaled masses [0.5, 0.3, 0.2] keeps 2 tokens; temperature 0.5 is applied
    after, giving [0.25, 0.09] / 0.34. Scaling first would give 0.66 for the top token and keep 1."""
    got = probs(np.log([0.5, 0.3, 0.2]), params(top_p=0.6, temp=0.5))
    np.testing.assert_allclose(got, [0.25 / 0.34, 0.09 / 0.34, 0])


@pytest.mark.parametrize("temp", [0.0, -1.0])
def test_greedy_is_one_hot_at_argmax(temp):
    p = SamplingParams(temp=temp)
    assert p.greedy
    np.testing.assert_array_equal(probs(np.array([0.1, 3.0, 2.9, -5.0]), p), [0, 1, 0, 0])


def test_masked_logits_get_zero_probability():
    got = probs(np.array([0.0, -np.inf, 0.0]), params())
    np.testing.assert_allclose(got, [0.5, 0, 0.5])


def chain_reference(z: np.ndarray, sp: SamplingParams) -> np.ndarray:
    """The chain written literally, one filter after the other on a fully sorted vocab."""
    order = np.argsort(-z, kind="stable")
    if sp.top_k > 0:
        order = order[: sp.top_k]
    if sp.top_p < 1:
        m = np.exp(z[order] - z[order[0]])
        reached = np.cumsum(m / m.sum()) >= sp.top_p
        order = order[: int(np.argmax(reached)) + 1] if reached.any() else order
    if sp.min_p > 0:
        order = order[z[order] >= z[order[0]] + math.log(sp.min_p)]
    out = np.zeros(z.size)
    e = np.exp((z[order] - z[order[0]]) / sp.temp)
    out[order] = e / e.sum()
    return out


@pytest.mark.parametrize(
    "sp",
    [
        SamplingParams(),
        SamplingParams(top_k=0),
        SamplingParams(top_k=0, min_p=0.0),
        SamplingParams(top_k=0, top_p=1.0, min_p=0.3, temp=1.3),
        SamplingParams(top_k=500, top_p=0.5, min_p=0.01, temp=0.5),
    ],
)
def test_matches_literal_chain_on_a_large_vocab(sp):
    """The min-p-before-sorting shortcut must give the same result as the literal chain."""
    z = np.random.default_rng(1).normal(scale=3.0, size=151_936).astype(np.float32)
    got = probs(z, sp)
    np.testing.assert_allclose(got, chain_reference(z.astype(np.float64), sp), atol=1e-12)
    assert got.sum() == pytest.approx(1.0)
    if sp.top_k > 0:
        assert np.count_nonzero(got) <= sp.top_k


@pytest.mark.parametrize(
    "sp", [SamplingParams(top_p=1.0, min_p=0.0), SamplingParams(), SamplingParams(top_k=500, top_p=1.0, min_p=0.0)]
)
def test_top_k_ties_keep_the_lower_ids(sp):
    """Integer logits tie across the k-th place: the chain keeps the lower ids, as the
    literal chain's stable sort does."""
    z = np.random.default_rng(7).integers(-30, 12, size=151_936).astype(np.float32)
    got = probs(z, sp)
    assert np.count_nonzero(z >= np.sort(z)[-sp.top_k]) > sp.top_k  # a tie at the k-th place
    np.testing.assert_allclose(got, chain_reference(z.astype(np.float64), sp), atol=1e-12)


@pytest.mark.parametrize(
    "sp",
    [
        SamplingParams(),
        SamplingParams(top_p=1.0),
        SamplingParams(min_p=0.0, top_p=0.5, temp=1.5),
        SamplingParams(top_p=0.99, min_p=0.2, temp=0.3),
        SamplingParams(top_p=1.0, min_p=0.0, temp=1.0),
    ],
)
def test_few_candidates_on_python_floats_agree_with_numpy(sp, monkeypatch):
    """A top-k's few candidates take the chain on Python floats; the numpy path is the
    reference: the same ids, the same probabilities to rounding. Integer logits make ties,
    whose order top-p must keep (ids ascending), and equal ones put top-p's sums exactly on
    top_p (the token that reaches it is kept); -inf is a banned token."""
    rng = np.random.default_rng(3)
    for trial in range(300):
        k = int(rng.integers(1, sampling.FEW + 1))
        cand = np.sort(rng.choice(151_936, size=k, replace=False)).astype(np.int64)
        if trial % 7 == 0:
            logits = np.zeros(k, dtype=np.float32)
        elif trial % 3 == 0:
            logits = rng.integers(-4, 4, size=k).astype(np.float32)
        else:
            logits = rng.normal(scale=3.0, size=k).astype(np.float32)
        if trial % 5 == 0 and k > 1:
            logits[rng.integers(k)] = -np.inf
        few = dist_of_candidates(cand, logits, sp, 151_936)
        with monkeypatch.context() as m:
            m.setattr(sampling, "FEW", 0)
            ref = dist_of_candidates(cand, logits, sp, 151_936)
        np.testing.assert_array_equal(few.ids, ref.ids)
        np.testing.assert_allclose(few.p, ref.p, rtol=1e-12, atol=0)


@pytest.mark.parametrize("size", [5, 63, 64, 65, 1_000, 49_155, 151_936])
@pytest.mark.parametrize("k", [1, 10, 40, 64, 200])
def test_top_k_finds_the_k_largest_whatever_the_vocabulary_size(size, k):
    """Only the blocks whose maximum reaches the threshold are searched; the last block is
    short unless the size is a multiple of BLOCK."""
    z = np.random.default_rng(size + k).permutation(size).astype(np.float32)  # distinct values
    expected = np.arange(size) if k >= size else np.sort(np.argsort(z)[-k:])
    np.testing.assert_array_equal(_top_k(z, k), expected)


def test_probs_rejects_a_batch():
    with pytest.raises(ValueError):
        probs(np.zeros((2, 3)), SamplingParams())


# ---------------------------------------------------------------------------------------------
# draft_dist()


def test_draft_dist_is_llama_cpp_top10_softmax_at_temperature_1():
    """Whatever the target's settings: it is the draft sampler of llama.cpp's draft-simple."""
    z = np.arange(20, dtype=np.float64)
    got = draft_dist(z)
    e = np.exp(z[10:] - 19)
    np.testing.assert_allclose(got, np.r_[np.zeros(10), e / e.sum()])
    assert int(np.argmax(got)) == 19


# ---------------------------------------------------------------------------------------------
# sample()


class FixedUniform:
    """An rng stand-in whose random() returns a chosen value, to hit the edges of [0, 1)."""

    def __init__(self, u: float):
        self.u = u

    def random(self) -> float:
        return self.u


def test_sample_skips_zero_weights_at_both_ends():
    p = np.array([0.0, 0.3, 0.0, 0.7, 0.0])
    assert sample(p, FixedUniform(0.0)) == 1
    assert sample(p, FixedUniform(np.nextafter(1.0, 0.0))) == 3
    assert sample(p, FixedUniform(0.3)) == 3


def test_sample_matches_p():
    p = np.array([0.05, 0.0, 0.4, 0.25, 0.3])
    rng = np.random.default_rng(7)
    assert_distributed_as([sample(p, rng) for _ in range(N_DRAWS)], p)


def test_sample_rejects_empty_weights():
    with pytest.raises(ValueError):
        sample(np.zeros(4), np.random.default_rng(0))


# ---------------------------------------------------------------------------------------------
# verifiers: exactness


P = np.array([0.30, 0.22, 0.16, 0.12, 0.08, 0.06, 0.04, 0.02])
_NUDGE = np.array([1.1, 0.9, 1.05, 0.95, 1.2, 0.8, 1.0, 1.0])
Q_CASES = {
    "close": P * _NUDGE / (P * _NUDGE).sum(),  # total variation ~0.05
    "far": P[::-1].copy(),
    "partly_outside_p": np.array([0.05, 0.05, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.4, 0.4]),
}
P_SHORT = np.r_[P, 0.0, 0.0]  # same p over a vocab of 10 where tokens 8, 9 have p = 0
DISJOINT_P = np.array([0.4, 0.3, 0.2, 0.1, 0, 0, 0, 0])
DISJOINT_Q = np.array([0, 0, 0, 0, 0.25, 0.25, 0.25, 0.25])


def first_emitted(verify, p, q, n_draws=N_DRAWS, seed=1) -> np.ndarray:
    """The first token each round emits (the accepted draft token or its replacement), with the
    draft token drawn from q as an engine would. The bonus row is a point mass, irrelevant here."""
    rng = np.random.default_rng(seed)
    bonus = np.eye(p.size)[0]
    out = np.empty(n_draws, dtype=np.int64)
    for j in range(n_draws):
        x = sample(q, rng)
        n_acc, nxt = verify([p, bonus], [q], [x], rng)[:2]
        out[j] = x if n_acc >= 1 else nxt
    return out


def rejection(p_rows, q_rows, draft, rng):
    return verify_rejection(p_rows, q_rows, draft, rng)


def match(p_rows, q_rows, draft, rng):
    return verify_match(p_rows, draft, rng)


@pytest.mark.parametrize("verify", [rejection, match])
@pytest.mark.parametrize("case", ["close", "far", "partly_outside_p", "disjoint"])
def test_first_token_is_distributed_as_p(verify, case):
    if case == "disjoint":
        p, q = DISJOINT_P, DISJOINT_Q
    else:
        p, q = (P_SHORT if case == "partly_outside_p" else P), Q_CASES[case]
    assert_distributed_as(first_emitted(verify, p, q), p)


@pytest.mark.parametrize("verify", [rejection, match])
@pytest.mark.parametrize("token", [0, 5, 7])
def test_one_hot_draft_first_token_is_distributed_as_p(verify, token):
    """n-gram drafters: a fixed draft token, q_rows None. Token 7 has p = 0 and must never pass."""
    p = np.r_[P[:7] / P[:7].sum(), 0.0]
    rng = np.random.default_rng(3)
    bonus = np.eye(p.size)[0]
    tokens = []
    for _ in range(N_DRAWS):
        if verify is rejection:
            n_acc, nxt, _ = verify_rejection([p, bonus], None, [token], rng)
        else:
            n_acc, nxt = verify_match([p, bonus], [token], rng)
        tokens.append(token if n_acc else nxt)
    assert_distributed_as(tokens, p)


def test_second_position_given_first_accepted():
    """Draft of 2 with the target's second row depending on the first token (as it would with a
    real model): among rounds that accepted x1, the second emitted token must follow p2(. | x1).
    The per-x1 chi-square statistics are summed, their degrees of freedom too."""
    rng = np.random.default_rng(11)
    q1, p1 = Q_CASES["far"], P
    p2_given = np.random.default_rng(5).dirichlet(np.full(P.size, 3.0), size=P.size)
    q2_given = np.random.default_rng(6).dirichlet(np.full(P.size, 1.0), size=P.size)
    bonus = np.eye(P.size)[0]
    second: dict[int, list[int]] = {a: [] for a in range(P.size)}
    for _ in range(3 * N_DRAWS):
        x1 = sample(q1, rng)
        x2 = sample(q2_given[x1], rng)
        n_acc, nxt, _ = verify_rejection([p1, p2_given[x1], bonus], [q1, q2_given[x1]], [x1, x2], rng)
        if n_acc >= 1:
            second[x1].append(x2 if n_acc == 2 else nxt)
    assert sum(map(len, second.values())) >= N_DRAWS
    total_stat, total_df = 0.0, 0
    for a, toks in second.items():
        stat, df = chi2_stat(np.array(toks, dtype=np.int64), p2_given[a])
        total_stat, total_df = total_stat + stat, total_df + df
    assert total_stat < chi2_critical(total_df)


# ---------------------------------------------------------------------------------------------
# the bound has teeth: biased verifiers fail it


def always_accept(p_rows, q_rows, draft, rng):
    return len(draft), 0


def resample_from_p(p_rows, q_rows, draft, rng):
    """A classic bug: on rejection draw from p instead of the residual max(0, p - q)."""
    x = draft[0]
    if rng.random() * q_rows[0][x] < p_rows[0][x]:
        return 1, 0
    return 0, sample(p_rows[0], rng)


@pytest.mark.parametrize("wrong", [always_accept, resample_from_p])
def test_biased_verifiers_exceed_the_bound(wrong):
    stat, df = chi2_stat(first_emitted(wrong, P, Q_CASES["far"]), P)
    assert stat > 10 * chi2_critical(df)


def test_subtle_bias_exceeds_the_bound():
    """With q close to p the residual bug shifts the output by little; the bound still catches it."""
    stat, df = chi2_stat(first_emitted(resample_from_p, P, Q_CASES["close"]), P)
    assert stat > chi2_critical(df)


# ---------------------------------------------------------------------------------------------
# verifiers: exact behaviour and edge cases


def test_match_at_greedy_is_prefix_matching():
    """One-hot p: accept while draft == argmax, then emit the argmax at the mismatch."""
    eye = np.eye(6)
    rng = np.random.default_rng(0)
    assert verify_match([eye[1], eye[2], eye[3], eye[4]], [1, 2, 5], rng) == (2, 3)
    assert verify_match([eye[1], eye[2], eye[3], eye[4]], [1, 2, 3], rng) == (3, 4)
    assert verify_match([eye[1], eye[2]], [0], rng) == (0, 1)
    assert verify_match([eye[5]], [], rng) == (0, 5)


def test_rejection_all_accepted_takes_bonus_from_last_row():
    eye = np.eye(6)
    got = verify_rejection([eye[1], eye[2], eye[4]], [eye[1], eye[2]], [1, 2], np.random.default_rng(0))
    assert got == (2, 4, False)
    assert verify_rejection(np.stack([eye[1], eye[2], eye[4]]), None, [1, 2], np.random.default_rng(0)) == (2, 4, False)


def test_rejection_of_token_with_zero_target_probability():
    """p(x) = 0 always rejects; the replacement comes from the residual, never x."""
    p = np.array([0.5, 0.5, 0.0])
    q = np.array([0.0, 0.2, 0.8])
    rng = np.random.default_rng(0)
    for _ in range(200):
        n_acc, nxt, resampled = verify_rejection([p, p], [q], [2], rng)
        # residual max(0, p - q) = [0.5, 0.3, 0]
        assert (n_acc, resampled) == (0, True) and nxt in (0, 1)
        n_acc, nxt, resampled = verify_rejection([p, p], None, [2], rng)
        assert (n_acc, resampled) == (0, True) and nxt in (0, 1)
        # a token neither p nor q allows (a drafter bug) is rejected too
        n_acc, nxt, resampled = verify_rejection([p, p], [np.array([0.5, 0.5, 0.0])], [2], rng)
        assert (n_acc, resampled) == (0, True) and nxt in (0, 1)


def test_rejection_with_empty_residual_falls_back_to_p():
    """Rounding can leave q > p everywhere (here exaggerated): a rejection then has no residual mass
    and must still return a token p allows, drawn from p."""
    p = np.array([0.0, 0.5, 0.5])
    q = np.array([0.0, 0.6, 0.6])
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(500):
        n_acc, nxt, resampled = verify_rejection([p, p], [q], [1], rng)
        if n_acc == 0:
            assert resampled
            seen.add(nxt)
    assert seen == {1, 2}


def test_rejection_accepts_token_q_gave_zero_when_p_allows_it():
    p, q = np.array([0.5, 0.5]), np.array([1.0, 0.0])
    assert verify_rejection([p, np.eye(2)[0]], [q], [1], np.random.default_rng(0)) == (1, 0, False)


@pytest.mark.parametrize(
    "call",
    [
        lambda: verify_rejection([np.ones(3) / 3], None, [0], np.random.default_rng(0)),  # bonus row missing
        lambda: verify_rejection([np.ones(3) / 3] * 3, [np.ones(3) / 3], [0, 1], np.random.default_rng(0)),
        lambda: verify_match([np.ones(3) / 3] * 2, [3], np.random.default_rng(0)),
        lambda: verify_match([np.ones(3) / 3] * 2, [-1], np.random.default_rng(0)),
    ],
)
def test_verifiers_reject_malformed_input(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------------------------------------
# determinism


def run_once(seed: int | None) -> list:
    """probs -> draft tokens from q -> both verifiers on a 150k-wide vocab, all from one seed."""
    sp = SamplingParams(seed=seed, temp=1.0)
    rng = make_rng(sp)
    logits_rng = np.random.default_rng(42)  # the same "model output" every run
    target = [probs(logits_rng.normal(scale=2, size=151_936), sp) for _ in range(5)]
    drafts_q = [probs(logits_rng.normal(scale=2, size=151_936), sp) for _ in range(4)]
    draft = [sample(q, rng) for q in drafts_q]
    return [
        verify_rejection(target, drafts_q, draft, rng),
        verify_match(target, draft, rng),
        sample(target[0], rng),
        draft,
    ]


def test_same_seed_same_tokens():
    assert run_once(123) == run_once(123)


def test_seed_none_draws_fresh_randomness():
    first = [make_rng(SamplingParams(seed=None)).random() for _ in range(2)]
    assert first[0] != first[1]
    assert make_rng(SamplingParams(seed=5)).random() == make_rng(SamplingParams(seed=5)).random()


# ---------------------------------------------------------------------------------------------
# the sparse rows the engine verifies with


@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(temp=0.8),
        SamplingParams(temp=1.3, top_k=0, top_p=0.9, min_p=0.0),
        SamplingParams(temp=0.6, top_k=200, top_p=1.0, min_p=0.01),
    ],
)
def test_sparse_rows_verify_exactly_as_the_dense_reference(params):
    """dist() keeps only the surviving tokens; sampling and both verifiers must draw the very
    same tokens from it as from the dense vector, for the same random draws."""
    rng = np.random.default_rng(7)
    rows = [rng.standard_normal(151_936).astype(np.float32) * 4 for _ in range(4)]
    sparse = [dist(r, params) for r in rows]
    dense = [probs(r, params) for r in rows]
    for s, d in zip(sparse, dense):
        np.testing.assert_array_equal(s.dense(), d)
        assert len(s) == d.size and s.ids.size == np.count_nonzero(d)
    for seed in range(200):
        draft = [int(np.argmax(dense[i])) if seed % 3 else seed % 7 for i in range(3)]
        assert verify_match(sparse, draft, np.random.default_rng(seed)) == verify_match(
            dense, draft, np.random.default_rng(seed)
        )
        assert verify_rejection(sparse, None, draft, np.random.default_rng(seed)) == verify_rejection(
            dense, None, draft, np.random.default_rng(seed)
        )
        assert verify_rejection(sparse, sparse[1:], draft, np.random.default_rng(seed)) == verify_rejection(
            dense, dense[1:], draft, np.random.default_rng(seed)
        )
