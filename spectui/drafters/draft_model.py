"""draft-simple: a small model of the same family drafts greedily (or by sampling).

The draft context is synced lazily: each round decodes only the history tokens its KV
cache lacks, in one batch with the last sampled token (a cache SYNC_APART or more tokens
behind catches up in a decode of its own first). Accepted draft tokens are already in the
draft cache from drafting, so unlike llama.cpp they are not decoded a second time: after
a draft the target took whole, only its last token is missing. Per round the draft costs
one batch (missing history + id_last: a batch of 2 costs well under two decodes) and n-1
single decodes, and accept() has nothing to do: the next round's sync keeps the accepted prefix.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from spectui.drafters.base import Drafter, DraftResult, Needs, given
from spectui.llama.context import Context, ContextFull
from spectui.llama.sampling import SamplingParams, dist, draft_dist, sample
from spectui.spec_config import SpecConfig

# A cache this many tokens behind catches up in a decode of its own, timed apart (auto
# prices catching up per token from it; below this a batch's cost is mostly its fixed part).
SYNC_APART = 8


class DraftModel(Drafter):
    @classmethod
    def build(cls, needs: Needs) -> DraftModel:
        return cls(given(needs.draft_ctx), needs.sampling, needs.spec)

    def __init__(self, ctx: Context, sampling: SamplingParams, spec: SpecConfig = SpecConfig()):
        self.ctx = ctx
        self.sampling = sampling
        self.configure(spec)
        # Its own stream: sharing the verifier's would correlate draws and acceptance.
        self.rng = np.random.default_rng(None if sampling.seed is None else [sampling.seed, 1])

    def configure(self, spec: SpecConfig) -> None:
        self.n_min, self.p_min = spec.draft_n_min, spec.draft_p_min
        self.probabilistic = spec.draft_sampling == "probabilistic"

    def begin(self, prompt: Sequence[int]) -> None:
        """Prefill the draft cache with the context (the first round adds id_last)."""
        self._sync(prompt)

    def _sync(self, history: Sequence[int], merge: bool = False) -> tuple[int, float, int]:
        """Bring the cache up to `history`. With `merge`, a cache fewer than SYNC_APART tokens
        behind only drops what differs, and the tokens it still lacks are returned for
        draft() to decode with id_last (no time of its own: the catch-up rides with the first
        step). Returns (tokens lacking, seconds and tokens of a catch-up decoded apart)."""
        t0 = time.perf_counter()
        n_keep = self.ctx.common_prefix(history)
        self.ctx.truncate(n_keep)
        lacking = len(history) - n_keep
        if (merge and lacking < SYNC_APART) or not lacking:
            return lacking, 0.0, 0
        self.ctx.decode(history[n_keep:])
        return 0, time.perf_counter() - t0, lacking

    def behind(self, tokens: Sequence[int]) -> int:
        """History tokens the next draft(tokens) must decode before it can draft."""
        return len(tokens) - 1 - self.ctx.common_prefix(tokens[:-1])

    def _decode_last(self, tokens: list[int], take: str):
        """Decode tokens and take the last one's row: its argmax, its distribution under the
        target's settings (read in place, or its top k from the backend), or the row itself."""
        last = [len(tokens) - 1]
        if take == "argmax":
            return self.ctx.decode_argmax(tokens, last)[0]
        if take == "dist":
            return self.ctx.decode_dists(tokens, last, self.sampling)[0]
        return self.ctx.decode(tokens, want=last)[0]

    def draft(self, tokens: Sequence[int], n_max: int, inspect: bool = False) -> DraftResult:
        if n_max <= 0:
            return DraftResult()
        room = self.ctx.n_ctx - len(tokens)
        n_max = min(n_max, room)
        if n_max <= 0:
            return DraftResult()
        lacking, t_sync, n_synced = self._sync(tokens[:-1], merge=True)
        none = DraftResult(t_sync=t_sync, n_synced=n_synced)
        # plain greedy needs only each row's argmax, and sampling without p-min only q: neither
        # needs the row (see Context.decode_argmax, decode_dists)
        qp: list[float] | None = [] if inspect else None
        needs_row = self.p_min > 0 or (qp is not None and not self.probabilistic)  # (inspect: greedy q)
        take = "row" if needs_row else "dist" if self.probabilistic else "argmax"
        try:
            out = self._decode_last(list(tokens[len(tokens) - 1 - lacking :]), take)
        except ContextFull:
            return none
        result: list[int] = []
        qs: list = []  # the Dist each token was drawn from
        while True:
            if take == "argmax":
                tok = out
            elif self.probabilistic:  # q with the target's own settings (same filters as p)
                q = out if take == "dist" else dist(out, self.sampling)
                tok = sample(q, self.rng)
                qs.append(q)
            else:
                tok = int(np.argmax(out))
            if self.p_min > 0 and draft_dist(out)[tok] < self.p_min:
                qs = qs[: len(result)]
                break
            result.append(tok)
            if qp is not None:  # the distribution it was drawn from, or the draft sampler's
                qp.append(float(qs[-1][tok]) if self.probabilistic else draft_dist(out)[tok])
            if len(result) >= n_max:
                break
            out = self._decode_last([tok], take)
        if len(result) < self.n_min:
            return none
        return DraftResult(result, qs if self.probabilistic else None, qp, t_sync, n_synced)
