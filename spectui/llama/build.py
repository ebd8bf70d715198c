"""Which llama.cpp build runs: what a result or a trace records, so two runs can be told apart,
and whether it is a build known to crash on this CPU."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import llama_cpp
import llama_cpp.llama_cpp as llama_lib

BINDING_VERSION = llama_cpp.__version__  # llama-cpp-python's


def library() -> Path:
    """The libllama this process loaded."""
    return Path(llama_lib._lib._name)


def info() -> dict:
    """llama.cpp's version, whether it can offload to a GPU, and its system info line."""
    return {
        "version": llama_lib.llama_version().decode(),
        "gpu_offload": bool(llama_cpp.llama_supports_gpu_offload()),
        "system_info": llama_cpp.llama_print_system_info().decode().strip(),
    }


CURE = 'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir --force-reinstall llama-cpp-python'


def native_amx(system_info: str, cpu_flags: set[str]) -> bool:
    """libllama compiled with AMX (a native build on a CPU that has it lists `AMX_INT8 = 1`)
    running on such a CPU: the build that dies with a bare "Segmentation fault" in the first decode."""
    return re.search(r"\bAMX_INT8 = 1\b", system_info) is not None and "amx_tile" in cpu_flags


def cpu_flags(cpuinfo: str) -> set[str]:
    """The first processor's flags in /proc/cpuinfo's text."""
    found = re.search(r"^flags\s*:(.*)$", cpuinfo, re.M)
    return set(found.group(1).split()) if found else set()


@functools.cache
def crash_risk() -> str:
    """What to say before the first decode of a build that may crash there ("" if none), with the cure."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            flags = cpu_flags(f.read(1 << 20))  # the first processor's block comes first
    except OSError:
        return ""
    if not native_amx(info()["system_info"], flags):
        return ""
    return (
        "llama-cpp-python was compiled natively for this CPU's AMX (llama.cpp's system info: AMX_INT8 = 1), "
        f'a build that can crash with "Segmentation fault" at the first decode; if it does: {CURE}'
    )
