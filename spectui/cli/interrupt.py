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
def noted(received: list[int]):
    """SIGTERM, SIGHUP and Ctrl+C while an answer streams: `received` gets the signal's number
    and nothing is raised; the loop that shows the answer reads it and asks the session to stop,
    so what was generated is still saved (a KeyboardInterrupt could land between the loop's try
    and its next turn, and the exit then waited for the whole answer; main thread only)."""
    previous = {s: signal.signal(s, lambda signum, frame: received.append(signum)) for s in (*ENDING, signal.SIGINT)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextmanager
def as_ctrl_c(received: list[int]):
    """SIGTERM and SIGHUP end a bench's measurement as Ctrl+C does: a KeyboardInterrupt, once,
    which the measurement catches wherever it lands inside its try, keeping what it measured;
    `received` gets the signal's number (main thread only)."""

    def stop(signum, frame):
        received.append(signum)
        if len(received) == 1:
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, stop) for s in ENDING}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def stopped_by(signals: list[int], measurement) -> None:
    """A bench's measurement that SIGTERM or SIGHUP ended (as_ctrl_c) says which."""
    if signals:
        measurement.interrupted = f"stopped by {ENDING[signals[0]]} at {measurement.interrupted}"


def exit_code(measurement, signals: list[int]) -> int:
    """A bench's: 1 failed, 128 + the signal that ended it (SIGTERM 143, SIGHUP 129), 130 Ctrl+C, else 0."""
    return 1 if measurement.failed else 128 + signals[0] if signals else 130 if measurement.partial else 0
