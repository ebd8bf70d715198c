"""Which devices, with how much memory (spectui.llama.devices): ggml's registry for any
backend, NVML's per-process use added to an NVIDIA GPU alone, the no-GPU path never raising,
NVML tried once, and RSS following real allocations."""

import os
from types import SimpleNamespace

import numpy as np
import pynvml
import pytest

from spectui.engine.resources import memory_text, peak_rss, process_rss
from spectui.llama import devices
from spectui.llama.devices import GIB, Device, describe, gpus, record_text, summary

CPU = ("CPU", "AMD EPYC", 0, 20 * GIB, 24 * GIB)
LLVMPIPE = ("Vulkan0", "llvmpipe (LLVM 15.0.6, 256 bits)", 1, 23 * GIB, 24 * GIB)
H100 = ("CUDA0", "NVIDIA H100 80GB HBM3", 1, 70 * GIB, 80 * GIB)


def fake_registry(monkeypatch, *found, backends=("CPU",)):
    """ggml's device API over `found` (name, description, type, free, total), as _ggml binds it;
    `backends`: the backends built in, whose devices are those named after them."""

    def memory(i, free, total):
        free._obj.value, total._obj.value = found[i][3], found[i][4]

    api = SimpleNamespace(
        count=lambda: len(found),
        get=lambda i: i,
        name=lambda i: found[i][0].encode(),
        description=lambda i: found[i][1].encode(),
        type=lambda i: found[i][2],
        memory=memory,
        by_type=lambda t: next(i for i, d in enumerate(found) if d[2] == t),
        reg_count=lambda: len(backends),
        reg_get=lambda i: backends[i],
        reg_name=lambda r: r.encode(),
        reg_dev_count=lambda r: sum(d[0].startswith(r) for d in found),
    )
    monkeypatch.setattr(devices, "_ggml", lambda: api)


@pytest.fixture
def nvml_tries(monkeypatch):
    """NVML not yet tried in this test; the calls to nvmlInit counted."""
    devices._nvml_ok.cache_clear()
    calls = []
    monkeypatch.setattr(pynvml, "nvmlInit", lambda: calls.append(1))
    yield calls
    devices._nvml_ok.cache_clear()


def fake_nvml(monkeypatch):
    """One H100: 5.1 GiB in use, 4.2 GiB of it this process's."""
    pid = os.getpid()
    h100 = ("NVIDIA H100 80GB HBM3", [(pid + 1, 1 * GIB), (pid, int(4.2 * GIB))])
    fns = {
        "nvmlDeviceGetCount": lambda: 1,
        "nvmlDeviceGetHandleByIndex": lambda i: h100,
        "nvmlDeviceGetName": lambda h: h[0],
        "nvmlDeviceGetMemoryInfo": lambda h: SimpleNamespace(used=int(5.1 * GIB), total=80 * GIB),
        "nvmlDeviceGetComputeRunningProcesses": lambda h: [SimpleNamespace(pid=p, usedGpuMemory=m) for p, m in h[1]],
        "nvmlSystemGetDriverVersion": lambda: "550.54.15",
    }
    for name, fn in fns.items():
        monkeypatch.setattr(pynvml, name, fn)


def test_a_cpu_only_build_says_so(monkeypatch, nvml_tries):
    fake_registry(monkeypatch, CPU)
    assert gpus() == []
    assert describe() == "GPU: none (CPU)" and summary() == "no GPU"
    assert memory_text().startswith("GPU: none (CPU)\nRSS ")
    assert nvml_tries == []  # no device that NVML could name


def test_any_backends_device_is_named_with_ggmls_memory(monkeypatch, nvml_tries):
    """A Vulkan device (llvmpipe, AMD, Intel): ggml's numbers; NVML is not asked."""
    fake_registry(monkeypatch, LLVMPIPE, CPU)
    assert gpus() == [Device("Vulkan0", LLVMPIPE[1], "gpu", 23 * GIB, 24 * GIB)]
    assert describe() == "Vulkan0 llvmpipe (LLVM 15.0.6, 256 bits): 1.0/24.0 GiB"
    assert summary() == "Vulkan0 llvmpipe (LLVM 15.0.6, 256 bits) 24.0 GiB"
    assert nvml_tries == []


def test_nvml_adds_an_nvidia_gpus_use_by_this_process(monkeypatch, nvml_tries):
    fake_registry(monkeypatch, H100, CPU)
    fake_nvml(monkeypatch)
    (gpu,) = gpus()
    assert gpu == Device("CUDA0", H100[1], "gpu", 80 * GIB - int(5.1 * GIB), 80 * GIB, int(4.2 * GIB), "550.54.15")
    assert describe() == "CUDA0 NVIDIA H100 80GB HBM3: 5.1/80.0 GiB (this process 4.2 GiB)"
    gpus()
    assert nvml_tries == [1]  # once, then remembered


def test_nvml_failing_leaves_ggmls_numbers(monkeypatch, nvml_tries):
    fake_registry(monkeypatch, H100, CPU)
    fake_nvml(monkeypatch)

    def lost(*args):
        raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)

    monkeypatch.setattr(pynvml, "nvmlDeviceGetMemoryInfo", lost)
    assert gpus() == [Device("CUDA0", H100[1], "gpu", 70 * GIB, 80 * GIB)]


def test_no_nvml_library_leaves_ggmls_numbers(monkeypatch, nvml_tries):
    fake_registry(monkeypatch, H100, CPU)

    def no_library():
        nvml_tries.append(1)
        raise pynvml.NVMLError(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)

    monkeypatch.setattr(pynvml, "nvmlInit", no_library)
    assert gpus() == gpus() == [Device("CUDA0", H100[1], "gpu", 70 * GIB, 80 * GIB)]
    assert nvml_tries == [1]


def test_a_gpu_backend_without_a_device_is_named(monkeypatch):
    """A Vulkan build whose device is hidden or has no driver: its layers run on the CPU, and
    resolving a setup says so in a note."""
    from spectui.config.resolve import resolve

    fake_registry(monkeypatch, CPU, backends=("CPU", "Vulkan"))
    assert devices.idle_backends() == ["Vulkan"]
    (note,) = [n for n in resolve("smollm2", {}).notes if "Vulkan" in n]
    assert note == "llama.cpp's Vulkan backend found no device: every layer runs on the CPU"
    assert not any("Vulkan" in n for n in resolve("smollm2", {"n_gpu_layers": 0}).notes)
    fake_registry(monkeypatch, LLVMPIPE, CPU, backends=("CPU", "Vulkan"))
    assert devices.idle_backends() == []


def test_this_machines_registry_is_consistent():
    """The llama.cpp loaded here: a CPU-only build has no GPU, a device build names its devices."""
    found = gpus()
    assert all(d.name and d.kind != "cpu" and 0 <= d.free <= d.total for d in found)
    assert (describe() == "GPU: none (CPU)") == (not found)


def test_recorded_devices_read_in_words_old_and_new():
    assert record_text(Device(*LLVMPIPE[:2], "gpu", 1, 2).record()) == LLVMPIPE[1]
    assert record_text({"index": 0, "name": "NVIDIA L4", "driver_version": "550"}) == "NVIDIA L4 (driver 550)"


def test_rss_follows_a_real_allocation():
    before = process_rss()
    block = np.ones(200 * 1024**2, dtype=np.uint8)  # ones: the pages are really touched
    after = process_rss()
    assert after - before >= 150 * 1024**2
    assert peak_rss() >= after
    del block
