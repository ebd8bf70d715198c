"""Events pushed to another thread in batches, by the generating thread: the chat's way.

A round can take a millisecond on a small model. Handing each one over wakes the
consumer's thread, which then competes for the GIL and the cores with the generation it
is showing. So rounds are coalesced to one hand-over per `interval`; a turn's start and
end go at once. The end of the prompt goes with the first rounds, an interval later: at
once, the chat redrew for it just as generation began, with nothing new to show.

`spectui run` takes its events instead (engine/handover.py): its main thread wakes on
its own timer, no more often than it was woken. The chat tried that too, a worker thread
taking them and posting them to the app (one more thread woken per hand-over), and was
slower than pushing from the generating thread where cores are few (docs/performance.md).
"""

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
