"""Several sequences in one llama.cpp context, decoded together as llama-server's slots are.

llama-server at `-np N` creates one context of N sequences with a KV cache per sequence
(`kv_unified` off unless `--kv-unified`), each slot getting `-c` / N cells, and decodes every
busy slot's tokens in one `llama_decode` (server-context.cpp, `update_slots`). This context
does the same so that the plan can time c sequences x b tokens: `fill` gives every sequence
the same history (seq 0 decoded, then copied), `decode_timed` appends b tokens to each of
the first c sequences, reads every row's argmax (as a greedy verification does) and removes
them again.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Sequence
from dataclasses import replace

import llama_cpp

from spectui.errors import UserError
from spectui.llama import runtime
from spectui.llama.context import array_at
from spectui.llama.context_params import MIN_CTX, ContextParams, check_params, llama_params
from spectui.llama.model import Model

UBATCH = 512  # llama-server's default -ub


class Sequences:
    """A context of `n_seq` sequences, each holding up to `n_ctx_seq` tokens, in separate caches."""

    def __init__(self, model: Model, params: ContextParams, n_seq: int, n_ctx_seq: int, largest_batch: int):
        n_ctx_seq = -(-n_ctx_seq // MIN_CTX) * MIN_CTX  # llama.cpp pads each sequence's cells
        params = replace(params, n_ctx=n_seq * n_ctx_seq)
        check_params(replace(params, n_ctx=n_ctx_seq), model.n_ctx_train, model.path.name)
        cp = llama_params(params)
        cp.n_seq_max = n_seq
        cp.kv_unified = False  # llama-server's default at -np N
        cp.n_batch = max(UBATCH, largest_batch)  # one llama_decode, split into ubatches as the server's is
        cp.n_ubatch = UBATCH
        runtime.forget_errors()
        self.ptr = llama_cpp.llama_init_from_model(model.ptr, cp)
        if not self.ptr:
            why = runtime.last_error() or "out of memory?"
            raise UserError(f"cannot create a context of {n_seq} sequences for {model.path.name}: {why}")
        self.model = model
        self.n_seq = n_seq
        self.n_batch = cp.n_batch
        self._mem = llama_cpp.llama_get_memory(self.ptr)
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        self.depth = 0

    def close(self) -> None:
        if getattr(self, "ptr", None):
            llama_cpp.llama_batch_free(self._batch)
            llama_cpp.llama_free(self.ptr)
            self.ptr = None

    def __enter__(self) -> Sequences:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _run(self, entries: Sequence[tuple[int, int, int, bool]]) -> None:
        """One llama_decode of (token, position, sequence, output) entries."""
        b = self._batch
        for i, (tok, pos, seq, out) in enumerate(entries):
            b.token[i] = tok
            b.pos[i] = pos
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = seq
            b.logits[i] = out
        b.n_tokens = len(entries)
        rc = llama_cpp.llama_decode(self.ptr, b)
        if rc != 0:
            raise RuntimeError(f"llama_decode of {len(entries)} tokens over sequences failed with status {rc}")

    def _forget(self, n_seq: int, pos: int) -> None:
        for s in range(n_seq):
            if not llama_cpp.llama_memory_seq_rm(self._mem, s, pos, -1):
                raise RuntimeError(f"llama.cpp could not remove positions {pos}.. of sequence {s}")

    def fill(self, tokens: Sequence[int]) -> None:
        """Every sequence holds `tokens` (and nothing else): decoded once into sequence 0, then
        copied whole to the others (a copy between caches, done before the next decode), and a
        one-token decode in every sequence so that the copy is not timed."""
        self._forget(self.n_seq, 0)
        for start in range(0, len(tokens), self.n_batch):
            chunk = tokens[start : start + self.n_batch]
            self._run([(t, start + i, 0, False) for i, t in enumerate(chunk)])
        for s in range(1, self.n_seq):
            llama_cpp.llama_memory_seq_cp(self._mem, 0, s, -1, -1)
        self.depth = len(tokens)
        self._run([(tokens[-1], self.depth, s, True) for s in range(self.n_seq)])
        self._forget(self.n_seq, self.depth)

    def decode(self, tokens: Sequence[int], n_seq: int) -> list[list[int]]:
        """Decode `tokens` after the history in each of the first `n_seq` sequences, in one
        llama_decode, and return every row's argmax per sequence; the tokens are removed again."""
        if n_seq > self.n_seq or n_seq * len(tokens) > self.n_batch:
            raise ValueError(f"{n_seq} x {len(tokens)} tokens do not fit this context's batch")
        entries = [(t, self.depth + i, s, True) for s in range(n_seq) for i, t in enumerate(tokens)]
        n_vocab = self.model.n_vocab
        self._run(entries)
        at = ctypes.cast(llama_cpp.llama_get_logits(self.ptr), ctypes.c_void_p).value or 0
        picks = array_at(at, ctypes.c_float, len(entries) * n_vocab).reshape(len(entries), n_vocab).argmax(axis=1)
        self._forget(n_seq, self.depth)
        return picks.reshape(n_seq, len(tokens)).tolist()

    def decode_timed(self, tokens: Sequence[int], n_seq: int) -> float:
        """Seconds of decode(): the batch and every row's argmax (as a greedy verification)."""
        t0 = time.perf_counter()
        self.decode(tokens, n_seq)
        return time.perf_counter() - t0
