"""The one thread that runs generation, so llama.cpp's OpenMP keeps one team of threads.

libgomp keeps a team of threads for each thread that starts parallel work, for as long as
that thread lives. Once a process holds more of those threads than it has CPUs, libgomp
cuts every wait's spin to 100 turns, whatever GOMP_SPINCOUNT says, and llama.cpp's threads
then sleep and wake at each of a decode's barriers. The chat answers in worker threads
from a pool, so its second answer usually came from another thread than its first, and
every answer after that ran far slower (docs/performance.md). So the chat, the A/B view and `spectui run`
generate on this thread (the bench generates on its calling thread, the only one).
"""

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
