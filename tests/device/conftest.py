"""The device suite: every test here runs with every layer on a GPU device, in a process whose
llama.cpp has one (CI's: the Vulkan build of tests/device/build.sh on Mesa's llvmpipe).

    LLAMA_CPP_LIB_PATH=$(bash tests/device/build.sh) GGML_VK_VISIBLE_DEVICES=0 pytest tests/device

llama.cpp is loaded once per process, so a plain `pytest` (the CPU build) cannot run these: it
leaves them out and says so in its header. A run that names the suite without a device fails at
once instead of skipping, so CI's device run can never pass on the CPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
HOW = "LLAMA_CPP_LIB_PATH=$(bash tests/device/build.sh) GGML_VK_VISIBLE_DEVICES=0 pytest tests/device"


def device_name() -> str | None:
    """The first GPU device the loaded llama.cpp offloads to, or None on a CPU-only build."""
    from spectui.llama import devices

    found = devices.gpus()
    return found[0].name if found else None


def _in_suite(item) -> bool:
    return Path(str(item.fspath)).is_relative_to(HERE)


def pytest_collection_modifyitems(config, items):
    ours = [item for item in items if _in_suite(item)]
    if not ours or device_name() is not None:
        return
    if all(_in_suite(item) for item in items):  # the suite named alone: no device is a failure
        raise pytest.UsageError(f"the device suite needs a GPU device, and the loaded llama.cpp has none: {HOW}")
    config.hook.pytest_deselected(items=ours)
    items[:] = [item for item in items if not _in_suite(item)]
    config._spectui_device_note = f"device suite: {len(ours)} tests left out (no GPU device loaded; {HOW})"


def pytest_report_collectionfinish(config):
    note = getattr(config, "_spectui_device_note", None)
    return [note] if note else []


@pytest.fixture(scope="session")
def device() -> str:
    """The GPU device every layer goes to (llama.cpp's name, "Vulkan0" on llvmpipe)."""
    name = device_name()
    assert name is not None
    return name
