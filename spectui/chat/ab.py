"""An A/B run: one prompt, two speculation configurations run one after the other on the
loaded models, then a verdict (engine/ab.py). The A/B screen renders it.

Both runs start cold (session.reset()), so neither profits from the other's KV cache or
n-gram tables; the session's own configuration is restored afterwards. Running the same
pair on the same prompt again runs it the other way round (A B, B A, A B...) and pools
the speedups, so the verdict can say how much they vary.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TypeGuard

from spectui.chat.streaming import TurnJob, stream_turn
from spectui.chat.turn import Growth, LiveTurn
from spectui.config.paths import traces_dir
from spectui.engine.ab import BASELINE, NAMES, Verdict, compare
from spectui.engine.events import Event, StopReason
from spectui.engine.interface import ChatSession, GenerationLimits, chat_messages
from spectui.spec_config import MODEL_TYPES, NGRAM_TYPES, Choice, SpecConfig
from spectui.trace.format import Trace, TraceTurn

UNFINISHED = (StopReason.CANCELLED, StopReason.ERROR)
# B when the chat runs none and no draft model is loaded: llama.cpp's first n-gram
FALLBACK_B: Choice = (NGRAM_TYPES[0],)


def default_types(choices: tuple[Choice, ...], current: Choice) -> tuple[Choice, Choice]:
    """A and B before the user picks: `none` against the chat's own configuration, or, while
    the chat runs none, against the draft's type (else FALLBACK_B)."""
    a = (BASELINE,) if (BASELINE,) in choices else choices[0]
    if current in choices and current != a:
        return a, current
    with_model = (c for c in choices if set(c) & set(MODEL_TYPES))
    return a, next(with_model, FALLBACK_B if FALLBACK_B in choices else choices[0])


def _finished(turn: LiveTurn | None) -> TypeGuard[LiveTurn]:
    """A side ran to its end: a side stopped (esc) or failed midway is no speed to compare."""
    return turn is not None and turn.end is not None and turn.end.stop_reason not in UNFINISHED


class ABRun:
    """Opened when no answer streams; while it lives the session is its own (the chat's state,
    chat/state.py, refuses to chat or reconfigure until the A/B view closes)."""

    def __init__(self, session: ChatSession, system: str | None, limits: GenerationLimits, trace_header: dict):
        self.session = session
        self.system = system
        self.limits = limits
        self.trace_header = trace_header
        self.prompt = ""  # of the last run
        self.turns: list[LiveTurn | None] = [None, None]
        self.running = False
        self.side = 0  # the side running now
        self.order = (0, 1)  # the sides in the order this run takes them
        self.finished = 0  # runs of this pair on this prompt where both sides finished
        self.speedups: list[float] = []  # B over A, of those runs
        self._pair: tuple = ()  # (prompt, specs) the runs belong to
        self._stop = threading.Event()

    def start(self, prompt: str, specs: list[SpecConfig]) -> None:
        """A new run begins (the screen then runs `run` in a worker): the same pair on the same
        prompt as before runs the other way round and adds to its speedups."""
        if (prompt, tuple(specs)) != self._pair:
            self._pair, self.finished, self.speedups = (prompt, tuple(specs)), 0, []
        self.order = (1, 0) if self.finished % 2 else (0, 1)
        self.prompt, self.turns, self.side, self.running = prompt, [None, None], self.order[0], True
        self._stop.clear()

    def run(
        self,
        specs: list[SpecConfig],
        started: Callable[[int, SpecConfig], object],
        deliver: Callable[[list[Event]], object],
        fail: Callable[[str], object],
    ) -> None:
        """The worker: each side cold, in this run's order, `started` before each; then `ended`,
        on the UI's thread."""
        session, restore = self.session, self.session.spec
        messages = chat_messages([("user", self.prompt)], self.system)
        try:
            for side in self.order:
                spec = specs[side]
                if self._stop.is_set():
                    break
                session.reset()  # cold: no KV cache or drafter state from the chat or from A
                session.configure(spec)
                started(side, spec)
                stream_turn(TurnJob(session, messages, self.limits, self._stop), deliver, fail)
        finally:
            session.configure(restore)

    def side_started(self, side: int, spec: SpecConfig) -> LiveTurn:
        self.side = side
        turn = self.turns[side] = LiveTurn(spec)
        return turn

    def add(self, events: list[Event]) -> Growth:
        """Events of the side running now (its `side_started` came first); what they added."""
        turn = self.turns[self.side]
        assert turn is not None, "events before their side started"
        return turn.extend(events)

    def ended(self) -> Verdict | str:
        """The verdict of a run where both sides finished (with this pair's speedups so far),
        else which did not."""
        self.running = False
        a, b = self.turns
        if _finished(a) and _finished(b):
            verdict = compare(a.events, b.events)
            self.finished += 1
            if verdict.speedup is not None:
                self.speedups.append(verdict.speedup)
            return replace(verdict, speedups=tuple(self.speedups))
        missing = ", ".join(NAMES[i] for i, t in enumerate(self.turns) if not _finished(t))
        left_out = "; left out of this pair's speedups" if self.speedups else ""
        return f"No verdict: {missing} did not finish (stopped or failed){left_out}."

    def stop(self) -> bool:
        """End the run at the end of the current round (B does not start); False when none runs."""
        if self.running:
            self._stop.set()
            self.session.cancel()
        return self.running

    def save_trace(self) -> Path | None:
        """Both sides of the last run in one trace (spectui replay shows them side by side),
        in the data folder's traces/ as the README says: its path, or None while nothing
        finished. Raises UserError when it cannot be written."""
        turns = [
            TraceTurn(self.prompt, list(t.events), side=NAMES[i])
            for i, t in enumerate(self.turns)
            if t is not None and not t.running
        ]
        if self.running or not turns:
            return None
        name = f"spectui-ab-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
        return Trace(self.trace_header, turns).write(traces_dir() / name)
