"""llama.cpp's hidden-state API, bound in one place.

The hidden-state drafts (EAGLE-3, DFlash, DSpark, MTP) need what `src/llama-ext.h` stages:
the target's layer inputs and NextN rows, and the draft model's extract-layer ids. libllama
exports those as C++ symbols, so they are looked up by their mangled names, as
llama-cpp-python's own `llama_cpp_ext` does. They also need the extended batch
(`llama_process`, a token paired with an embedding row), which is public C API but new.

Nothing here is resolved at import: a llama-cpp-python build without these symbols keeps
every other spec type working, and `require()` names the missing symbol in one line.
"""

from __future__ import annotations

import ctypes
import time
from importlib.metadata import PackageNotFoundError, version
from typing import cast, overload

import llama_cpp
import numpy as np

from spectui.errors import UserError
from spectui.llama.context import array_at

_ctx = llama_cpp.llama_context_p_ctypes
_model = llama_cpp.llama_model_p_ctypes


def _data_field(embd: llama_cpp.llama_embd) -> ctypes.c_void_p:
    """llama_embd's data pointer as a c_void_p over the struct's own memory."""
    offset = llama_cpp.llama_embd.data.offset  # type: ignore[attr-defined]  # a CField on the class
    return ctypes.c_void_p.from_buffer(embd, offset)


# name -> (mangled Itanium name, argtypes, restype): the staging API of src/llama-ext.h.
_EXT = {
    "llama_set_embeddings_layer_inp": (
        "_Z30llama_set_embeddings_layer_inpP13llama_contextjb",
        [_ctx, ctypes.c_uint32, ctypes.c_bool],
        None,
    ),
    "llama_get_embeddings_layer_inp": (
        "_Z30llama_get_embeddings_layer_inpP13llama_contextj",
        [_ctx, ctypes.c_uint32],
        ctypes.c_void_p,
    ),
    "llama_set_embeddings_nextn": (
        "_Z26llama_set_embeddings_nextnP13llama_contextbb",
        [_ctx, ctypes.c_bool, ctypes.c_bool],
        None,
    ),
    "llama_get_embeddings_nextn": ("_Z26llama_get_embeddings_nextnP13llama_context", [_ctx], ctypes.c_void_p),
    "llama_get_embeddings_nextn_ith": (
        "_Z30llama_get_embeddings_nextn_ithP13llama_contexti",
        [_ctx, ctypes.c_int32],
        ctypes.c_void_p,
    ),
    "llama_set_nextn_layer_offset": ("_Z28llama_set_nextn_layer_offsetP13llama_contexti", [_ctx, ctypes.c_int32], None),
    "llama_get_ctx_other": ("_Z19llama_get_ctx_otherP13llama_context", [_ctx], ctypes.c_void_p),
    "llama_model_target_layer_ids": (
        "_Z28llama_model_target_layer_idsPK11llama_model",
        [_model],
        ctypes.POINTER(ctypes.c_int32),
    ),
    "llama_model_target_layer_ids_n": ("_Z30llama_model_target_layer_ids_nPK11llama_model", [_model], ctypes.c_uint32),
    "llama_model_dflash_selector_top_k": (
        "_Z33llama_model_dflash_selector_top_kPK11llama_model",
        [_model],
        ctypes.c_int32,
    ),
}
# Public C API that older llama-cpp-python builds lack.
_PUBLIC = (
    "llama_process",
    "llama_batch_ext_init",
    "llama_batch_ext_free",
    "llama_batch_ext_clear",
    "llama_batch_ext_add_token",
    "llama_batch_ext_add_embd",
    "llama_batch_ext_set_embd_token",
    "llama_batch_ext_set_pos",
    "llama_batch_ext_set_output_logits",
    "llama_model_n_layer_nextn",
    "llama_vocab_mask",
    "llama_model_n_embd_out",
    "llama_set_causal_attn",
)
MIN_VERSION = "0.3.36"

_fns: dict[str, object] = {}
_missing: str | None = None


def _resolve() -> str | None:
    """Bind every symbol once; the first one missing, or None."""
    for name, (mangled, argtypes, restype) in _EXT.items():
        for symbol in (name, mangled):
            fn = getattr(llama_cpp.llama_cpp._lib, symbol, None)
            if fn is not None:
                fn.argtypes, fn.restype = argtypes, restype
                _fns[name] = fn
                break
        else:
            return name
    for name in _PUBLIC:
        fn = getattr(llama_cpp, name, None)
        if fn is None:
            return name
        _fns[name] = fn
    return None


def _llama_cpp_version() -> str:
    try:
        return version("llama-cpp-python")
    except PackageNotFoundError:
        return getattr(llama_cpp, "__version__", "?")


def missing() -> str | None:
    """One line saying which symbol this llama-cpp-python lacks, or None when all are there."""
    global _missing
    if not _fns and _missing is None:
        _missing = _resolve() or ""
    if not _missing:
        return None
    return (
        f"llama-cpp-python {_llama_cpp_version()} lacks llama.cpp's {_missing}, which hidden-state "
        f"drafts need; install llama-cpp-python>={MIN_VERSION}"
    )


