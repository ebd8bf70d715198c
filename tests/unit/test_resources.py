"""VRAM/RAM probes: the no-GPU path never raises, NVML init is tried once, the GPU line
is formatted from NVML's numbers, and RSS follows real allocations."""

import os
from types import SimpleNamespace

import numpy as np
import pynvml
import pytest

from spectui.engine import resources
from spectui.engine.resources import GIB, GpuMemory, describe_gpu, gpu_info, gpu_memory, peak_rss, process_rss


@pytest.fixture(autouse=True)
def fresh_nvml(monkeypatch):
    """Each test starts with NVML not yet tried."""
    monkeypatch.setattr(resources, "_nvml_ok", None)


def test_no_driver_means_no_gpu_and_init_is_tried_once(monkeypatch):
    calls = []

    def no_library():
        calls.append(1)
        raise pynvml.NVMLError(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)

    monkeypatch.setattr(pynvml, "nvmlInit", no_library)
    assert gpu_memory() is None
    assert describe_gpu() == "GPU: none (CPU)"
    assert gpu_info() == []
    assert gpu_memory() is None
    assert calls == [1]


def test_this_machine_reports_consistently():
    """Real NVML: a CPU-only machine takes the no-GPU path, a GPU machine gives sane numbers."""
    gpus = gpu_memory()
    if gpus is None:
        assert describe_gpu() == "GPU: none (CPU)" and gpu_info() == []
    else:
        assert all(0 < g.used <= g.total and g.name for g in gpus)
        assert [d["memory_total"] for d in gpu_info()] == [g.total for g in gpus]
        assert describe_gpu().startswith("GPU 0 ")


class FakeNvml:
    """Two GPUs; this process uses 4.2 GiB of GPU 0 and is absent from GPU 1."""

    def __init__(self, monkeypatch):
        pid = os.getpid()
        gpus = [
            ("NVIDIA H100", 5.1 * GIB, 80 * GIB, [(pid + 1, 1 * GIB), (pid, int(4.2 * GIB))]),
            ("NVIDIA L4", 0.5 * GIB, 24 * GIB, [(pid + 1, GIB // 2)]),
        ]
        fns = {
            "nvmlInit": lambda: None,
            "nvmlDeviceGetCount": lambda: len(gpus),
            "nvmlDeviceGetHandleByIndex": lambda i: gpus[i],
            "nvmlDeviceGetName": lambda h: h[0],
            "nvmlDeviceGetMemoryInfo": lambda h: SimpleNamespace(used=int(h[1]), total=int(h[2])),
            "nvmlDeviceGetComputeRunningProcesses": lambda h: [
                SimpleNamespace(pid=p, usedGpuMemory=m) for p, m in h[3]
            ],
            "nvmlSystemGetDriverVersion": lambda: "550.54.15",
        }
        for name, fn in fns.items():
            monkeypatch.setattr(pynvml, name, fn)


def test_gpu_numbers_and_line_come_from_nvml(monkeypatch):
    FakeNvml(monkeypatch)
    gpus = gpu_memory()
    assert gpus[0] == GpuMemory(0, "NVIDIA H100", int(5.1 * GIB), 80 * GIB, int(4.2 * GIB))
    assert gpus[1].process_used is None
    assert describe_gpu() == ("GPU 0 NVIDIA H100: 5.1/80.0 GiB (this process 4.2 GiB)\nGPU 1 NVIDIA L4: 0.5/24.0 GiB")
    assert gpu_info() == [
        {"index": 0, "name": "NVIDIA H100", "driver_version": "550.54.15", "memory_total": 80 * GIB},
        {"index": 1, "name": "NVIDIA L4", "driver_version": "550.54.15", "memory_total": 24 * GIB},
    ]


def test_nvml_failing_after_init_does_not_raise(monkeypatch):
    FakeNvml(monkeypatch)

    def lost(*args):
        raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)

    monkeypatch.setattr(pynvml, "nvmlDeviceGetMemoryInfo", lost)
    assert gpu_memory() is None and describe_gpu() == "GPU: none (CPU)" and gpu_info() == []


def test_rss_follows_a_real_allocation():
    before = process_rss()
    block = np.ones(200 * 1024**2, dtype=np.uint8)  # ones: the pages are really touched
    after = process_rss()
    assert after - before >= 150 * 1024**2
    assert peak_rss() >= after
    del block
