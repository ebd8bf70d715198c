"""Which devices llama.cpp can offload to, with how much memory: the one answer for every view.

The devices are ggml's registry (`ggml_backend_dev_*`), the ones llama.cpp offloads to whatever
the backend: CUDA, Vulkan, ROCm, SYCL, Metal. Where an NVIDIA GPU is present NVML adds what
this process uses of it, which ggml cannot tell. The panel, `spectui run --json`, traces, the
bench's environment, the plan's identity and its memory projection all read this module; no
other module asks ggml or NVML which devices there are.

NVML is initialised once, on first use; a failure (no NVIDIA GPU, no driver, no libnvidia-ml)
is remembered, so the panel's periodic refresh never retries it.
"""

from __future__ import annotations

import ctypes
import functools
import os
from dataclasses import asdict, dataclass
from types import SimpleNamespace

import pynvml

GIB = 1024**3
# ggml_backend_dev_type: what llama.cpp calls each kind of device
KINDS = {0: "cpu", 1: "gpu", 2: "igpu", 3: "accel"}


@functools.cache
def _ggml() -> SimpleNamespace:
    """ggml's device API, bound on first use: reading a recorded device loads no llama.cpp."""
    import llama_cpp

    lib, p, size = llama_cpp.llama_cpp._lib, ctypes.c_void_p, ctypes.c_size_t

    def bind(name: str, argtypes: list, restype, prefix: str = "ggml_backend_dev_"):
        fn = getattr(lib, prefix + name)
        fn.argtypes, fn.restype = argtypes, restype
        return fn

    return SimpleNamespace(
        count=bind("count", [], size),
        get=bind("get", [size], p),
        name=bind("name", [p], ctypes.c_char_p),
        description=bind("description", [p], ctypes.c_char_p),
        type=bind("type", [p], ctypes.c_int),
        memory=bind("memory", [p, ctypes.POINTER(size), ctypes.POINTER(size)], None),
        by_type=bind("by_type", [ctypes.c_int], p),
        reg_count=bind("reg_count", [], size, "ggml_backend_"),
        reg_get=bind("reg_get", [size], p, "ggml_backend_"),
        reg_name=bind("reg_name", [p], ctypes.c_char_p, "ggml_backend_"),
        reg_dev_count=bind("reg_dev_count", [p], size, "ggml_backend_"),
    )


@dataclass(frozen=True)
class Device:
    """One device as llama.cpp sees it, its memory now, and NVML's word where it has one."""

    name: str  # llama.cpp's: "CUDA0", "Vulkan0", "CPU"
    description: str  # "NVIDIA H100 80GB HBM3", "llvmpipe (LLVM 15.0.6, 256 bits)"
    kind: str  # KINDS
    free: int  # bytes; 0 where the backend cannot tell
    total: int
    process_used: int | None = None  # this process's bytes on it (NVML); None where unknown
    driver: str | None = None  # NVML's driver version

    @property
    def is_cpu(self) -> bool:
        return self.kind == "cpu"

    @property
    def used(self) -> int:
        return max(self.total - self.free, 0)

    def line(self) -> str:
        """The panel's line, e.g. "Vulkan0 llvmpipe (LLVM 15.0.6, 256 bits): 0.3/23.4 GiB"."""
        text = f"{self.name} {self.description}: {self.used / GIB:.1f}/{self.total / GIB:.1f} GiB"
        if self.process_used is not None:
            text += f" (this process {self.process_used / GIB:.1f} GiB)"
        return text

    def record(self) -> dict:
        return asdict(self)


def of(dev: int) -> Device:
    """The device at a ggml_backend_dev_t: its names and its memory now."""
    g = _ggml()
    free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
    g.memory(dev, ctypes.byref(free), ctypes.byref(total))
    return Device(
        (g.name(dev) or b"?").decode(errors="replace"),
        description(dev),
        KINDS.get(g.type(dev), "gpu"),
        free.value,
        total.value,
    )


def description(dev: int) -> str:
    """The device's description at a ggml_backend_dev_t, without asking its memory (which
    would start a CUDA context)."""
    return (_ggml().description(dev) or b"").decode(errors="replace")


def cpu_handle() -> int:
    """The CPU device's ggml_backend_dev_t, where host buffers are counted."""
    return _ggml().by_type(0)


def handles() -> list[int]:
    """Every device in ggml's registry, CPU included, in llama.cpp's order."""
    g = _ggml()
    return [g.get(i) for i in range(g.count())]


def gpus() -> list[Device]:
    """The devices llama.cpp can offload layers to (every kind but the CPU), with NVML's
    per-process use added to an NVIDIA GPU; [] on a CPU-only build."""
    found = [d for d in map(of, handles()) if not d.is_cpu]
    return _with_nvml(found) if found else []


def idle_backends() -> list[str]:
    """The GPU backends this llama.cpp was built with that found no device (no driver, or one
    hidden by GGML_VK_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES, ...): layers asked for a GPU then
    run on the CPU."""
    g = _ggml()
    regs = [g.reg_get(i) for i in range(g.reg_count())]
    return [(g.reg_name(r) or b"?").decode() for r in regs if not g.reg_dev_count(r) and g.reg_name(r) != b"CPU"]


def describe() -> str:
    """One line per device for the stats panel; "GPU: none (CPU)" on a CPU-only build."""
    return "\n".join(d.line() for d in gpus()) or "GPU: none (CPU)"


def summary() -> str:
    """The devices in a phrase, for a report's header and the plan's identity: names and totals."""
    return ", ".join(f"{d.name} {d.description} {d.total / GIB:.1f} GiB" for d in gpus()) or "no GPU"


def record_text(record: dict) -> str:
    """A device as a trace or bench result recorded it, in words; older records (NVML's
    "name" and "driver_version") read too."""
    what = str(record.get("description") or record.get("name") or "GPU")
    driver = record.get("driver") or record.get("driver_version")
    return f"{what} (driver {driver})" if driver else what


@functools.cache
def _nvml_ok() -> bool:
    try:
        pynvml.nvmlInit()
    except (pynvml.NVMLError, OSError):
        return False
    return True


def _with_nvml(found: list[Device]) -> list[Device]:
    """NVML's free memory (all processes) and this process's use, for each device whose
    description names an NVIDIA GPU NVML lists, matched in order and by name."""
    if not any("NVIDIA" in d.description for d in found) or not _nvml_ok():
        return found
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        listed = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        names = [pynvml.nvmlDeviceGetName(h) for h in listed]
    except pynvml.NVMLError:  # e.g. the GPU fell off the bus after init
        return found
    out = []
    for d in found:
        i = next((i for i, n in enumerate(names) if n and n in d.description), None)
        if i is None:
            out.append(d)
            continue
        h = listed.pop(i)
        names.pop(i)
        try:
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            mine = next(
                (p.usedGpuMemory for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h) if p.pid == os.getpid()), None
            )
        except pynvml.NVMLError:
            out.append(d)
            continue
        out.append(Device(d.name, d.description, d.kind, mem.total - mem.used, mem.total, mine, driver))
    return out
