"""The only module that talks to llama.cpp: models, contexts, tokens and logits.

A thin layer over llama-cpp-python's low-level `llama_cpp` API. The high-level
`Llama` class keeps an n_ctx x n_vocab logits array when asked for more than the last
row (see the reference doc); a speculative loop needs logits only at the verified
positions, so this layer builds its own batches and reads just those rows.
"""

from __future__ import annotations

import codecs
import ctypes
import functools
import os
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO, TypeVar

import numpy as np

from spectui.engine import sampling as smp
from spectui.errors import UserError

import llama_cpp  # noqa: E402  (after the stdlib: its import prints nothing by itself)

T = TypeVar("T")

# llama_get_logits as a bare address: llama_cpp's binding returns a POINTER(c_float), and
# numpy's as_array makes a new ctypes type from it on every call, a quarter of a greedy
# round's Python time (py-spy) once a weight pass has emptied the caches.
_logits_address = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(("llama_get_logits", llama_cpp.llama_cpp._lib))
# The same for output row i's logits, and a backend top-k's candidates and their logits.
_logits_ith_address, _candidates_address, _candidate_logits_address = (
    ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)((name, llama_cpp.llama_cpp._lib))
    for name in ("llama_get_logits_ith", "llama_get_sampled_candidates_ith", "llama_get_sampled_logits_ith"))


# numpy dtypes of the ctypes types read in place: given the ctypes type, numpy works the
# dtype out anew each call (4.6 us a call here; 1.0 us with the dtype given).
_DTYPES = {ctypes.c_float: np.dtype(np.float32), ctypes.c_int32: np.dtype(np.int32)}


def array_at(at: int, ctype, count: int) -> np.ndarray:
    """`count` values of a ctypes type at address `at`, as a numpy view (no copy)."""
    return np.frombuffer((ctype * count).from_address(at), dtype=_DTYPES[ctype])


# KV cache types for --cache-type-k/-v (llama.cpp's names and ggml type ids).
KV_CACHE_TYPES = {
    "f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8,
    "iq4_nl": 20, "bf16": 30,
}
FLASH_ATTN = {"auto": -1, "off": 0, "on": 1}
BACKEND_SAMPLING = ("auto", "on", "off")
# llama.cpp pads a context to a multiple of 256 cells: a smaller one would silently be 256.
MIN_CTX = 256


class ContextFull(Exception):
    """The context has no room for the tokens asked to decode."""


# --- logging -------------------------------------------------------------------------

_recent_errors: deque[str] = deque(maxlen=8)
_log_sink: TextIO | None = None


@llama_cpp.llama_log_callback
def _on_log(level: int, text: bytes, _user_data) -> None:
    msg = text.decode("utf-8", "replace")
    if level in (2, 3):  # warn, error: kept to explain a failed load
        _recent_errors.append(msg.strip())
    if _log_sink is not None:
        _log_sink.write(msg)


def configure_logging(verbose: bool = False, log_file: Path | None = None) -> None:
    """Silence llama.cpp unless `--verbose` (stderr) or a log file asks for its output."""
    global _log_sink
    try:
        _log_sink = open(log_file, "a", encoding="utf-8") if log_file else (sys.stderr if verbose else None)
    except OSError as e:
        raise UserError(f"cannot write the log file {log_file}: {e.strerror or e}") from e


llama_cpp.llama_log_set(_on_log, ctypes.c_void_p(0))
llama_cpp.llama_backend_init()


def _last_error() -> str:
    for msg in reversed(_recent_errors):
        if msg and "error" in msg.lower():
            return msg
    return _recent_errors[-1] if _recent_errors else ""


OPENMP_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS", "OMP_PROC_BIND")


def openmp_settings() -> dict:
    """The OpenMP settings llama.cpp's threads run with, and who chose them."""
    from spectui import OPENMP_DEFAULTED

    return {**{k: os.environ.get(k) for k in OPENMP_VARIABLES}, "chosen_by": "spectui" if OPENMP_DEFAULTED else "you"}


