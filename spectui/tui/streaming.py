"""Generation in a worker thread, handed up to the app in batches (engine/batching.py):
at most RATE posts a second, so the answer is not re-rendered for every token.

Where llama.cpp's threads take every core, every millisecond the UI thread runs is taken
from them (a lower priority for the UI thread did not help): an update costs Textual
3-6 ms of CPU (the answer's redraw, a layout pass every few lines). On 2 cores, 1.5B
target, 8 interleaved pairs, the chat generated at 0.92x of `spectui run` with 10 updates
a second, 0.95x with 4 and 0.975x with 2. So there the answer updates RATE_CPU_BOUND times
a second; with a core to spare (a bigger machine, a GPU), RATE times.
"""

from __future__ import annotations

import threading
from typing import Callable

from textual.message import Message

from spectui.engine import llama_thread
from spectui.engine.batching import EventBatcher
from spectui.engine.session import GenerationLimits, Session, SessionStatus
from spectui.tui.messages import TurnEvents, TurnFailed

RATE = 10  # UI updates per second while an answer streams
RATE_CPU_BOUND = 2  # ... when llama.cpp's threads take every core


def update_interval(status: SessionStatus) -> float:
    """Seconds between the UI's updates while an answer of this session streams."""
    return 1 / (RATE_CPU_BOUND if status.cpu_bound else RATE)


def stream_turn(session: Session, messages: list[dict], limits: GenerationLimits,
             post: Callable[[Message], object], stop: threading.Event) -> None:
    """Run one turn on the llama thread, the calling (worker) thread waiting for its end;
    `stop` asks it to end between rounds, even when set before the engine started (the
    engine clears its own flag on start)."""
    llama_thread.submit(_stream, session, messages, limits, post, stop).result()


def _stream(session: Session, messages: list[dict], limits: GenerationLimits,
            post: Callable[[Message], object], stop: threading.Event) -> None:
    batcher = EventBatcher(lambda events: post(TurnEvents(events)), update_interval(session.status()))
    try:
        for event in session.generate(messages=messages, limits=limits):
            if stop.is_set():
                session.cancel()
            batcher.add(event)
    except Exception as e:  # the engine raised before or between events: end the turn, not the app
        batcher.flush()
        post(TurnFailed(f"{type(e).__name__}: {e}" if not str(e) else str(e)))
        return
    batcher.flush()
