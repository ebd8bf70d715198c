"""llama.cpp's own memory projection: what a model and its context would take, per device.

As `llama-fit-params` does: the model is loaded with `no_alloc` (metadata only; no weight is
read) and a context created on it, so llama.cpp simulates every allocation, and its memory
breakdown (`llama_get_memory_breakdown`, model / context / compute bytes per buffer type) is
summed per device, host buffers to the CPU. The same breakdown read from a real context is
what llama.cpp really allocated. A dry run cannot map the file, so the copy that mmap keeps
under repacked weights is added back (see breakdown).

The breakdown is a C++ std::map returned by value, which ctypes cannot call portably: it is
read where its layout is known, libstdc++ on x86-64 Linux (where llama-cpp-python builds with
GCC), and refused in one line elsewhere.
"""

from __future__ import annotations

import ctypes
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

import llama_cpp

from spectui import spec_types
from spectui.errors import UserError
from spectui.llama import devices, draft_fit, runtime
from spectui.llama.context_params import ContextParams, check_params, llama_params
from spectui.llama.gguf import check_gguf_file

_lib = llama_cpp.llama_cpp._lib
# libstdc++'s std::map on x86-64: 8 bytes of comparator, the header node (colour, parent =
# root, leftmost, rightmost), the node count; a node is that base (32 bytes), then its value.
_MAP_SIZE, _ROOT, _COUNT, _LEFT, _RIGHT, _VALUE = 48, 16, 40, 16, 24, 32


class _Entry(ctypes.Structure):
    """A std::pair<ggml_backend_buffer_type_t, llama_memory_breakdown_data>."""

    _fields_ = [
        ("buft", ctypes.c_void_p),
        ("model", ctypes.c_size_t),
        ("context", ctypes.c_size_t),
        ("compute", ctypes.c_size_t),
    ]


def _bind(name: str, argtypes: list, restype):
    fn = getattr(_lib, name)
    fn.argtypes, fn.restype = argtypes, restype
    return fn


_p = ctypes.c_void_p
_buft_is_host = _bind("ggml_backend_buft_is_host", [_p], ctypes.c_bool)
_buft_device = _bind("ggml_backend_buft_get_device", [_p], _p)


def unsupported() -> str | None:
    """Why the breakdown cannot be read on this platform, or None where it can."""
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
        return (
            f"spectui reads llama.cpp's memory projection on x86-64 Linux only, not {sys.platform} {platform.machine()}"
        )
    # libstdc++'s red-black tree: the std::map layout read below
    if getattr(_lib, "_ZSt18_Rb_tree_incrementPSt18_Rb_tree_node_base", None) is None:
        return "this llama-cpp-python is not built against libstdc++, whose std::map spectui reads"
    for name in ("_Z26llama_get_memory_breakdownPK13llama_context", "_Z21llama_model_n_devicesPK11llama_model"):
        if getattr(_lib, name, None) is None:
            return f"this llama-cpp-python lacks llama.cpp's {name}; install llama-cpp-python>=0.3.36"
    return None


@dataclass(frozen=True)
class DeviceBytes:
    """One device's share of a model and its context, in bytes, and its memory as llama.cpp sees it."""

    name: str  # llama.cpp's device name: "CPU", "CUDA0", ...
    description: str
    model: int
    context: int  # the KV cache (or recurrent state)
    compute: int  # the scheduler's compute buffers
    free: int  # as the backend reports it (ggml_backend_dev_memory); 0 where it cannot tell
    total: int

    @property
    def is_cpu(self) -> bool:
        return self.name == "CPU"

    @property
    def bytes(self) -> int:
        return self.model + self.context + self.compute


@dataclass(frozen=True)
class Footprint:
    """A model and its context: n_ctx as llama.cpp pads it, the layers, and the bytes per device
    (the GPUs in llama.cpp's order, the CPU last)."""

    path: Path
    n_ctx: int
    n_layer: int
    devices: tuple[DeviceBytes, ...]

    @property
    def bytes(self) -> int:
        return sum(d.bytes for d in self.devices)


def _entries(ctx_ptr) -> list[_Entry]:
    """llama_get_memory_breakdown(ctx): its std::map read, then its nodes freed."""
    fn = _bind("_Z26llama_get_memory_breakdownPK13llama_context", [_p, _p], _p)  # the map's address first (sret)
    free_node = _bind("_ZdlPv", [_p], None)  # operator delete: the map's nodes came from operator new
    buf = ctypes.create_string_buffer(_MAP_SIZE)
    fn(ctypes.addressof(buf), ctypes.cast(ctx_ptr, _p))
    count = ctypes.c_size_t.from_buffer(buf, _COUNT).value
    out: list[_Entry] = []
    nodes = [ctypes.c_void_p.from_buffer(buf, _ROOT).value]
    while nodes:
        node = nodes.pop()
        if not node or len(out) > count:
            continue
        out.append(_Entry.from_buffer_copy(ctypes.string_at(node + _VALUE, ctypes.sizeof(_Entry))))
        nodes += [ctypes.c_void_p.from_address(node + off).value for off in (_LEFT, _RIGHT)]
        free_node(node)
    if len(out) != count:
        raise RuntimeError(f"llama.cpp's memory breakdown read {len(out)} entries of {count}")
    return out


