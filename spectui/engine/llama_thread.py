"""The one thread that runs generation, so llama.cpp's OpenMP keeps one team of threads (docs/architecture.md)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

# One worker, started at the first submit and kept. At exit Python lets the work in
# progress finish (a turn asked to stop ends after its round) before the models are freed.
_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spectui-llama")


def submit(fn: Callable[..., T], *args) -> Future[T]:
    """Run fn(*args) on the llama thread, after the work queued before it."""
    return _executor.submit(fn, *args)
