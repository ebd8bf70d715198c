"""A llama.cpp context: its KV cache, batches, and the logits rows a speculative loop reads.

A thin layer over llama-cpp-python's low-level `llama_cpp` API. The high-level
`Llama` class keeps an n_ctx x n_vocab logits array when asked for more than the last
row (see the reference doc); a speculative loop needs logits only at the verified
positions, so this layer builds its own batches and reads just those rows.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, overload

import llama_cpp  # noqa: E402  (after the stdlib: its import prints nothing by itself)
import numpy as np

from spectui.errors import UserError
from spectui.llama import runtime
from spectui.llama import sampling as smp
from spectui.llama.context_params import ContextParams, check_params, llama_params
from spectui.llama.model import Model

T = TypeVar("T")
R = TypeVar("R")  # a row as LazyRows reads it
K = TypeVar("K")  # what Context._decode keeps of a chunk

# llama_get_logits as a bare address: llama_cpp's binding returns a POINTER(c_float), and
# numpy's as_array makes a new ctypes type from it on every call, a quarter of a greedy
# round's Python time (py-spy) once a weight pass has emptied the caches.
_logits_address = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(("llama_get_logits", llama_cpp.llama_cpp._lib))
# The same for output row i's logits, and a backend top-k's candidates and their logits.
_logits_ith_address, _candidates_address, _candidate_logits_address = (
    ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)((name, llama_cpp.llama_cpp._lib))
    for name in ("llama_get_logits_ith", "llama_get_sampled_candidates_ith", "llama_get_sampled_logits_ith")
)


# numpy dtypes of the ctypes types read in place: given the ctypes type, numpy works the
# dtype out anew each call (docs/performance.md).
_DTYPES = {ctypes.c_float: np.dtype(np.float32), ctypes.c_int32: np.dtype(np.int32)}


def array_at(at: int, ctype, count: int) -> np.ndarray:
    """`count` values of a ctypes type at address `at`, as a numpy view (no copy)."""
    return np.frombuffer((ctype * count).from_address(at), dtype=_DTYPES[ctype])


class ContextFull(Exception):
    """The context has no room for the tokens asked to decode."""


def until_rejection(picks: Sequence[int], tokens: Sequence[int]) -> list[int]:
    """The target's greedy picks for `tokens` (the last sampled token, then a draft) up to
    and with the first that is not the next token: the accepted draft, then the target's own.
    Picks are read in order and none after that one (lazy rows are never taken)."""
    out: list[int] = []
    for i in range(len(picks)):
        out.append(picks[i])
        if i + 1 < len(tokens) and out[-1] != tokens[i + 1]:
            break
    return out


class LazyRows(Sequence[T], Generic[R, T]):
    """take(row) of each row of a logits view, computed when first indexed."""

    def __init__(self, rows: np.ndarray | Sequence[R], take: Callable[[R], T]):
        self._rows, self._take = rows, take
        self._taken: dict[int, T] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i: int) -> T:  # type: ignore[override]  # rows are indexed, never sliced
        if i not in self._taken:
            self._taken[i] = self._take(self._rows[i])
        return self._taken[i]


def _on_backend(model: Model, backend_sampling: str) -> bool:
    """Whether greedy's argmax and top-k run in llama.cpp's graph (-bs), said in the log. On a GPU
    that saves copying each row of the vocabulary to the host; on a CPU ggml's one-thread argmax
    and partial sort are no faster than numpy, so the rows stay in numpy there. auto stays off on
    a Vulkan device too: llama.cpp's sampled decodes there read freed memory after some sequences
    of decodes (docs/gpu.md)."""
    on = backend_sampling == "on" or (backend_sampling == "auto" and model.output_on_gpu and not model.on_vulkan)
    runtime.note(
        f"{model.path.name}: greedy's argmax and top-k {'on the backend' if on else 'in numpy'} "
        f"(-bs {backend_sampling}{', the output layer is on the CPU' * (not model.output_on_gpu)}"
        f"{', on Vulkan' * (model.output_on_gpu and model.on_vulkan)})"
    )
    return on


class Context:
    """A llama.cpp context whose KV cache mirrors `self.tokens` (position i holds tokens[i]).

    `decode` appends, `truncate` rolls back; nothing else touches the KV cache, so the
    mirror stays exact and a new turn can reuse the longest common prefix.
    """

    def __init__(
        self,
        model: Model,
        params: ContextParams = ContextParams(),
        *,
        other: Context | None = None,
        mtp: bool = False,
    ):
        """`other`: the target context a hidden-state draft reads (llama.cpp's ctx_other);
        `mtp`: a context that runs the target model's own NextN layers (draft-mtp)."""
        check_params(params, model.n_ctx_train, model.path.name)
        self.model = model
        self.params = params
        cp = llama_params(params)
        if other is not None:
            cp.ctx_other = other.ptr
        if mtp:
            cp.ctx_type = llama_cpp.LLAMA_CONTEXT_TYPE_MTP
        runtime.forget_errors()
        self.ptr: llama_cpp.llama_context_p | None = llama_cpp.llama_init_from_model(model.ptr, cp)  # None: closed
        if not self.ptr:
            why = runtime.last_error() or "out of memory?"
            raise UserError(f"cannot create a context of {params.n_ctx} tokens for {model.path.name}: {why}")
        self.n_ctx = llama_cpp.llama_n_ctx(self.ptr)
        self.n_batch = llama_cpp.llama_n_batch(self.ptr)
        runtime.note_threads(model.path.name, cp.n_threads, bool(params.n_threads))
        self.sample_on_backend = _on_backend(model, params.backend_sampling)
        self.n_vocab = model.n_vocab
        self.n_ubatch = llama_cpp.llama_n_ubatch(self.ptr)
        self.tokens: list[int] = []
        # Seconds spent inside llama.cpp's calls, all told: decode, and the reads and removals
        # after it (llama_get_logits waits for a GPU's computation to finish)
        self.t_llama = 0.0
        # Called with (tokens, first position) after each decoded batch: hidden-state
        # drafters read the target's layer rows of that batch before the next decode.
        self.on_batch: Callable[[Sequence[int], int], None] | None = None
        self._mem = llama_cpp.llama_get_memory(self.ptr)
        self._batch = llama_cpp.llama_batch_init(self.n_batch, 0, 1)
        # Every entry is in sequence 0 alone: set once. The fields a decode fills are kept as
        # pointers (reading one off the struct builds a new pointer object, dearer than the store).
        n_seq_id, seq_id = self._batch.n_seq_id, self._batch.seq_id
        for i in range(self.n_batch):
            n_seq_id[i] = 1
            seq_id[i][0] = 0
        self._batch_fields = (self._batch.token, self._batch.pos, self._batch.logits)
        self._views: dict[int, np.ndarray] = {}  # rows -> a view of the logits buffer at _views_at
        self._views_at = 0
        # Tokens no row may choose: their logits read -inf, as llama.cpp's logit bias -INFINITY
        # makes them (the target's end-of-generation tokens under --ignore-eos)
        self.banned: np.ndarray | None = None
        # llama.cpp's sampler chain on the backend, attached while decode_argmax (top-k 0: greedy)
        # or decode_dists (top-k k) is in use, for the ban list `_chain_banned`; None when detached
        self._chain: llama_cpp.llama_sampler_p | None = None
        self._chain_banned: np.ndarray | None = None
        self._chain_top_k = 0

    def close(self) -> None:
        if getattr(self, "ptr", None):
            self._detach_chain()
            llama_cpp.llama_batch_free(self._batch)
            llama_cpp.llama_free(self.ptr)
            self.ptr = None

    @property
    def n_past(self) -> int:
        return len(self.tokens)

    def common_prefix(self, tokens: Sequence[int]) -> int:
        n = min(len(self.tokens), len(tokens))
        if self.tokens[:n] == list(tokens[:n]):  # the usual case, compared in C
            return n
        return next(i for i, (a, b) in enumerate(zip(self.tokens, tokens)) if a != b)

    def truncate(self, n: int) -> None:
        """Forget KV positions n.. (rollback of rejected drafts, or a changed history)."""
        t0 = time.perf_counter()
        removed = llama_cpp.llama_memory_seq_rm(self._mem, 0, n, -1)
        self.t_llama += time.perf_counter() - t0
        if not removed:
            raise RuntimeError(f"llama.cpp could not remove KV positions {n}..")
        del self.tokens[n:]

    def decode(self, tokens: Sequence[int], want: Sequence[int] = ()) -> np.ndarray:
        """Append `tokens` at the next positions; return logits rows for the indices in
        `want` (ascending, into `tokens`) as a (len(want), n_vocab) float32 array."""
        rows = self._decode(tokens, want, np.copy)
        if not rows:
            return np.empty((0, self.n_vocab), dtype=np.float32)
        return rows[0] if len(rows) == 1 else np.concatenate(rows)

    def decode_argmax(self, tokens: Sequence[int], want: Sequence[int], match: bool = False) -> list[int]:
        """As decode(), but only each wanted row's argmax: all greedy decoding needs. With
        sample_on_backend, llama.cpp's greedy sampler takes it in the graph, so no row of the
        vocabulary leaves a GPU; otherwise (or where the backend cannot sample) numpy takes it
        from the rows read in place, none copied.

        `match`: `tokens` are the last sampled token and a draft, every row wanted, and only
        the rows up to the first whose argmax is not the next token count (greedy
        verification, until_rejection): numpy reads no row after it (lazy rows), which for a
        long n-gram draft rejected early is most of them."""
        if self.sample_on_backend and self._attach_chain(0):
            picks = [t for part in self._decode(tokens, want, None) for t in part]
            return until_rejection(picks, tokens) if match else picks
        if match and len(tokens) > 1:  # (no draft: nothing to reject, the plain path is cheaper)
            return until_rejection(self.decode_each(tokens, want, lambda row: int(row.argmax()), lazy=True), tokens)
        return [i for part in self._decode(tokens, want, lambda rows: rows.argmax(axis=1)) for i in part.tolist()]

    def decode_dists(
        self, tokens: Sequence[int], want: Sequence[int], params: smp.SamplingParams
    ) -> Sequence[smp.Dist]:
        """As decode(), but each wanted row's sampling.dist under `params`, computed when first
        indexed: a verifier that stops at the first rejection takes no more. With
        sample_on_backend (and temperature > 0), llama.cpp's top-k sampler picks each row's k
        candidates in the graph, and only their ids and logits come back, not a row of the
        vocabulary; the rest of the chain runs on those k (dist_of_candidates)."""
        if (
            self.sample_on_backend
            and not params.greedy
            and 0 < params.top_k < self.n_vocab
            and self._attach_chain(params.top_k)
        ):
            found: list[tuple[np.ndarray, np.ndarray]] = [c for part in self._decode(tokens, want, None) for c in part]
            return LazyRows(found, lambda c: smp.dist_of_candidates(*c, params, self.n_vocab))
        return self.decode_each(tokens, want, lambda row: smp.dist(row, params), lazy=True)

    def decode_each(
        self, tokens: Sequence[int], want: Sequence[int], take: Callable[[np.ndarray], T], lazy: bool = False
    ) -> Sequence[T]:
        """As decode(), but `take` of each wanted row, read in place (no row is copied).

        `lazy`: each row is taken when first indexed, so a verifier that stops at the first
        rejection never takes the rows after it (a distribution costs a pass over the
        vocabulary). Index it before the next decode: the rows are views into llama.cpp's
        buffer. A batch of more than one chunk is taken eagerly."""
        if lazy and len(tokens) <= self.n_batch:
            parts = self._decode(tokens, want, lambda rows: LazyRows(rows, take))
            return parts[0] if parts else []
        return [x for part in self._decode(tokens, want, lambda rows: [take(row) for row in rows]) for x in part]

    @overload
    def _decode(self, tokens: Sequence[int], want: Sequence[int], take: Callable[[np.ndarray], K]) -> list[K]: ...

    @overload
    def _decode(self, tokens: Sequence[int], want: Sequence[int], take: None) -> list[list[Any]]: ...

    def _decode(
        self, tokens: Sequence[int], want: Sequence[int], take: Callable[[np.ndarray], K] | None
    ) -> list[K] | list[list[Any]]:
        """Decode in n_batch chunks; `take` gets each chunk's wanted rows as a view into
        llama.cpp's buffer (valid until the next decode) and returns what to keep. With
        take None, each chunk keeps what the attached chain found at its wanted rows: the greedy
        chain's tokens, or the top-k chain's (candidate ids ascending, their logits)."""
        n0 = len(self.tokens)
        if n0 + len(tokens) > self.n_ctx:
            raise ContextFull(f"{n0 + len(tokens)} > {self.n_ctx}")
        if take is not None and want and self._chain is not None:
            self._detach_chain()  # with a chain attached, llama.cpp copies out no logits
        elif not want and self.sample_on_backend and self._chain is None:
            # A chain attached after a decode that had neither outputs nor a chain makes llama.cpp's
            # next sampled decode on a GPU device write out of bounds (an abort on Vulkan, docs/gpu.md):
            # a decode without outputs keeps one attached, which costs nothing without outputs.
            self._attach_chain(self._chain_top_k)
        want_set = set(want)
        kept: list[Any] = []
        b = self._batch
        token_p, pos_p, output_p = self._batch_fields
        for start in range(0, len(tokens), self.n_batch):
            chunk = tokens[start : start + self.n_batch]
            outs = []
            for i, tok in enumerate(chunk):
                token_p[i] = tok
                pos_p[i] = n0 + start + i
                out = (start + i) in want_set
                output_p[i] = out
                if out:
                    outs.append(i)
            b.n_tokens = len(chunk)
            t0 = time.perf_counter()
            rc = llama_cpp.llama_decode(self.ptr, b)
            self.t_llama += time.perf_counter() - t0
            if rc == 1:
                self.truncate(n0 + start)
                raise ContextFull("no KV slot")
            if rc != 0:
                self.truncate(n0 + start)
                raise RuntimeError(f"llama_decode failed with status {rc}")
            self.tokens.extend(chunk)
            if outs:
                if take is None:
                    kept.append([self.candidates(i) for i in outs] if self._chain_top_k else self._sampled_tokens(outs))
                else:
                    rows = self._logits(len(outs))
                    if self.banned is not None:
                        rows[:, self.banned] = -np.inf
                    kept.append(take(rows))
            if self.on_batch is not None:
                self.on_batch(chunk, n0 + start)
        return kept

    def _sampled_tokens(self, outs: list[int]) -> list[int]:
        t0 = time.perf_counter()
        picks = [llama_cpp.llama_get_sampled_token_ith(self.ptr, i) for i in outs]
        self.t_llama += time.perf_counter() - t0
        return picks

    def sample_top_k(self, k: int) -> bool:
        """With sample_on_backend, attach llama.cpp's top-k sampler for good: a hidden-state
        draft's own sampler, as llama.cpp's drafts offload theirs (--spec-draft-backend-sampling).
        Each output row then gives only candidates(i), not logits. False where it is not."""
        return self.sample_on_backend and self._attach_chain(k)

    def candidates(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Batch row i's top-k candidates from the attached chain (ids ascending, int64) and
        their logits, copied."""
        k = self._chain_top_k
        t0 = time.perf_counter()
        at_ids, at_logits = _candidates_address(self.ptr, i), _candidate_logits_address(self.ptr, i)
        self.t_llama += time.perf_counter() - t0
        if not (at_ids and at_logits):
            raise RuntimeError(f"llama.cpp's top-k chain gave no candidates for batch row {i}")
        ids, logits = array_at(at_ids, ctypes.c_int32, k), array_at(at_logits, ctypes.c_float, k)
        order = ids.argsort()
        return ids[order].astype(np.int64), logits[order]

    def _attach_chain(self, top_k: int) -> bool:
        """Attach llama.cpp's greedy chain (top_k 0) or top-k chain, after a logit bias of -inf
        on the banned tokens, to sequence 0, or keep the one attached for the same settings.
        False where the backend cannot sample (llama.cpp then warns once in its log): the
        rows stay in numpy from then on."""
        if self._chain is not None and self._chain_banned is self.banned and self._chain_top_k == top_k:
            return True
        self._detach_chain()
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        if self.banned is not None and len(self.banned):
            biases = (llama_cpp.llama_logit_bias * len(self.banned))(
                *(llama_cpp.llama_logit_bias(int(t), -np.inf) for t in self.banned)
            )
            llama_cpp.llama_sampler_chain_add(
                chain, llama_cpp.llama_sampler_init_logit_bias(self.n_vocab, len(self.banned), biases)
            )
        llama_cpp.llama_sampler_chain_add(
            chain, llama_cpp.llama_sampler_init_top_k(top_k) if top_k else llama_cpp.llama_sampler_init_greedy()
        )
        if not llama_cpp.llama_set_sampler(self.ptr, 0, chain):
            llama_cpp.llama_sampler_free(chain)
            self.sample_on_backend = False
            return False
        self._chain, self._chain_banned, self._chain_top_k = chain, self.banned, top_k
        return True

    def _detach_chain(self) -> None:
        if self._chain is not None:
            llama_cpp.llama_set_sampler(self.ptr, 0, None)
            llama_cpp.llama_sampler_free(self._chain)
            self._chain = self._chain_banned = None
            self._chain_top_k = 0

    def _logits(self, n_out: int) -> np.ndarray:
        """The last batch's n_out logits rows, a view into llama.cpp's buffer. Views are
        kept while the buffer stays where it is (llama.cpp moves it only to grow it)."""
        t0 = time.perf_counter()
        at = _logits_address(self.ptr)
        self.t_llama += time.perf_counter() - t0
        if at != self._views_at:
            self._views, self._views_at = {}, at
        view = self._views.get(n_out)
        if view is None:
            view = self._views[n_out] = array_at(at, ctypes.c_float, n_out * self.n_vocab).reshape(n_out, self.n_vocab)
        return view

    # Position-driven use: a hidden-state draft's context holds (token, hidden row) pairs
    # that no token list describes, so its drafter places them itself (llama_ext.ExtBatch)
    # and leaves `tokens` empty.

    def forget_from(self, pos: int) -> None:
        """Drop KV positions pos.. (llama_memory_seq_rm)."""
        t0 = time.perf_counter()
        llama_cpp.llama_memory_seq_rm(self._mem, 0, pos, -1)
        self.t_llama += time.perf_counter() - t0

    def pos_max(self) -> int:
        """The highest position in the KV cache, -1 when empty."""
        return llama_cpp.llama_memory_seq_pos_max(self._mem, 0)

    def logits_at(self, i: int) -> np.ndarray:
        """The logits of output row i of the last batch (a view: copy to keep)."""
        t0 = time.perf_counter()
        at = _logits_ith_address(self.ptr, i)
        self.t_llama += time.perf_counter() - t0
        if not at:
            raise RuntimeError(f"no logits for batch row {i}")
        return array_at(at, ctypes.c_float, self.n_vocab)
