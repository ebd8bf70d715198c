"""The one thread that runs generation, so llama.cpp's OpenMP keeps one team of threads.

libgomp keeps a team of threads for each thread that starts parallel work, for as long as
that thread lives. Once a process holds more of those threads than it has CPUs, libgomp
cuts every wait's spin to 100 turns, whatever GOMP_SPINCOUNT says, and llama.cpp's threads
then sleep and wake at each of a decode's barriers. The chat answers in worker threads
from a pool, so its second answer usually came from another thread than its first:
measured on 2 cores, SmolLM2 generated at 88 tok/s from one thread, and at 52 from any
thread once a second one had decoded. So the chat, the A/B view and `spectui run`
generate on this thread (the bench generates on its calling thread, the only one).
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import Callable, TypeVar

T = TypeVar("T")

_jobs: queue.SimpleQueue = queue.SimpleQueue()
_lock = threading.Lock()
_thread: threading.Thread | None = None


def submit(fn: Callable[..., T], *args) -> Future[T]:
    """Run fn(*args) on the llama thread, after the work queued before it."""
    global _thread
    future: Future[T] = Future()
    _jobs.put((future, fn, args))
    with _lock:
        if _thread is None:
            # A daemon: a user who quits mid-answer is not kept waiting for the answer's end.
            _thread = threading.Thread(target=_serve, name="spectui-llama", daemon=True)
            _thread.start()
    return future


def _serve() -> None:
    while True:
        future, fn, args = _jobs.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(fn(*args))
        except BaseException as e:  # handed to the waiting thread, which raises it
            future.set_exception(e)
