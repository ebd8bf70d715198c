"""draft-mtp: llama.cpp's common_speculative_impl_draft_mtp, ported (one NextN head).

The target's own NextN layer drafts, in a second context of the target model
(LLAMA_CONTEXT_TYPE_MTP). Its cache holds, at position p, the pair (token[p], h[p-1]) where
h is the target's NextN input row; each batch's last row waits for the next batch's first
token. Drafting feeds each drafted token back with the head's own output row.

Targets with several chained heads (step35) or a head sharing the target's cache (gemma4)
are not ported: the session refuses them when it opens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from spectui.drafters.base import DraftResult, Needs, given
from spectui.drafters.hidden import HiddenStateDrafter
from spectui.llama import llama_ext
from spectui.llama.context import Context
from spectui.spec_config import SpecConfig


class Mtp(HiddenStateDrafter):
    @classmethod
    def build(cls, needs: Needs) -> Mtp:
        return cls(given(needs.target_ctx), given(needs.mtp_ctx), needs.spec)

    def __init__(self, target: Context, draft: Context, spec: SpecConfig):
        super().__init__(target, draft, spec)
        self.n_embd = llama_ext.fn("llama_model_n_embd_out")(target.model.ptr)
        llama_ext.fn("llama_set_embeddings_nextn")(target.ptr, True, False)
        llama_ext.fn("llama_set_embeddings_nextn")(draft.ptr, True, True)
        self.reset()

    def reset(self) -> None:
        super().reset()
        self.pending_h = np.zeros(self.n_embd, dtype=np.float32)
        self.verify_h = np.zeros((0, self.n_embd), dtype=np.float32)

    def _process(self, tokens: Sequence[int], pos0: int) -> None:
        n = len(tokens)
        h = llama_ext.rows(self.tgt, "llama_get_embeddings_nextn", n, self.n_embd).copy()
        b = self.batch
        b.clear()
        for k, tok in enumerate(tokens):
            b.add(tok, pos0 + k, False, self.pending_h if k == 0 else h[k - 1])
        b.process(self.dft)
        self.verify_h, self.pending_h = h, h[n - 1].copy()

    def _accept(self, n_accepted: int) -> None:
        i = min(n_accepted, len(self.verify_h) - 1)
        if i >= 0:
            self.pending_h = self.verify_h[i].copy()

    def draft(self, tokens: Sequence[int], n_max: int, inspect: bool = False) -> DraftResult:
        if n_max <= 0:
            return DraftResult()
        # id_last at its position with the last accepted row; then the head's own rows
        return self._chain(tokens[-1], len(tokens) - 1, self.pending_h, n_max, inspect)
