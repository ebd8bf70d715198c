"""llama.cpp's process-wide state: its log, its backend, and the threads it runs with.

Imported before any model loads (model.py and context.py import it): the log callback and
the backend are set up once, here.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections import deque
from typing import TextIO

import llama_cpp  # noqa: E402  (after the stdlib: its import prints nothing by itself)

from spectui.words import plural

_recent_errors: deque[str] = deque(maxlen=8)
_log_sink: TextIO | None = None


@llama_cpp.llama_log_callback
def _on_log(level: int, text: bytes, _user_data) -> None:
    msg = text.decode("utf-8", "replace")
    if level in (2, 3):  # warn, error: kept to explain a failed load
        _recent_errors.append(msg.strip())
    if _log_sink is not None:
        _log_sink.write(msg)


def configure_logging(verbose: bool = False, log_file: TextIO | None = None) -> None:
    """Silence llama.cpp unless `--verbose` (stderr) or a log file (opened by the caller,
    cli.setup_flags.open_log) asks for its output."""
    global _log_sink
    _log_sink = log_file or (sys.stderr if verbose else None)


llama_cpp.llama_log_set(_on_log, ctypes.c_void_p(0))
llama_cpp.llama_backend_init()

SERIALIZE = "GGML_VK_SERIALIZE_SUBMISSIONS"


def _serialize_on_llvmpipe() -> bool:
    """Mesa's llvmpipe runs ggml-vulkan's overlapping submissions on a thread of its own and reads
    memory freed under them (a segfault in a verification batch, docs/gpu.md): where it is a
    device, ggml-vulkan waits for each submission. Read when a model first loads onto a device,
    so set here; the user's own setting wins. True where spectui set it."""
    from spectui.llama import devices

    if SERIALIZE in os.environ or not any("llvmpipe" in devices.description(h) for h in devices.handles()):
        return False
    os.environ[SERIALIZE] = "1"
    return True


SERIALIZED_BY_SPECTUI = _serialize_on_llvmpipe()


def forget_errors() -> None:
    """Before a call that may fail: last_error() then explains that call, not an earlier one."""
    _recent_errors.clear()


def last_error() -> str:
    """What llama.cpp logged about the last failure: its last error line, else its last warning."""
    for msg in reversed(_recent_errors):
        if msg and "error" in msg.lower():
            return msg
    return _recent_errors[-1] if _recent_errors else ""


OPENMP_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS", "OMP_PROC_BIND")


def openmp_settings() -> dict:
    """The OpenMP settings llama.cpp's threads run with, and who chose them."""
    from spectui import OPENMP_DEFAULTED

    return {**{k: os.environ.get(k) for k in OPENMP_VARIABLES}, "chosen_by": "spectui" if OPENMP_DEFAULTED else "you"}


def note(text: str) -> None:
    """A line of spectui's own in llama.cpp's log (shown by --verbose or a log file)."""
    if _log_sink is not None:
        _log_sink.write(f"spectui: {text}\n")


def note_threads(name: str, n_threads: int, given: bool) -> None:
    """The log's line of a context's threads (`given`: by -t) and the OpenMP waiting they run with."""
    omp = openmp_settings()
    waiting = ", ".join(f"{k}={omp[k]}" for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT") if omp[k] is not None)
    note(
        f"{name}: {plural(n_threads, 'thread')} ({'-t' if given else 'default: the physical cores'}), "
        f"{waiting or 'OpenMP defaults'} (chosen by {omp['chosen_by']})"
    )


def usable_cores() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def default_threads() -> int:
    """llama.cpp uses the physical cores; on small machines that is every CPU we have."""
    n = usable_cores()
    return n if n <= 4 else n // 2
