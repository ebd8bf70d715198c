"""draft-eagle3: llama.cpp's common_speculative_impl_draft_eagle3, ported.

The draft reads three of the target's layer inputs per token. An encoder pass turns them
into g rows; the decoder's cache holds, at position P, the pair (token[P+1], g[P]). The
last row of each target batch has no next token yet, so it is deferred ("pending") until
the next batch, or the next draft, supplies it. Drafting feeds each drafted token back with
the draft's own pre-norm row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from spectui.drafters.base import DraftResult
from spectui.drafters.hidden import HiddenStateDrafter, enable_layer_inputs, layer_features
from spectui.llama import llama_ext
from spectui.llama.context import Context
from spectui.spec_config import SpecConfig


class Eagle3(HiddenStateDrafter):
    def __init__(self, target: Context, draft: Context, spec: SpecConfig):
        super().__init__(target, draft, spec)
        self.layer_ids = llama_ext.target_layer_ids(draft.model.ptr)
        self.n_layer_tgt = target.model.n_layer
        self.n_embd_dec = draft.model.n_embd
        enable_layer_inputs(target, self.layer_ids, self.n_layer_tgt)
        llama_ext.fn("llama_set_embeddings_nextn")(draft.ptr, True, True)  # the draft's pre-norm rows
        assert draft.ptr is not None  # an open context
        self.enc = llama_ext.ExtBatch(draft.ptr)
        self.reset()

    def close(self) -> None:
        super().close()
        self.enc.free()

    def reset(self) -> None:
        super().reset()
        self.pending_g = np.zeros(self.n_embd_dec, dtype=np.float32)
        self.pending_pos = -1
        self.verify_g = np.zeros((0, self.n_embd_dec), dtype=np.float32)

    def _encode(self, features: np.ndarray) -> np.ndarray:
        """g rows for the feature rows, in chunks of the draft's ubatch."""
        n = len(features)
        g = np.empty((n, self.n_embd_dec), dtype=np.float32)
        for i in range(0, n, self.dft.n_ubatch):
            chunk = features[i : i + self.dft.n_ubatch]
            # the per-token encoder ignores positions: placeholders after the cache's end
            pos = self.dft.pos_max() + 1
            self.enc.clear()
            for j, row in enumerate(chunk):
                self.enc.add(None, pos + j, True, row)
            self.enc.process(self.dft, encode=True)
            g[i : i + len(chunk)] = llama_ext.rows(self.dft, "llama_get_embeddings_nextn", len(chunk), self.n_embd_dec)
        return g

    def _process(self, tokens: Sequence[int], pos0: int) -> None:
        n = len(tokens)
        g = self._encode(layer_features(self.tgt, self.layer_ids, n, self.n_layer_tgt))
        b = self.batch
        b.clear()
        # the previous batch's deferred row, completed by this batch's first token
        if self.pending_pos >= 0 and self.pending_pos + 1 == pos0 and self.pending_pos > self.dft.pos_max():
            b.add(tokens[0], self.pending_pos, False, self.pending_g)
        for k in range(n - 1):
            b.add(tokens[k + 1], pos0 + k, False, g[k])
        self.verify_g = g
        self.pending_pos, self.pending_g = pos0 + n - 1, g[n - 1].copy()
        if b.size:
            b.process(self.dft)

    def _accept(self, n_accepted: int) -> None:
        i = min(n_accepted, len(self.verify_g) - 1)
        if i >= 0:
            self.pending_pos, self.pending_g = self.verify_pos + i, self.verify_g[i].copy()

    def draft(self, tokens: Sequence[int], n_max: int, inspect: bool = False) -> DraftResult:
        if n_max <= 0 or self.pending_pos < 0:
            return DraftResult()
        self.dft.forget_from(self.pending_pos)
        # the deferred pair, completed by id_last; then the draft's pre-norm rows
        return self._chain(tokens[-1], self.pending_pos, self.pending_g, n_max, inspect)
