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