def _is_extra(buft, cpu) -> bool:
    """A CPU buffer type that holds repacked copies of weights (CPU_REPACK, AMX, ...): on the
    CPU device, yet not host memory that tensors can be read from as they are."""
    return not _buft_is_host(buft) and _buft_device(buft) == cpu


def breakdown(model_ptr, ctx_ptr, mapped: bool = False) -> tuple[DeviceBytes, ...]:
    """The model/context/compute bytes of a context per device, summed as common_fit does:
    host buffers count on the CPU, the others on their device. `mapped`: project the load the
    chat makes, with mmap (which a no_alloc load cannot simulate): the file stays mapped under
    the weights that were repacked into a buffer of their own, so those count twice."""
    n_dev = _bind("_Z21llama_model_n_devicesPK11llama_model", [_p], ctypes.c_int32)(ctypes.cast(model_ptr, _p))
    get_dev = _bind("_Z22llama_model_get_devicePK11llama_modeli", [_p, ctypes.c_int32], _p)
    devs = [get_dev(ctypes.cast(model_ptr, _p), i) for i in range(n_dev)]
    cpu = devices.cpu_handle()
    sums = {dev: [0, 0, 0] for dev in [*devs, cpu]}
    for e in _entries(ctx_ptr):
        dev = cpu if _buft_is_host(e.buft) else _buft_device(e.buft)
        if dev in sums:
            for i, size in enumerate((e.model, e.context, e.compute)):
                sums[dev][i] += size
            if mapped and _is_extra(e.buft, cpu):
                sums[cpu][0] += e.model
    out = []
    for dev in [*devs, cpu]:
        d = devices.of(dev)
        model, context, compute = sums[dev]
        out.append(
            DeviceBytes("CPU" if dev == cpu else d.name, d.description, model, context, compute, d.free, d.total)
        )
    return tuple(out)


class _NoAlloc:
    """A model loaded with no_alloc and a context on it, freed on exit."""

    def __init__(self, path: Path, n_gpu_layers: int, params: ContextParams, other=None):
        self.path, self.n_gpu_layers, self.params, self.other = path, n_gpu_layers, params, other
        self.model = self.ctx = None

    def __enter__(self) -> _NoAlloc:
        mp = llama_cpp.llama_model_default_params()
        mp.n_gpu_layers = self.n_gpu_layers
        mp.no_alloc = True
        mp.load_mode = llama_cpp.LLAMA_LOAD_MODE_NONE  # as llama-fit-params: a dry run with mmap aborts
        mp.load_mtp = True  # as Model loads it
        runtime.forget_errors()
        self.model = llama_cpp.llama_model_load_from_file(str(self.path).encode(), mp)
        if not self.model:
            why = runtime.last_error() or "llama.cpp could not read it"
            raise UserError(f"cannot load model {self.path}: {why} (is the file truncated or corrupt?)")
        cp = llama_params(self.params)
        if self.other is not None:
            cp.ctx_other = self.other
        runtime.forget_errors()
        self.ctx = llama_cpp.llama_init_from_model(self.model, cp)
        if not self.ctx:
            why = runtime.last_error() or "llama.cpp refused it"
            self.__exit__()
            raise UserError(f"cannot project a context of {self.params.n_ctx} tokens for {self.path.name}: {why}")
        return self

    def __exit__(self, *_exc) -> None:
        if self.ctx:
            llama_cpp.llama_free(self.ctx)
            self.ctx = None
        if self.model:
            llama_cpp.llama_model_free(self.model)
            self.model = None

    def footprint(self) -> Footprint:
        return Footprint(
            self.path,
            llama_cpp.llama_n_ctx(self.ctx),
            llama_cpp.llama_model_n_layer(self.model),
            breakdown(self.model, self.ctx, mapped=True),
        )


def check_pair(target: Path, draft: Path | None, params: ContextParams, draft_params: ContextParams) -> None:
    """The checks a projection makes before it loads anything, each failure one line."""
    if (why := unsupported()) is not None:
        raise UserError(why)
    headers = []
    for path, p in ((target, params), (draft, draft_params)):
        if path is None:
            continue
        check_gguf_file(path)
        header = draft_fit.read_header(path)
        check_params(p, header.n_ctx_train or p.n_ctx, path.name)
        headers.append(header)
    if draft is not None:
        t, d = headers
        draft_fit.check(t, d, (d.draft_type,))
        if (misfit := draft_fit.vocabulary_misfit(t, d)) is not None:
            raise UserError(f"draft {draft.name} cannot draft for target {target.name}: {misfit}")


def project(
    target: Path,
    draft: Path | None,
    params: ContextParams,
    draft_params: ContextParams,
    n_gpu_layers: int,
    n_gpu_layers_draft: int,
) -> tuple[Footprint, Footprint | None]:
    """The target's and the draft's footprints as the chat would load them, nothing allocated."""
    check_pair(target, draft, params, draft_params)
    with _NoAlloc(target, n_gpu_layers, params) as t:
        target_fp = t.footprint()
        if draft is None:
            return target_fp, None
        hidden = draft_fit.read_header(draft).draft_type != spec_types.DRAFT_SIMPLE
        with _NoAlloc(draft, n_gpu_layers_draft, draft_params, other=t.ctx if hidden else None) as d:
            return target_fp, d.footprint()


def allocated(model, context) -> Footprint:
    """What llama.cpp really allocated for a loaded Model and its Context (the same breakdown)."""
    return Footprint(model.path, context.n_ctx, model.n_layer, breakdown(model.ptr, context.ptr))
