"""Sampling and speculative verification math (pure numpy, exact).

The target distribution follows llama.cpp's default sampler chain
top_k -> top_p -> min_p -> temperature -> dist: the filters look at the unscaled logits, the
temperature is applied to the survivors, then one token is drawn from their softmax.

Two verifiers are provided, both of which emit tokens distributed exactly as the target's p:

* ``verify_match`` is llama.cpp's "sample and match": sample from p at each draft position and
  stop at the first token that differs from the draft. Valid whatever the draft was.
* ``verify_rejection`` is Leviathan et al. (2023) rejection sampling. It accepts more drafts at
  temperature > 0, but is exact only if each draft token really was drawn from the q row that is
  passed for it (or q_rows is None and the drafter is deterministic).

Every random choice goes through the caller's ``np.random.Generator``, so a fixed seed and the
same logits give the same tokens.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.random  # noqa: F401  numpy loads it on first use: at startup here, not in a turn's first round


@dataclass(frozen=True)
class SamplingParams:
    """llama.cpp's sampling settings and defaults (Setup's sampling options take theirs from
    here). temp <= 0 is greedy; top_k <= 0, top_p >= 1 and min_p <= 0 switch the respective
    filter off; seed None draws a fresh random seed. Each field's `wire`: its name in a
    llama-server request (engine/server.py sends them all)."""

    temp: float = field(default=0.8, metadata={"wire": "temperature"})
    top_k: int = field(default=40, metadata={"wire": "top_k"})
    top_p: float = field(default=0.95, metadata={"wire": "top_p"})
    min_p: float = field(default=0.05, metadata={"wire": "min_p"})
    seed: int | None = field(default=None, metadata={"wire": "seed"})

    @property
    def greedy(self) -> bool:
        return self.temp <= 0


# llama.cpp's draft-simple sampler: the draft model's 10 most likely tokens at temperature 1.
LLAMA_DRAFT_SAMPLER = SamplingParams(temp=1.0, top_k=10, top_p=1.0, min_p=0.0)


def make_rng(params: SamplingParams) -> np.random.Generator:
    """The generator for one generation: seeded from params.seed, or from OS entropy if None."""
    return np.random.default_rng(params.seed)


@dataclass(frozen=True)
class Dist:
    """A distribution over the vocabulary as its nonzero entries, token ids ascending: the
    few dozen tokens the sampler chain keeps, not a vector of 150k mostly zeros. Indexing
    gives a token's probability; len() is the vocabulary size."""

    ids: np.ndarray  # int64, ascending
    p: np.ndarray  # float64, same order, sums to 1
    n_vocab: int

    def __len__(self) -> int:
        return self.n_vocab

    def __getitem__(self, token: int) -> float:
        if not 0 <= token < self.n_vocab:
            raise IndexError(f"token {token} is outside the vocabulary of {self.n_vocab}")
        i = int(np.searchsorted(self.ids, token))
        return float(self.p[i]) if i < self.ids.size and self.ids[i] == token else 0.0

    def dense(self) -> np.ndarray:
        out = np.zeros(self.n_vocab)
        out[self.ids] = self.p
        return out

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return self.dense() if dtype is None else self.dense().astype(dtype)


BLOCK = 64  # logits per group when looking for a threshold that at least k of them reach


def _reaching(z: np.ndarray, k: int) -> np.ndarray:
    """Ids, ascending, of the logits that reach the k-th largest of the groups' maxima: at
    least k of them, the k largest among them, found without partitioning the vocabulary.

    The logits fall into groups of BLOCK; the k-th largest of the groups' maxima is k
    distinct logits, so at least k logits reach it: one comparison over the vocabulary
    leaves a few candidates. A group is a column of the vocabulary seen as BLOCK rows (ids
    j, j + g, j + 2g, ...): numpy reduces contiguous rows far faster than 64-logit runs.
    Every numpy call here runs with the caches cold (a CPU decode streams the weights
    through them), where a call costs many times what it costs warm, so fewer calls win over
    less data: the candidates are compared all at once, not gathered group by group
    (docs/performance.md). The logits past the last full row are one more group."""
    g = z.size // BLOCK
    n = g * BLOCK
    maxima = z[:n].reshape(BLOCK, g).max(axis=0)
    if n < z.size:
        maxima = np.append(maxima, z[n:].max())
    if maxima.size <= k:
        return np.arange(z.size)
    maxima.partition(maxima.size - k)
    return (z >= maxima[maxima.size - k]).nonzero()[0]


