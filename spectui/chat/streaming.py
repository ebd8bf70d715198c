"""Generation on the llama thread, handed to the chat in batches (engine/batching.py), so
an answer is not re-rendered for every token.

Where llama.cpp's threads take every core, each UI update takes CPU from them, so the
answer then updates less often (docs/performance.md has the measurement).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from spectui.engine import llama_thread
from spectui.engine.batching import EventBatcher
from spectui.engine.events import Event
from spectui.engine.interface import ChatSession, GenerationLimits, SessionStatus

RATE = 10  # UI updates per second while an answer streams
RATE_CPU_BOUND = 2  # ... when llama.cpp's threads take every core


def update_interval(status: SessionStatus) -> float:
    """Seconds between the UI's updates while an answer of this session streams."""
    return 1 / (RATE_CPU_BOUND if status.cpu_bound else RATE)


@dataclass
class TurnJob:
    """One answer to generate: what a worker thread needs, and `stop` to end it early."""

    session: ChatSession
    messages: list[dict]
    limits: GenerationLimits
    stop: threading.Event = field(default_factory=threading.Event)


def start_turn(job: TurnJob, deliver: Callable[[list[Event]], object], fail: Callable[[str], object]) -> Future:
    """Run one turn on the llama thread; no worker waits for it (the chat hears its end in its
    events; the chat screen waits only when it closes). `deliver` gets the events in batches;
    `fail` the error when the engine raises. `stop` ends the turn between rounds, even when set
    before the engine started (the engine clears its own flag on start)."""
    return llama_thread.submit(_stream, job, deliver, fail)


def stream_turn(job: TurnJob, deliver: Callable[[list[Event]], object], fail: Callable[[str], object]) -> None:
    """`start_turn`, the calling (worker) thread waiting for its end (an A/B run's sides)."""
    start_turn(job, deliver, fail).result()


def _stream(job: TurnJob, deliver: Callable[[list[Event]], object], fail: Callable[[str], object]) -> None:
    session = job.session
    batcher = EventBatcher(deliver, update_interval(session.status()))
    try:
        for event in session.generate(messages=job.messages, limits=job.limits):
            if job.stop.is_set():
                session.cancel()
            batcher.add(event)
    except Exception as e:  # the engine raised before or between events: end the turn, not the app
        batcher.flush()
        fail(f"{type(e).__name__}: {e}" if not str(e) else str(e))
        return
    batcher.flush()
