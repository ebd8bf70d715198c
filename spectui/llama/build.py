"""Which llama.cpp build runs: what a result or a trace records, so two runs can be told apart."""

from __future__ import annotations

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