def _top_k(z: np.ndarray, k: int) -> np.ndarray:
    """Ids of the k largest logits, ascending; a tie at the k-th place keeps the lower id."""
    if not 0 < k < z.size:
        return np.arange(z.size)
    ids = _reaching(z, k)
    if ids.size > k:
        ids = ids[(-z[ids]).argsort(kind="stable")[:k]]
        ids.sort()
    return ids


def dist(logits: np.ndarray, params: SamplingParams) -> Dist:
    """The distribution llama.cpp's default chain samples from (greedy: all mass on the
    argmax). Sums run in token-id order, so probs() and sample() over the dense vector give
    exactly the same numbers.

    Cost is one pass over the vocabulary plus a sort of the candidates that survive top-k:
    the min-p set is a prefix of the logit-sorted order (all logits >= max + log(min_p)), and
    top-p also keeps a prefix of that order, so filtering by min-p before sorting leaves the
    result unchanged as long as top-p's cumulative sum is still normalised over the whole
    top-k set, as llama.cpp's is.
    """
    z = np.asarray(logits)
    if z.ndim != 1 or z.size == 0:
        raise ValueError(f"probs() takes one non-empty row of logits, got shape {z.shape}")
    if params.greedy:
        return Dist(np.array([int(np.argmax(z))]), np.ones(1), z.size)
    k = params.top_k
    if 0 < k <= FEW and k < z.size:
        # the top k picked from the candidates on Python floats: four numpy calls fewer
        ids = _reaching(z, k)
        cand, zc = ids.tolist(), z[ids].tolist()
        if len(cand) > k:
            top = sorted(range(len(zc)), key=zc.__getitem__, reverse=True)[:k]  # a tie keeps the lower id
            top.sort()
            cand, zc = [cand[i] for i in top], [zc[i] for i in top]
        return _dist_of_few(cand, zc, params, z.size)
    cand = _top_k(z, k)
    return dist_of_candidates(cand, z[cand], params, z.size)


FEW = 64  # candidates up to which the chain runs on Python floats (_dist_of_few); numpy beyond


def dist_of_candidates(cand: np.ndarray, logits: np.ndarray, params: SamplingParams, n_vocab: int) -> Dist:
    """dist() from the top-k candidates alone (ids ascending, their logits): what is left
    to do when llama.cpp's graph has taken the top k on the backend (Context.decode_dists)."""
    if cand.size <= FEW:
        return _dist_of_few(cand.tolist(), logits.tolist(), params, n_vocab)
    zc = logits.astype(np.float64)
    z_max = zc.max()
    if not math.isfinite(z_max):
        raise ValueError("logits have no finite maximum")
    # Softmax weights at temperature 1 over the top-k set: what llama.cpp's top-p accumulates.
    w = np.exp(zc - z_max)
    w_total = w.sum()

    if params.min_p > 0:
        keep = zc >= z_max + math.log(params.min_p)
        cand, zc, w = cand[keep], zc[keep], w[keep]
    if params.top_p < 1:
        order = (-zc).argsort(kind="stable")
        cum = w[order].cumsum() / w_total
        # Smallest prefix whose mass reaches top_p (the token that crosses it is kept).
        n_keep = min(int(cum.searchsorted(params.top_p, side="left")) + 1, order.size)
        kept = order[:n_keep]
        kept.sort()
        cand, zc = cand[kept], zc[kept]

    e = np.exp((zc - z_max) / params.temp)
    return Dist(cand, e / e.sum(), n_vocab)


