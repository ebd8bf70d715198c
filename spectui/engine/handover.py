"""Events handed from the generating thread to the thread that shows them, in batches.

A round can take a millisecond on a small model. Handing each one over wakes the
consumer's thread, which then competes for the GIL and the cores with the generation it
is showing; even one wake-up every 50 ms, signalled from the generating thread, cost it
measurable time every round (docs/performance.md). So a round (or the end of the
prompt) is only appended here, and the consumer takes what has come at its own pace,
once an interval; a turn's start and end (and the generation's close) wake it at once.
`spectui run` consumes this way; the chat is pushed its events (engine/batching.py),
which measured faster there.
"""

from __future__ import annotations

import threading
from collections import deque

from spectui.engine.events import Event, PromptDone, Round


class Handover:
    def __init__(self) -> None:
        self._pending: deque[Event] = deque()
        self._wake = threading.Event()
        self._closed = False

    def put(self, event: Event) -> None:
        """From the generating thread: rounds and the end of the prompt wait for the consumer;
        a turn's start or end wakes it."""
        self._pending.append(event)
        if not isinstance(event, (Round, PromptDone)):
            self._wake.set()

    def close(self) -> None:
        """From the generating thread, when it is done (or failed): the consumer takes the rest."""
        self._closed = True
        self._wake.set()

    def take(self, interval: float) -> list[Event] | None:
        """Every event put since the last take, after waiting up to `interval` seconds (less
        when a turn starts or ends); None once the generation is closed and all is taken."""
        if not self._closed:
            self._wake.wait(interval)
            self._wake.clear()
        closed = self._closed  # read before draining: whatever came before the close is taken now
        batch = [self._pending.popleft() for _ in range(len(self._pending))]
        return None if closed and not batch else batch
