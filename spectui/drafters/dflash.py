"""draft-dflash and draft-dspark: llama.cpp's common_speculative_impl_draft_dflash, ported.

Block diffusion: the target's features for every decoded token are injected into the
draft's KV cache at the target's positions; a draft is one pass over a block
[id_last, <mask> x n] whose outputs are read in place. DSpark is the same draft with a
Markov head: with sample_from_anchor its block is n masks read from the first slot, and a
confidence head can cut the draft short (--spec-draft-p-min).

DFlash2 (a selector lattice instead of logits) is not ported: a draft with
dflash.selector_top_k > 0 is refused when the session opens.
"""

from __future__ import annotations

from collections.abc import Sequence

from spectui.drafters.base import DraftResult
from spectui.drafters.hidden import HiddenStateDrafter, enable_layer_inputs, layer_features
from spectui.llama import llama_ext
from spectui.llama.context import Context
from spectui.spec_config import SpecConfig


def block_settings(model) -> tuple[int, bool, bool]:
    """(block_size, sample_from_anchor, causal attention) from the draft's metadata, with
    llama.cpp's defaults (16, true, false)."""
    size = model.meta("dflash.block_size")
    anchor = model.meta("dflash.sample_from_anchor")
    causal = model.meta("dflash.attention.causal")
    return (int(size) if size else 16, anchor is None or anchor == "true", causal == "true")


class DFlash(HiddenStateDrafter):
    is_dspark = False

    def __init__(self, target: Context, draft: Context, spec: SpecConfig):
        super().__init__(target, draft, spec)
        model = draft.model
        self.layer_ids = llama_ext.target_layer_ids(model.ptr)
        self.n_layer_tgt = target.model.n_layer
        self.n_embd_dec = model.n_embd
        self.block_size, self.sample_from_anchor, causal = block_settings(model)
        self.anchor_first = self.is_dspark and self.sample_from_anchor
        # in-place denoising yields block_size-1 tokens; anchor-first DSpark a full block
        self.n_draft_max = self.block_size if self.anchor_first else self.block_size - 1
        self.mask = llama_ext.fn("llama_vocab_mask")(model.vocab)
        self.n_pos = 4 if llama_ext.is_mrope(model.ptr) else 1
        enable_layer_inputs(target, self.layer_ids, self.n_layer_tgt)
        llama_ext.fn("llama_set_embeddings_nextn")(draft.ptr, True, True)
        llama_ext.fn("llama_set_causal_attn")(draft.ptr, causal)

    def _process(self, tokens: Sequence[int], pos0: int) -> None:
        features = layer_features(self.tgt, self.layer_ids, len(tokens), self.n_layer_tgt)
        b = self.batch
        for off in range(0, len(tokens), self.dft.n_ubatch):
            b.clear()
            for i, row in enumerate(features[off : off + self.dft.n_ubatch]):
                b.add(None, pos0 + off + i, False, row, n_pos=self.n_pos)
            b.process(self.dft)  # the fused decode encodes and injects them into the K/V cache

    def draft(self, tokens: Sequence[int], n_max: int, inspect: bool = False) -> DraftResult:
        n_draft = min(self.n_max, self.n_draft_max)  # the block follows the setting, not n_max
        if n_max <= 0 or n_draft <= 0:
            return DraftResult()
        pos0 = len(tokens) - 1  # id_last's position
        n_block = n_draft + (0 if self.anchor_first else 1)
        b = self.batch
        b.clear()
        for i in range(n_block):
            b.add(tokens[-1] if i == 0 else self.mask, pos0 + i, True)
        b.process(self.dft)
        result: list[int] = []
        qp: list[float] | None = [] if inspect else None
        if self.is_dspark:
            conf = (
                llama_ext.rows(self.dft, "llama_get_embeddings_nextn", n_block, self.n_embd_dec)
                if self.p_min > 0
                else None
            )
            for i in range(0 if self.sample_from_anchor else 1, n_block):
                if conf is not None and conf[i, 0] < self.p_min:
                    break
                result.append(self._pick(i, qp, p_min=0))
        else:
            for i in range(1, n_block):
                tok = self._pick(i, qp)
                if tok is None:
                    break
                result.append(tok)
        return DraftResult(self._finish(result)[:n_max], q_probs=qp)


class DSpark(DFlash):
    is_dspark = True