def _dist_of_few(cand: list[int], z: list[float], params: SamplingParams, n_vocab: int) -> Dist:
    """dist_of_candidates for a top-k's few dozen candidates, the same chain on Python floats.
    A CPU decode leaves the caches cold, where each numpy call costs microseconds whatever
    its size, so for llama.cpp's default top-k 40 this beats the ~25 numpy calls above, cold
    and warm (docs/performance.md). The results agree with the numpy path to rounding (the
    tests compare them)."""
    z_max = max(z)
    if not math.isfinite(z_max):
        raise ValueError("logits have no finite maximum")
    keep: Sequence[int] = range(len(z))
    if params.min_p > 0:
        floor = z_max + math.log(params.min_p)
        keep = [i for i in keep if z[i] >= floor]
    if params.top_p < 1:
        w = [math.exp(x - z_max) for x in z]
        w_total = sum(w)  # over the whole top-k set, as llama.cpp's top-p
        by_logit = sorted(keep, key=z.__getitem__, reverse=True)  # stable: ties keep id order
        mass, n_keep = 0.0, len(by_logit)
        for n, i in enumerate(by_logit, 1):
            mass += w[i]
            if mass / w_total >= params.top_p:  # the token that crosses top_p is kept
                n_keep = n
                break
        keep = sorted(by_logit[:n_keep])
    e = [math.exp((z[i] - z_max) / params.temp) for i in keep]
    total = sum(e)
    return Dist(np.array([cand[i] for i in keep], dtype=np.int64), np.array([x / total for x in e]), n_vocab)


def probs(logits: np.ndarray, params: SamplingParams) -> np.ndarray:
    """dist() as a dense float64 vector over the vocabulary (zero outside the kept set)."""
    return dist(logits, params).dense()


def draft_dist(logits: np.ndarray) -> Dist:
    """llama.cpp's draft-simple sampler: top-k 10, softmax at temperature 1, whatever the
    target's settings. Its top token is the greedy draft and its probability is what
    --spec-draft-p-min compares against.

    A probabilistic draft instead samples from probs() with the target's own settings (the
    same filters on p and q); verify_rejection is exact when q_rows are the rows the draft
    tokens were drawn from, or None for a deterministic (one-hot) drafter.
    """
    return dist(logits, LLAMA_DRAFT_SAMPLER)


def sample(p: np.ndarray | Dist, rng: np.random.Generator) -> int:
    """One token from the (possibly unnormalised, non-negative) weights p, using one uniform draw.
    Never returns an index whose weight is zero. A Dist gives the same token as its dense
    vector for the same draw (the cumulative sums agree: adding zeros changes nothing)."""
    u = rng.random()
    weights, ids = (p.p, p.ids) if isinstance(p, Dist) else (p, None)
    c: list[float] | np.ndarray
    if ids is not None and ids.size <= FEW:
        # a top-k's few on Python floats: the same running sums as numpy's, without two numpy
        # calls, each costly with the caches cold after a decode
        c = list(itertools.accumulate(weights.tolist()))
    else:
        c = np.asarray(weights).cumsum(dtype=np.float64)
    total = float(c[-1])
    if not (math.isfinite(total) and total > 0):
        raise ValueError("cannot sample: weights sum to zero or are not finite")
    i = bisect.bisect_right(c, u * total)  # numpy's searchsorted(side="right")
    if i == len(c):  # u * total rounded up to total: take the last token with weight
        i = int(np.flatnonzero(np.asarray(weights) > 0)[-1])
    return i if ids is None else int(ids[i])


def _dense(row) -> np.ndarray:
    return row.dense() if isinstance(row, Dist) else np.asarray(row, dtype=np.float64)


def verify_match(
    p_rows: Sequence[np.ndarray | Dist] | np.ndarray, draft: Sequence[int], rng: np.random.Generator
) -> tuple[int, int]:
    """llama.cpp's sample-and-match. p_rows holds len(draft)+1 target distributions (one per draft
    position, then the bonus position). Returns (n_accepted, next_token): the token sampled at
    the first mismatch (it replaces the rejected draft token), or the bonus token when every draft
    token matched. Each emitted token is a plain sample from p, so the output is exactly the
    target's; with one-hot (greedy) p this is greedy matching."""
    _check(p_rows, None, draft)
    for i, x in enumerate(draft):
        t = sample(p_rows[i], rng)
        if t != x:
            return i, t
    return len(draft), sample(p_rows[len(draft)], rng)


