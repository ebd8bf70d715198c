"""What a cached curve holds for, its cache key: the model files (by content), llama.cpp's build,
the device, threads and offload. A curve measured under another identity is measured again,
never trusted (plan/cache.py)."""

from __future__ import annotations

import hashlib
import platform
from pathlib import Path

SAMPLED = 4 << 20  # bytes read at each end: a GGUF's header and its last tensors


def file_identity(path: Path) -> dict:
    """A file by its content, not its place or time, so a reinstall (new time, new venv) keeps its
    curve: the size and a digest of the first and last SAMPLED bytes (milliseconds for a gigabyte;
    another quantisation or model differs there)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        size = f.seek(0, 2)
        f.seek(0)
        digest.update(f.read(SAMPLED))
        f.seek(max(0, size - SAMPLED))
        digest.update(f.read(SAMPLED))
    return {"size": size, "sampled_sha256": digest.hexdigest()}


def device() -> str:
    """The CPU's model and count, and the GPUs llama.cpp may offload to."""
    from spectui.llama import devices
    from spectui.llama.runtime import usable_cores

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    return f"{cpu} x{usable_cores()}; {devices.summary()}"


def key(setup, target: Path, draft: Path | None) -> dict:
    """What a curve holds for: the files, the build, the device, threads and offload."""
    from spectui.llama import build
    from spectui.llama.runtime import default_threads

    lib = build.library()
    return {
        "target": file_identity(target),
        "draft": file_identity(draft) if draft else None,
        "llama_cpp": build.info()["version"],
        "libllama": file_identity(lib) if lib.is_file() else str(lib),
        "device": device(),
        "threads": setup.threads or default_threads(),
        "n_gpu_layers": setup.n_gpu_layers,
        "n_gpu_layers_draft": setup.n_gpu_layers_draft if draft else None,
        "flash_attn": setup.flash_attn,
        "cache_types_draft": [setup.cache_type_k_draft, setup.cache_type_v_draft] if draft else None,
    }


def calibration_key(setup, prompts: list[str]) -> dict:
    """What a calibration depends on besides the curve's identity: its prompts, its sampling and
    the settings whose records are marked calibration. One that answered other prompts or sampled
    otherwise is measured again (`spectui plan`) and read as none (the chat's card)."""
    from dataclasses import astuple

    from spectui.config.setup import OPTIONS
    from spectui.plan.acceptance import CALIBRATION_TOKENS, sampling_for_calibration

    return {
        "prompts": prompts,
        "tokens": CALIBRATION_TOKENS,
        "sampling": list(astuple(sampling_for_calibration(setup.sampling()))),
        "settings": {o.name: setup.value(o.name) for o in OPTIONS.values() if o.calibration},
    }
