"""Memory in use while a benchmark runs: peak device memory on a GPU, peak RSS without one."""

from __future__ import annotations

from dataclasses import dataclass

from spectui.engine import resources
from spectui.llama import devices


@dataclass(frozen=True)
class MemorySample:
    """Memory in use now. `source` says what was measured: "gpu-process" (this process's
    memory on all GPUs, NVML's), "gpu-total" (all processes, where NVML cannot attribute or is absent), or "rss"."""

    used: int
    source: str
    gpu_fraction: float | None  # the fullest GPU's used/total, None without a GPU


def sample_memory() -> MemorySample:
    gpus = devices.gpus()
    if not gpus:
        return MemorySample(resources.process_rss(), "rss", None)
    fraction = max(g.used / g.total for g in gpus if g.total)
    mine = [g.process_used for g in gpus if g.process_used is not None]
    if len(mine) == len(gpus):
        return MemorySample(sum(mine), "gpu-process", fraction)
    return MemorySample(sum(g.used for g in gpus), "gpu-total", fraction)
