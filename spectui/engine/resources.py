"""This process's memory, for the stats panel and the benchmark's environment record; the
devices' memory comes from spectui.llama.devices, the one module that asks which there are.
"""

from __future__ import annotations

import os
import resource
import sys

from spectui.llama import devices


def _maxrss() -> int:
    """ru_maxrss in bytes (it is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def memory_text() -> str:
    """Memory per device (or "GPU: none (CPU)") and this process's resident memory: the panel's
    Memory section, and what a trace records of the machine."""
    return f"{devices.describe()}\nRSS {process_rss() / 2**20:.0f} MiB"


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
