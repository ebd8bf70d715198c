"""Ctrl+C while llama.cpp loads a model: its log callback runs Python inside a C call,
where a KeyboardInterrupt is printed as "Exception ignored" and lost (the load then goes
on as if nothing happened). So the interrupt is held until the C calls return."""

from __future__ import annotations

import signal
from contextlib import contextmanager


@contextmanager
def held():
    """Raise KeyboardInterrupt on leaving, if Ctrl+C came meanwhile (main thread only)."""
    caught = []
    previous = signal.signal(signal.SIGINT, lambda *_: caught.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


ENDING: dict[int, str] = {signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


@contextmanager
def ending(received: list[int]):
    """SIGTERM and SIGHUP stop the answer as Ctrl+C does (a KeyboardInterrupt, once), so what
    was generated is still saved; `received` gets the signal's number (main thread only)."""

    def stop(signum, frame):
        first = not received
        received.append(signum)
        if first:
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, stop) for s in ENDING}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
