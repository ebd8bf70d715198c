"""Context parameters, checked and made llama_context_params, apart from Context: the memory projection uses them."""

from __future__ import annotations

from dataclasses import dataclass

import llama_cpp

from spectui.errors import UserError
from spectui.llama import runtime

# KV cache types for --cache-type-k/-v (llama.cpp's names and ggml type ids).
KV_CACHE_TYPES = {
    "f32": 0,
    "f16": 1,
    "q4_0": 2,
    "q4_1": 3,
    "q5_0": 6,
    "q5_1": 7,
    "q8_0": 8,
    "iq4_nl": 20,
    "bf16": 30,
}
FLASH_ATTN = {"auto": -1, "off": 0, "on": 1}
BACKEND_SAMPLING = ("auto", "on", "off")
# llama.cpp pads a context to a multiple of 256 cells: a smaller one would silently be 256.
MIN_CTX = 256


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


def check_params(params: ContextParams, n_ctx_train: int, name: str) -> None:
    """One line for a context llama.cpp would refuse, or abort on, before it is created."""
    if params.n_ctx > n_ctx_train:
        raise UserError(
            f"context size {params.n_ctx} is larger than {name} allows ({n_ctx_train}); use -c {n_ctx_train} or less"
        )
    for key in ("type_k", "type_v"):
        if getattr(params, key) not in KV_CACHE_TYPES:
            raise UserError(f"unknown KV cache type '{getattr(params, key)}'; choose from {', '.join(KV_CACHE_TYPES)}")
    if params.flash_attn not in FLASH_ATTN:
        raise UserError(f"-fa must be one of {', '.join(FLASH_ATTN)}, got '{params.flash_attn}'")
    if params.backend_sampling not in BACKEND_SAMPLING:
        raise UserError(f"-bs must be one of {', '.join(BACKEND_SAMPLING)}, got '{params.backend_sampling}'")


def llama_params(params: ContextParams):
    """The llama_context_params a Context is created with (the memory projection uses the same)."""
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx = params.n_ctx
    cp.n_batch = cp.n_ubatch = min(params.n_batch, params.n_ctx)
    cp.n_threads = cp.n_threads_batch = params.n_threads or runtime.default_threads()
    cp.flash_attn_type = FLASH_ATTN[params.flash_attn]
    cp.type_k = KV_CACHE_TYPES[params.type_k]
    cp.type_v = KV_CACHE_TYPES[params.type_v]
    cp.no_perf = True
    cp.n_outputs_max_per_seq = 0  # up to n_batch: greedy on the backend samples a whole verified batch
    return cp