def verify_rejection(
    p_rows: Sequence[np.ndarray | Dist] | np.ndarray,
    q_rows: Sequence[np.ndarray | Dist] | np.ndarray | None,
    draft: Sequence[int],
    rng: np.random.Generator,
    draws: list[float] | None = None,
) -> tuple[int, int, bool]:
    """Rejection sampling (Leviathan et al. 2023). Draft token x_i is accepted with probability
    min(1, p(x)/q(x)); at the first rejection the next token is drawn from normalize(max(0, p - q))
    and resampled is True; if all are accepted the bonus token is drawn from p_rows[len(draft)]
    (resampled False). Returns (n_accepted, next_token, resampled).

    Exact only if x_i was drawn from q_rows[i]. q_rows None means one-hot drafts (n-gram or other
    deterministic drafters): q(x) = 1, so x is accepted with probability p(x) and the residual is
    p without x. p(x) = 0 always rejects; q(x) = 0 with p(x) > 0 (a token q could not have drawn)
    is accepted. If rounding leaves the residual with no mass, the token is drawn from p instead.
    Each draft position costs O(1) unless it is rejected. `draws` (inspect mode) gets the
    uniform draw compared with acceptance(p(x), q(x)) at each judged draft position."""
    _check(p_rows, q_rows, draft)
    for i, x in enumerate(draft):
        px = float(p_rows[i][x])
        qx = 1.0 if q_rows is None else float(q_rows[i][x])
        u = rng.random()
        if draws is not None:
            draws.append(u)
        if u < acceptance(px, qx):  # the very comparison an inspected verdict shows
            continue
        p = _dense(p_rows[i])
        if q_rows is None:
            residual = p.copy()
            residual[x] = 0.0
        else:
            residual = np.maximum(p - _dense(q_rows[i]), 0.0)
        if not residual.sum() > 0:
            residual = p
        return i, sample(residual, rng), True
    return len(draft), sample(p_rows[len(draft)], rng), False


def acceptance(p: float, q: float) -> float:
    """The chance rejection sampling keeps a draft token, min(1, p/q): p = 0 always rejects,
    q = 0 with p > 0 (a token q could not have drawn) always accepts."""
    return min(1.0, p / q) if q > 0 else float(p > 0)


def _check(p_rows, q_rows, draft: Sequence[int]) -> None:
    """Reject row counts and token ids that would otherwise index the wrong row or wrap around."""
    if len(p_rows) != len(draft) + 1:
        raise ValueError(f"need {len(draft) + 1} target rows for {len(draft)} draft tokens, got {len(p_rows)}")
    if q_rows is not None and len(q_rows) < len(draft):
        raise ValueError(f"need {len(draft)} draft rows for {len(draft)} draft tokens, got {len(q_rows)}")
    n_vocab = len(p_rows[0])
    if any(not 0 <= x < n_vocab for x in draft):
        raise ValueError(f"draft token id out of range 0..{n_vocab - 1}: {list(draft)}")


def softmax_at(logits: np.ndarray, token: int, n_top: int = 0) -> tuple[float, tuple[tuple[int, float], ...]]:
    """A row's full softmax (temperature 1, no filter: what greedy verification ranks by) at
    `token`, and its n_top most likely (id, p), ties to the lower id: inspect mode at greedy."""
    z = np.asarray(logits, dtype=np.float64)
    z_max = z.max()
    log_total = math.log(np.exp(z - z_max).sum()) + z_max
    top: tuple[tuple[int, float], ...] = ()
    if n_top > 0:
        ids = _top_k(z, n_top)
        ids = ids[(-z[ids]).argsort(kind="stable")]
        top = tuple((int(i), math.exp(z[i] - log_total)) for i in ids)
    return math.exp(z[token] - log_total), top


def top_of(d: Dist, n: int) -> tuple[tuple[int, float], ...]:
    """A distribution's n most likely (id, p), ties to the lower id: inspect mode at temperature > 0."""
    order = (-d.p).argsort(kind="stable")[:n]
    return tuple((int(d.ids[i]), float(d.p[i])) for i in order)
