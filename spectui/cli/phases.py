"""A long command's phases on stderr: as each step ends, one whole line with its seconds, the time
elapsed and the estimate of what is left; the seconds per phase for its JSON. On a terminal the
step under way shows on one redrawn line; in a log, only whole lines (no bar, no carriage return)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.status import Status
from rich.text import Text


def _duration(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


class Phases:
    def __init__(self, console: Console):
        self.console = console
        self.t0 = self._last = time.perf_counter()
        self.seconds: dict[str, float] = {}
        self._line: Status | None = None

    @contextmanager
    def live(self) -> Iterator[None]:
        """Steps under way on one redrawn line, on a terminal only."""
        if not self.console.is_terminal:
            yield
            return
        with self.console.status("", spinner="dots") as line:
            self._line = line
            try:
                yield
            finally:
                self._line = None

    def step(self, text: str) -> None:
        """A step begins: shown while it runs on a terminal; in a log its end says it."""
        if self._line is not None:
            self._line.update(Text(text, style="dim"))

    def done(self, phase: str, text: str | None, left: float | None = None) -> None:
        """A step of `phase` ended: its seconds counted to the phase, and its line (None: a step
        too short to tell)."""
        now = time.perf_counter()
        took, self._last = now - self._last, now
        self.seconds[phase] = self.seconds.get(phase, 0.0) + took
        if text is None:
            return
        tail = f", about {_duration(left)} left" if left else ""
        line = f"{text}: {took:.1f} s (elapsed {_duration(now - self.t0)}{tail})"
        self.console.print(line, style="dim", highlight=False, soft_wrap=True)

    def as_dict(self) -> dict[str, float]:
        return {**{k: round(v, 3) for k, v in self.seconds.items()}, "total": round(self._last - self.t0, 3)}