def require() -> None:
    if (why := missing()) is not None:
        raise UserError(why)


def fn(name: str):
    """The bound function `name` (after require())."""
    return _fns[name]


# --- reading rows ----------------------------------------------------------------


def rows(ctx, getter: str, n_rows: int, n_embd: int, *args) -> np.ndarray:
    """A float32 view of the n_rows x n_embd values that `getter` (one of the
    llama_get_embeddings_* above, called with ctx.ptr and args) returns, valid until the next
    llama.cpp call. The getter waits for the computation (on a GPU, the decode runs on after
    llama_process returns), so its time counts in ctx.t_llama, as a logits read does."""
    t0 = time.perf_counter()
    at = fn(getter)(ctx.ptr, *args)
    ctx.t_llama += time.perf_counter() - t0
    if not at:
        raise RuntimeError(f"llama.cpp returned no hidden-state rows ({getter})")
    return array_at(at, ctypes.c_float, n_rows * n_embd).reshape(n_rows, n_embd)


def target_layer_ids(model_ptr) -> list[int]:
    n = fn("llama_model_target_layer_ids_n")(model_ptr)
    ids = fn("llama_model_target_layer_ids")(model_ptr)
    return [ids[i] for i in range(n)] if n and ids else []


def is_mrope(model_ptr) -> bool:
    """M-RoPE models take several position rows per embedding entry."""
    return llama_cpp.llama_model_rope_type(model_ptr) == llama_cpp.LLAMA_ROPE_TYPE_MROPE


# --- the extended batch ------------------------------------------------------------


class ExtBatch:
    """llama.cpp's llama_batch_ext, as common_batch fills it: entries are a token, a token
    with an embedding row, or an embedding row alone. The rows are kept alive until the
    batch is cleared, since llama.cpp only keeps a view of them. An entry is 3-4 calls into
    llama.cpp, made every round for each verified and drafted token, so the functions are
    bound once and the position buffer is reused (llama_batch_ext_set_pos copies it)."""

    def __init__(self, ctx_ptr: llama_cpp.llama_context_p) -> None:
        self.ptr = fn("llama_batch_ext_init")(ctx_ptr)
        self._keep: list[np.ndarray] = []
        self.size = 0
        self._pos = (llama_cpp.llama_pos * 4)()
        self._add_token, self._add_embd, self._set_pos, self._set_embd, self._set_output = (
            fn(f"llama_batch_ext_{name}")
            for name in ("add_token", "add_embd", "set_pos", "set_embd_token", "set_output_logits")
        )

    def clear(self) -> None:
        fn("llama_batch_ext_clear")(self.ptr)
        self._keep.clear()
        self.size = 0

    def _embd(self, row: np.ndarray) -> llama_cpp.llama_embd:
        row = np.ascontiguousarray(row, dtype=np.float32)
        self._keep.append(row)
        embd = llama_cpp.llama_embd(n_rows=1, n_embd=row.shape[-1])
        _data_field(embd).value = row.ctypes.data  # half the cost of building a POINTER(c_float)
        return embd

    @overload
    def add(self, token: int, pos: int, output: bool, embd: np.ndarray | None = None, n_pos: int = 1) -> int: ...

    @overload
    def add(self, token: None, pos: int, output: bool, embd: np.ndarray, n_pos: int = 1) -> int: ...

    def add(self, token: int | None, pos: int, output: bool, embd: np.ndarray | None = None, n_pos: int = 1) -> int:
        """Append one entry at position `pos` (n_pos copies for M-RoPE); its batch index."""
        idx = (
            self._add_embd(self.ptr, 0, self._embd(cast(np.ndarray, embd)))  # no token: embd given (overloads)
            if token is None
            else self._add_token(self.ptr, 0, token)
        )
        if idx < 0:
            raise RuntimeError(f"llama_batch_ext refused an entry (error {idx})")
        positions = self._pos
        for i in range(4):
            positions[i] = pos if i < n_pos and i < 3 else 0
        self._set_pos(self.ptr, idx, positions)
        if token is not None and embd is not None:
            self._set_embd(self.ptr, idx, self._embd(embd))
        if output:
            self._set_output(self.ptr, idx, True)
        self.size += 1
        return idx

    def process(self, ctx, encode: bool = False) -> None:
        """Run the batch on `ctx` (a model.Context), counting the time in its t_llama."""
        kind = llama_cpp.LLAMA_PROCESS_TYPE_ENCODE if encode else llama_cpp.LLAMA_PROCESS_TYPE_DECODE
        t0 = time.perf_counter()
        rc = fn("llama_process")(ctx.ptr, kind, self.ptr)
        ctx.t_llama += time.perf_counter() - t0
        if rc != 0:
            raise RuntimeError(f"llama_process failed with status {rc}")

    def free(self) -> None:
        if self.ptr:
            fn("llama_batch_ext_free")(self.ptr)
            self.ptr = None