def _note(text: str) -> None:
    """A line of spectui's own in llama.cpp's log (shown by --verbose or a log file)."""
    if _log_sink is not None:
        _log_sink.write(f"spectui: {text}\n")


def usable_cores() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def default_threads() -> int:
    """llama.cpp uses the physical cores; on small machines that is every CPU we have."""
    n = usable_cores()
    return n if n <= 4 else n // 2


# --- model ---------------------------------------------------------------------------


def check_gguf_file(path: Path) -> None:
    """A clear error for a path that is not a GGUF file at all."""
    if not path.exists():
        raise UserError(f"model file not found: {path}")
    if not path.is_file():
        raise UserError(f"model path is not a file: {path}")
    size = path.stat().st_size
    if size == 0:
        raise UserError(f"model file is empty: {path}")
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        raise UserError(f"not a GGUF model file (bad magic {magic!r}): {path}")


class Model:
    """A loaded GGUF model: vocabulary, metadata and chat template."""

    def __init__(self, path: str | os.PathLike, n_gpu_layers: int = -1, vocab_only: bool = False,
                 progress: Callable[[float], None] | None = None):
        """`progress(fraction)`: called as llama.cpp loads the weights (a UI's progress bar)."""
        self.path = Path(path)
        check_gguf_file(self.path)
        params = llama_cpp.llama_model_default_params()
        params.n_gpu_layers = n_gpu_layers
        params.vocab_only = vocab_only  # enough for the tokenizer and the compatibility check
        params.load_mtp = True  # a target's NextN layers, if it has any, for draft-mtp
        if progress is not None:  # kept in a local until the load returns: ctypes must not free it
            on_progress = llama_cpp.llama_progress_callback(lambda fraction, _data: progress(fraction) or True)
            params.progress_callback = on_progress
        _recent_errors.clear()
        ptr = llama_cpp.llama_model_load_from_file(str(self.path).encode(), params)
        if not ptr:
            why = _last_error() or "llama.cpp could not read it"
            raise UserError(f"cannot load model {self.path}: {why} (is the file truncated or corrupt?)")
        self.ptr = ptr
        self.vocab = llama_cpp.llama_model_get_vocab(ptr)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.n_ctx_train = llama_cpp.llama_model_n_ctx_train(ptr)
        self.arch = self.meta("general.architecture") or "?"
        self.name = self.meta("general.name") or self.path.stem
        self.size = llama_cpp.llama_model_size(ptr)
        self.n_embd = llama_cpp.llama_model_n_embd(ptr)
        self.n_layer = llama_cpp.llama_model_n_layer(ptr)
        self.n_params = llama_cpp.llama_model_n_params(ptr)
        # llama.cpp offloads the output layer last: only when more layers than the repeating ones go
        self.output_on_gpu = bool(llama_cpp.llama_supports_gpu_offload()) and (
            n_gpu_layers < 0 or n_gpu_layers > self.n_layer)
        self._pieces: dict[int, bytes] = {}
        self._eog: dict[int, bool] = {}

    def close(self) -> None:
        if getattr(self, "ptr", None):
            llama_cpp.llama_model_free(self.ptr)
            self.ptr = None

    def meta(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(4096)
        n = llama_cpp.llama_model_meta_val_str(self.ptr, key.encode(), buf, len(buf))
        if n < 0:
            return None
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            llama_cpp.llama_model_meta_val_str(self.ptr, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", "replace")

    @property
    def description(self) -> str:
        buf = ctypes.create_string_buffer(256)
        llama_cpp.llama_model_desc(self.ptr, buf, len(buf))
        return buf.value.decode("utf-8", "replace")

    # vocabulary

    @property
    def vocab_type(self) -> int:
        return llama_cpp.llama_vocab_type(self.vocab)

    @property
    def add_bos(self) -> bool:
        return bool(llama_cpp.llama_vocab_get_add_bos(self.vocab))

    @property
    def add_eos(self) -> bool:
        return bool(llama_cpp.llama_vocab_get_add_eos(self.vocab))

    @property
    def bos(self) -> int:
        return llama_cpp.llama_vocab_bos(self.vocab)

    @property
    def eos(self) -> int:
        return llama_cpp.llama_vocab_eos(self.vocab)

    def token_text(self, token: int) -> bytes:
        """The vocabulary entry as stored (used by the compatibility check)."""
        return llama_cpp.llama_vocab_get_text(self.vocab, token) or b""

    def is_eog(self, token: int) -> bool:
        r = self._eog.get(token)
        if r is None:
            r = self._eog[token] = bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))
        return r

    @functools.cached_property
    def eog_tokens(self) -> np.ndarray:
        """Every end-of-generation token, found as llama.cpp finds them for --ignore-eos (a
        scan of the vocabulary, once)."""
        is_eog, vocab = llama_cpp.llama_vocab_is_eog, self.vocab
        return np.array([t for t in range(self.n_vocab) if is_eog(vocab, t)], dtype=np.intp)

    def tokenize(self, text: str, add_special: bool = True, parse_special: bool = True) -> list[int]:
        data = text.encode("utf-8")
        n_max = len(data) + 8
        buf = (llama_cpp.llama_token * n_max)()
        n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, n_max, add_special, parse_special)
        if n < 0:
            buf = (llama_cpp.llama_token * -n)()
            n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, -n, add_special, parse_special)
        return list(buf[:n])

    def piece(self, token: int) -> bytes:
        """Bytes of one token as text (control tokens render as nothing)."""
        b = self._pieces.get(token)
        if b is None:
            buf = ctypes.create_string_buffer(64)
            n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
            if n < 0:
                buf = ctypes.create_string_buffer(-n)
                n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
            b = self._pieces[token] = buf.raw[:n]
        return b

    def detokenize(self, tokens: Sequence[int]) -> str:
        return b"".join(self.piece(t) for t in tokens).decode("utf-8", "replace")

    # chat

    def format_chat(self, messages: list[dict]) -> str:
        """The model's own chat template (GGUF metadata), ready for the assistant's turn."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = self.meta("tokenizer.chat_template") or _CHATML
        bos = self.piece(self.bos).decode("utf-8", "replace") if self.bos >= 0 else ""
        eos = self.piece(self.eos).decode("utf-8", "replace") if self.eos >= 0 else ""
        try:
            fmt = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
            return fmt(messages=messages).prompt
        except Exception as e:  # a broken template inside a user's GGUF
            raise UserError(f"the chat template of {self.path.name} failed: {e}") from e

    def tokenize_chat(self, messages: list[dict]) -> list[int]:
        text = self.format_chat(messages)
        bos_text = self.piece(self.bos).decode("utf-8", "replace") if self.add_bos else ""
        # Templates that write BOS themselves must not get a second one.
        add_special = not (bos_text and text.startswith(bos_text))
        return self.tokenize(text, add_special=add_special, parse_special=True)


_CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


class Detokenizer:
    """Incremental, UTF-8 safe: a token whose bytes end inside a character yields ""
    and its bytes are held until the character is complete (Korean, emoji)."""

    def __init__(self, model: Model):
        self.model = model
        self._dec = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, token: int) -> str:
        return self._dec.decode(self.model.piece(token))

    def peek(self, tokens: Sequence[int]) -> str:
        """Text these tokens would add, without consuming them (rejected drafts)."""
        state = self._dec.getstate()
        text = "".join(self._dec.decode(self.model.piece(t)) for t in tokens)
        self._dec.setstate(state)
        return text

    def flush(self) -> str:
        return self._dec.decode(b"", final=True)


# --- context -------------------------------------------------------------------------


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


class _LazyRows(Sequence):
    """take(row) of each row of a logits view, computed when first indexed."""

    def __init__(self, rows: np.ndarray, take: Callable[[np.ndarray], T]):
        self._rows, self._take, self._taken = rows, take, {}

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i: int):
        if i not in self._taken:
            self._taken[i] = self._take(self._rows[i])
        return self._taken[i]


@dataclass(frozen=True)
class ContextParams:
    n_ctx: int = 4096
    n_batch: int = 512
    n_threads: int = 0  # 0: default_threads()
    flash_attn: str = "auto"
    type_k: str = "f16"
    type_v: str = "f16"
    # greedy's argmax, or top-k's candidates, in llama.cpp's graph; auto: where the logits are on a GPU
    backend_sampling: str = "auto"


class Context:
    """A llama.cpp context whose KV cache mirrors `self.tokens` (position i holds tokens[i]).

    `decode` appends, `truncate` rolls back; nothing else touches the KV cache, so the
    mirror stays exact and a new turn can reuse the longest common prefix.
    """

    def __init__(self, model: Model, params: ContextParams = ContextParams(), *,
                 other: "Context | None" = None, mtp: bool = False):
        """`other`: the target context a hidden-state draft reads (llama.cpp's ctx_other);
        `mtp`: a context that runs the target model's own NextN layers (draft-mtp)."""
        if params.n_ctx > model.n_ctx_train:
            raise UserError(
                f"context size {params.n_ctx} is larger than {model.path.name} allows "
                f"({model.n_ctx_train}); use -c {model.n_ctx_train} or less"
            )
        for key in ("type_k", "type_v"):
            if getattr(params, key) not in KV_CACHE_TYPES:
                raise UserError(
                    f"unknown KV cache type '{getattr(params, key)}'; choose from {', '.join(KV_CACHE_TYPES)}"
                )
        if params.flash_attn not in FLASH_ATTN:
            raise UserError(f"-fa must be one of {', '.join(FLASH_ATTN)}, got '{params.flash_attn}'")
        if params.backend_sampling not in BACKEND_SAMPLING:
            raise UserError(f"-bs must be one of {', '.join(BACKEND_SAMPLING)}, got '{params.backend_sampling}'")
        self.model = model
        self.params = params
        cp = llama_cpp.llama_context_default_params()
        cp.n_ctx = params.n_ctx
        cp.n_batch = cp.n_ubatch = min(params.n_batch, params.n_ctx)
        cp.n_threads = cp.n_threads_batch = params.n_threads or default_threads()
        cp.flash_attn_type = FLASH_ATTN[params.flash_attn]
        cp.type_k = KV_CACHE_TYPES[params.type_k]
        cp.type_v = KV_CACHE_TYPES[params.type_v]
        cp.no_perf = True
        cp.n_outputs_max_per_seq = 0  # up to n_batch: greedy on the backend samples a whole verified batch
        if other is not None:
            cp.ctx_other = other.ptr
        if mtp:
            cp.ctx_type = llama_cpp.LLAMA_CONTEXT_TYPE_MTP
        _recent_errors.clear()
        self.ptr = llama_cpp.llama_init_from_model(model.ptr, cp)
        if not self.ptr:
            why = _last_error() or "out of memory?"
            raise UserError(f"cannot create a context of {params.n_ctx} tokens for {model.path.name}: {why}")
        self.n_ctx = llama_cpp.llama_n_ctx(self.ptr)
        self.n_batch = llama_cpp.llama_n_batch(self.ptr)
        omp = openmp_settings()
        waiting = ", ".join(f"{k}={omp[k]}" for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT") if omp[k] is not None)
        _note(f"{model.path.name}: {cp.n_threads} thread{'s' if cp.n_threads != 1 else ''} "
              f"({'-t' if params.n_threads else 'default: the physical cores'}), "
              f"{waiting or 'OpenMP defaults'} (chosen by {omp['chosen_by']})")
        # On a GPU the argmax or top-k in the graph saves copying each row of the vocabulary to the
        # host; on a CPU ggml's one-thread argmax and partial sort are no faster than numpy, so the
        # rows stay in numpy there.
        self.sample_on_backend = params.backend_sampling == "on" or (
            params.backend_sampling == "auto" and model.output_on_gpu)
        where = "on the backend" if self.sample_on_backend else "in numpy"
        _note(f"{model.path.name}: greedy's argmax and top-k {where} "
              f"(-bs {params.backend_sampling}{', the output layer is on the CPU' * (not model.output_on_gpu)})")
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
        # pointers (reading one off the struct builds a new pointer object: 4x the cost of a store).
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
        self._chain = None
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

    def decode_dists(self, tokens: Sequence[int], want: Sequence[int],
                     params: smp.SamplingParams) -> Sequence[smp.Dist]:
        """As decode(), but each wanted row's sampling.dist under `params`, computed when first
        indexed: a verifier that stops at the first rejection takes no more. With
        sample_on_backend (and temperature > 0), llama.cpp's top-k sampler picks each row's k
        candidates in the graph, and only their ids and logits come back, not a row of the
        vocabulary; the rest of the chain runs on those k (dist_of_candidates)."""
        if (self.sample_on_backend and not params.greedy and 0 < params.top_k < self.n_vocab
                and self._attach_chain(params.top_k)):
            found = [c for part in self._decode(tokens, want, None) for c in part]
            return _LazyRows(found, lambda c: smp.dist_of_candidates(*c, params, self.n_vocab))
        return self.decode_each(tokens, want, lambda row: smp.dist(row, params), lazy=True)

    def decode_each(self, tokens: Sequence[int], want: Sequence[int], take: Callable[[np.ndarray], T],
                    lazy: bool = False) -> Sequence[T]:
        """As decode(), but `take` of each wanted row, read in place (no row is copied).

        `lazy`: each row is taken when first indexed, so a verifier that stops at the first
        rejection never takes the rows after it (a distribution costs a pass over the
        vocabulary). Index it before the next decode: the rows are views into llama.cpp's
        buffer. A batch of more than one chunk is taken eagerly."""
        if lazy and len(tokens) <= self.n_batch:
            parts = self._decode(tokens, want, lambda rows: _LazyRows(rows, take))
            return parts[0] if parts else []
        return [x for part in self._decode(tokens, want, lambda rows: [take(row) for row in rows]) for x in part]

    def _decode(self, tokens: Sequence[int], want: Sequence[int],
                take: Callable[[np.ndarray], np.ndarray] | None) -> list:
        """Decode in n_batch chunks; `take` gets each chunk's wanted rows as a view into
        llama.cpp's buffer (valid until the next decode) and returns what to keep. With
        take None, each chunk keeps what the attached chain found at its wanted rows: the greedy
        chain's tokens, or the top-k chain's (candidate ids ascending, their logits)."""
        n0 = len(self.tokens)
        if n0 + len(tokens) > self.n_ctx:
            raise ContextFull(f"{n0 + len(tokens)} > {self.n_ctx}")
        if take is not None and want and self._chain is not None:
            self._detach_chain()  # with a chain attached, llama.cpp copies out no logits
        want_set = set(want)
        kept: list = []
        b = self._batch
        token_p, pos_p, output_p = self._batch_fields
        for start in range(0, len(tokens), self.n_batch):
            chunk = tokens[start:start + self.n_batch]
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
            if outs and take is None:
                kept.append([self.candidates(i) for i in outs] if self._chain_top_k else self._sampled_tokens(outs))
            elif outs:
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
                *(llama_cpp.llama_logit_bias(int(t), -np.inf) for t in self.banned))
            llama_cpp.llama_sampler_chain_add(
                chain, llama_cpp.llama_sampler_init_logit_bias(self.n_vocab, len(self.banned), biases))
        llama_cpp.llama_sampler_chain_add(
            chain, llama_cpp.llama_sampler_init_top_k(top_k) if top_k else llama_cpp.llama_sampler_init_greedy())
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
