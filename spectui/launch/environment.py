"""What a result was measured on, or a trace recorded with: versions, llama.cpp build, models,
settings, hardware.

Every result carries this record, so `spectui bench compare` can say what changed
between two runs (keep build, quant, context and batch size with the numbers).
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
from pathlib import Path

from spectui import __version__
from spectui.config.embedded import CATALOG
from spectui.engine.server import ServerPool, ServerSession
from spectui.llama import build, devices
from spectui.llama.runtime import default_threads, openmp_settings

_BLOCK = 8 * 1024 * 1024


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def model_record(model, name: str, hashes: dict[Path, str] | None) -> dict:
    """One model file. An embedded model's sha256 is the catalog's (checked when it was
    installed); any other file is hashed here, once per path (`hashes` caches it), or not
    at all when `hashes` is None (a trace: reading gigabytes would delay the chat)."""
    entry = CATALOG.get(name)
    if entry is not None:
        sha, source = entry.sha256, "catalog"
    elif hashes is None:
        sha, source = None, "not hashed"
    else:
        if model.path not in hashes:
            hashes[model.path] = _sha256(model.path)
        sha, source = hashes[model.path], "hashed"
    return {
        "name": model.name,
        "file": model.path.name,
        "desc": model.description,  # llama_model_desc: architecture, size, quant ("llama 135M Q4_1")
        "quant": model.file_type,
        "size_bytes": model.size,
        "n_params": model.n_params,
        "n_layer": model.n_layer,
        "sha256": sha and sha[:16],
        "sha256_source": source,
    }


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _llama_build() -> dict:
    """llama-cpp-python does not expose llama.cpp's git hash; the version string plus a
    hash of the loaded libllama identifies the exact build (it changes on every rebuild)."""
    lib = build.library()
    return {**build.info(), "libllama_sha256": _sha256(lib)[:16] if lib.is_file() else None}


def _client() -> dict:
    """The machine spectui itself runs on."""
    return {
        "spectui": __version__,
        "cpu": _cpu_model(),
        "cpu_count": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "os": platform.platform(),
        "load_average": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
        "python": sys.version.split()[0],
    }


def server_environment(session: ServerSession) -> dict:
    """A llama-server's record: what its /props says (the models and the build run there),
    and the client's machine."""
    info = session.info
    props = info.props
    return {
        **_client(),
        "server": {
            "url": info.url,
            "build_info": info.build,
            "model_path": info.model_path,
            "model_ftype": props.get("model_ftype"),
            "n_ctx": info.n_ctx,
            "total_slots": props.get("total_slots"),
            "spec_types": list(info.spec_types),
        },
        "models": {"target": {"name": info.model, "file": info.model, "quant": props.get("model_ftype")}},
        "n_ctx": info.n_ctx,
        "gpus": [],  # the server's are not visible from here
    }


def collect(session, setup, hash_files: bool = True) -> dict:
    """The environment record of a result or a trace (models not embedded are hashed here
    when `hash_files`); of a pool of servers, the first server's, with every server listed."""
    if isinstance(session, ServerSession):
        return server_environment(session)
    if isinstance(session, ServerPool):
        env = server_environment(session.servers[0])
        env["servers"] = [server_environment(s)["server"] for s in session.servers]
        return env
    hashes: dict[Path, str] | None = {} if hash_files else None
    models = {"target": model_record(session.target, setup.model, hashes)}
    if session.draft is not None:
        models["draft"] = model_record(session.draft, setup.model_draft, hashes)
    ctx = session.ctx.params
    return {
        "llama_cpp_python": build.BINDING_VERSION,
        "llama_cpp": _llama_build(),
        "models": models,
        "n_ctx": session.ctx.n_ctx,
        "n_batch": session.ctx.n_batch,
        "threads": ctx.n_threads or default_threads(),
        "openmp": openmp_settings(),
        "n_gpu_layers": setup.n_gpu_layers,
        "n_gpu_layers_draft": setup.n_gpu_layers_draft,
        "flash_attn": ctx.flash_attn,
        # -bs as given, and where greedy's argmax was taken: "backend" or "numpy", per context
        "backend_sampling": {
            "given": ctx.backend_sampling,
            **{
                name: "backend" if c.sample_on_backend else "numpy"
                for name, c in (("target", session.ctx), ("draft", session.draft_ctx))
                if c is not None
            },
        },
        "cache_type_draft": [setup.cache_type_k_draft, setup.cache_type_v_draft],
        "gpus": [d.record() for d in devices.gpus()],
        **_client(),
    }
