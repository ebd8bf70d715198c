"""Events `spectui run` takes at its own pace: the generating thread never wakes it (docs/architecture.md)."""

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
