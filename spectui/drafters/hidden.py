"""What the hidden-state drafters (EAGLE-3, DFlash, DSpark, MTP) share.

Unlike the other types, they follow the target: every target batch, prompt and verify
alike, is handed to process() right after it is decoded, while the target's hidden rows
for it are still in llama.cpp's buffers. Like llama.cpp's common_speculative_process, the
session does this for each of them whether or not it drafts this round, and calls
accept() on all of them after each verification.

Their draft context is driven by position, as in llama-speculative-simple: before a verify
batch is processed the draft cache is cut back to the verified position (the draft's own
tokens go), and after acceptance to the new end of the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, overload

import numpy as np

from spectui.drafters.base import Drafter, DraftResult, Needs, given
from spectui.llama import llama_ext
from spectui.llama.context import Context
from spectui.llama.sampling import LLAMA_DRAFT_SAMPLER, dist_of_candidates, draft_dist
from spectui.spec_config import SpecConfig


class HiddenStateDrafter(Drafter):
    """A drafter that follows the target: process() every target batch, accept() every round."""

    @classmethod
    def build(cls, needs: Needs) -> HiddenStateDrafter:
        return cls(given(needs.target_ctx), given(needs.draft_ctx), needs.spec)

    def __init__(self, target: Context, draft: Context, spec: SpecConfig):
        llama_ext.require()
        self.tgt, self.dft = target, draft
        assert draft.ptr is not None  # an open context
        self.batch = llama_ext.ExtBatch(draft.ptr)
        # the draft sampler's top 10 in llama.cpp's graph where -bs puts sampling on the backend
        self.top_on_backend = draft.sample_top_k(LLAMA_DRAFT_SAMPLER.top_k)
        self.covered = 0  # target positions this drafter has seen (its state is for tokens[:covered])
        self.configure(spec)

    def configure(self, spec: SpecConfig) -> None:
        # llama.cpp drafts up to --spec-draft-n-max and the dispatcher cuts the draft to what
        # the context and the answer allow: a block drafter's block size depends on the former
        self.n_max, self.n_min, self.p_min = spec.draft_n_max, spec.draft_n_min, spec.draft_p_min

    def close(self) -> None:
        self.batch.free()

    def reset(self) -> None:
        """Forget everything: the target is about to decode a text from position 0."""
        self.dft.forget_from(0)
        self.covered = 0

    def process(self, tokens: Sequence[int], pos0: int) -> None:
        """The target decoded `tokens` at positions pos0..; read its hidden rows now."""
        self.dft.forget_from(pos0)  # the last draft's tokens (llama-speculative-simple does this before verifying)
        self._process(tokens, pos0)
        self.verify_pos, self.covered = pos0, pos0 + len(tokens)

    def accept(self, n_accepted: int) -> None:
        """The last verify batch kept its first 1 + n_accepted rows."""
        self.covered = self.verify_pos + 1 + n_accepted
        self.dft.forget_from(self.covered)
        self._accept(n_accepted)

    # for subclasses

    verify_pos = -1  # position of the last processed batch's first row

    def _process(self, tokens: Sequence[int], pos0: int) -> None:
        raise NotImplementedError

    def _accept(self, n_accepted: int) -> None:
        """Move the deferred state to the last accepted row (llama.cpp's accept())."""

    @overload
    def _pick(self, i: int, qp: list[float] | None, p_min: Literal[0]) -> int: ...

    @overload
    def _pick(self, i: int, qp: list[float] | None, p_min: float | None = None) -> int | None: ...

    def _pick(self, i: int, qp: list[float] | None, p_min: float | None = None) -> int | None:
        """llama.cpp's draft sampler (top-k 10) on the draft's batch row i: its top token, or
        None below p_min (default --spec-draft-p-min); appended to `qp` (inspect), the
        sampler's probability of it. With its top 10 taken on the backend, only those come
        back, not the row of the vocabulary."""
        p_min = self.p_min if p_min is None else p_min
        if self.top_on_backend:
            ids, logits = self.dft.candidates(i)
            tok = int(ids[logits.argmax()])  # ids ascending: the lowest of tied ids, as numpy's argmax
            if p_min > 0 or qp is not None:
                q = dist_of_candidates(ids, logits, LLAMA_DRAFT_SAMPLER, self.dft.n_vocab)[tok]
                if q < p_min:
                    return None
                if qp is not None:
                    qp.append(q)
            return tok
        row = self.dft.logits_at(i)
        tok = int(np.argmax(row))
        if p_min > 0 or qp is not None:
            q = draft_dist(row)[tok]
            if q < p_min:
                return None
            if qp is not None:
                qp.append(q)
        return tok

    def _finish(self, result: list[int]) -> list[int]:
        return result if len(result) >= self.n_min else []

    def _chain(self, first: int, pos: int, row: np.ndarray, n_max: int, inspect: bool) -> DraftResult:
        """The EAGLE-3 and MTP drafting loop: decode `first` at `pos` with its hidden `row`,
        take the top token, feed it back at the next position with the draft's own output
        row (llama_get_embeddings_nextn_ith), until n_max or --spec-draft-p-min stops it."""
        qp: list[float] | None = [] if inspect else None
        b = self.batch
        b.clear()
        b.add(first, pos, True, row)
        b.process(self.dft)
        result: list[int] = []
        while (tok := self._pick(0, qp)) is not None:
            result.append(tok)
            if len(result) >= n_max:
                break
            out = llama_ext.rows(self.dft, "llama_get_embeddings_nextn_ith", 1, len(row), 0)[0]
            b.clear()
            b.add(tok, pos + len(result), True, out)
            b.process(self.dft)
        return DraftResult(self._finish(result), q_probs=qp)


def layer_features(tgt: Context, layer_ids: Sequence[int], n_tokens: int, n_layer_tgt: int) -> np.ndarray:
    """The target's extracted rows for the last batch, one row per token, the layers side
    by side ([n_tokens, len(layer_ids) * n_embd_tgt]); layer id n_layer is the NextN input."""
    n_embd = tgt.model.n_embd
    parts = []
    for lid in layer_ids:
        parts.append(
            llama_ext.rows(tgt, "llama_get_embeddings_layer_inp", n_tokens, n_embd, lid)
            if lid < n_layer_tgt
            else llama_ext.rows(tgt, "llama_get_embeddings_nextn", n_tokens, n_embd)
        )
    return np.concatenate(parts, axis=1)


def enable_layer_inputs(tgt: Context, layer_ids: Sequence[int], n_layer_tgt: int) -> None:
    for lid in layer_ids:
        if lid < n_layer_tgt:
            llama_ext.fn("llama_set_embeddings_layer_inp")(tgt.ptr, lid, True)
        else:
            llama_ext.fn("llama_set_embeddings_nextn")(tgt.ptr, True, False)
