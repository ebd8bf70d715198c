"""Events pushed to the chat's thread in batches, so each round does not wake it (docs/architecture.md)."""

from __future__ import annotations

import time
from collections.abc import Callable

from spectui.engine.events import Event, PromptDone, Round


class EventBatcher:
    def __init__(
        self, post: Callable[[list[Event]], object], interval: float, clock: Callable[[], float] = time.perf_counter
    ):
        self._post = post
        self._interval = interval
        self._clock = clock
        self._pending: list[Event] = []
        self._last = float("-inf")

    def add(self, event: Event) -> None:
        self._pending.append(event)
        now = self._clock()
        if isinstance(event, PromptDone):
            self._last = now
        elif not isinstance(event, Round) or now - self._last >= self._interval:
            self.flush(now)

    def flush(self, now: float | None = None) -> None:
        if self._pending:
            self._post(self._pending)
            self._pending = []
            self._last = self._clock() if now is None else now
