"""VRAM and RAM use, for the stats panel and the benchmark's environment record.

NVML is initialised once, on first use; a failure (no NVIDIA GPU, no driver, no
libnvidia-ml) is remembered, so the panel's periodic refresh never retries it and no
function here raises on a CPU-only machine.
"""

from __future__ import annotations

import os
import resource
import sys
from dataclasses import dataclass

import pynvml

GIB = 1024**3
_nvml_ok: bool | None = None  # None: not tried yet


@dataclass(frozen=True)
class GpuMemory:
    index: int
    name: str
    used: int  # bytes, all processes
    total: int  # bytes
    process_used: int | None  # bytes used by this process; None when NVML cannot tell


def _nvml() -> bool:
    global _nvml_ok
    if _nvml_ok is None:
        try:
            pynvml.nvmlInit()
            _nvml_ok = True
        except (pynvml.NVMLError, OSError):
            _nvml_ok = False
    return _nvml_ok


def _process_used(handle) -> int | None:
    """This process's memory on one GPU. None when NVML does not list it: not using that
    GPU, or a container whose PIDs NVML cannot see, or a driver that withholds the number."""
    pid = os.getpid()
    for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
        if p.pid == pid:
            return p.usedGpuMemory
    return None


def gpu_memory() -> list[GpuMemory] | None:
    """Memory of each NVIDIA GPU, or None without a usable NVIDIA GPU/driver."""
    if not _nvml():
        return None
    try:
        out = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h)
            try:
                mine = _process_used(h)
            except pynvml.NVMLError:
                mine = None
            out.append(GpuMemory(i, pynvml.nvmlDeviceGetName(h), mem.used, mem.total, mine))
        return out or None
    except pynvml.NVMLError:  # e.g. the GPU fell off the bus after init
        return None


def describe_gpu() -> str:
    """One line per GPU for the stats panel, e.g.
    "GPU 0 NVIDIA H100: 5.1/80.0 GiB (this process 4.2 GiB)"; "GPU: none (CPU)" without one."""
    gpus = gpu_memory()
    if not gpus:
        return "GPU: none (CPU)"
    lines = []
    for g in gpus:
        line = f"GPU {g.index} {g.name}: {g.used / GIB:.1f}/{g.total / GIB:.1f} GiB"
        if g.process_used is not None:
            line += f" (this process {g.process_used / GIB:.1f} GiB)"
        lines.append(line)
    return "\n".join(lines)


def gpu_info() -> list[dict]:
    """Per GPU: index, name, driver version, total memory in bytes; [] without a GPU."""
    if not _nvml():
        return []
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        return [
            {
                "index": i,
                "name": pynvml.nvmlDeviceGetName(h),
                "driver_version": driver,
                "memory_total": pynvml.nvmlDeviceGetMemoryInfo(h).total,
            }
            for i in range(pynvml.nvmlDeviceGetCount())
            for h in [pynvml.nvmlDeviceGetHandleByIndex(i)]
        ]
    except pynvml.NVMLError:
        return []


def _maxrss() -> int:
    """ru_maxrss in bytes (it is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def memory_text() -> str:
    """VRAM per GPU (or "GPU: none (CPU)") and this process's resident memory: the panel's
    Memory section, and what a trace records of the machine."""
    return f"{describe_gpu()}\nRSS {process_rss() / 2**20:.0f} MiB"


def process_rss() -> int:
    """Current resident memory in bytes, from /proc/self/statm. Where there is no /proc
    (macOS) the peak is the best the standard library offers."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except OSError:
        return _maxrss()
    return pages * os.sysconf("SC_PAGE_SIZE")


def peak_rss() -> int:
    """Peak resident memory in bytes. The kernel updates ru_maxrss lazily, so it can lag
    the current RSS by a few pages; the peak is never reported below the current value."""
    return max(_maxrss(), process_rss())
