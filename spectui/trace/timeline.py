"""A trace as a replay timeline: one step per round, at the time it was recorded.

UI-free, so speed control and stepping are tested without a screen; the replay screens
and the asciinema export both walk these steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from spectui.engine.events import Round
from spectui.errors import UserError
from spectui.trace.format import Trace

INTER_TURN_S = 1.0  # the pause before each prompt (the trace does not record reading time)
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 10.0)  # what --speed and the +/- keys allow


@dataclass(frozen=True)
class Step:
    turn: int  # index into trace.turns
    n_events: int  # how many of the turn's events are shown at this step
    at: float  # recorded seconds from the start of the replay


def steps(trace: Trace) -> list[Step]:
    """Each turn starts with a step that shows its prompt (and the events before its first
    round), then one step per round; the last round's step includes the turn's end. The
    time between steps is the recorded time between the events."""
    out: list[Step] = []
    at = 0.0
    for i, turn in enumerate(trace.turns):
        events = turn.events
        at += INTER_TURN_S if i else 0.0
        rounds = [k for k, e in enumerate(events) if isinstance(e, Round)]
        out.append(Step(i, rounds[0] if rounds else len(events), at))
        prev = events[0].t
        for n, k in enumerate(rounds):
            at += max(events[k].t - prev, 0.0)
            prev = events[k].t
            out.append(Step(i, len(events) if n == len(rounds) - 1 else k + 1, at))
        at += max(events[-1].t - prev, 0.0)
    return out


def check_speed(speed: float) -> float:
    if not SPEEDS[0] <= speed <= SPEEDS[-1]:
        raise UserError(f"--speed must be between {SPEEDS[0]:g} and {SPEEDS[-1]:g} (1 = as recorded), got {speed:g}")
    return speed


class Playhead:
    """Where a replay is: a step index and the recorded time reached. `tick(dt)` plays on
    by dt wall seconds times the speed; stepping and seeking pause."""

    def __init__(self, timeline: list[Step], speed: float = 1.0, playing: bool = True):
        self.steps = timeline
        self.speed = check_speed(speed)
        self.pos = 0
        self.clock = 0.0
        self.playing = playing and len(timeline) > 1

    @property
    def step(self) -> Step:
        return self.steps[self.pos]

    @property
    def at_end(self) -> bool:
        return self.pos == len(self.steps) - 1

    def tick(self, dt: float) -> bool:
        """Play on; True when the position moved. Playing stops at the end."""
        if not self.playing:
            return False
        self.clock += dt * self.speed
        old = self.pos
        while not self.at_end and self.steps[self.pos + 1].at <= self.clock:
            self.pos += 1
        if self.at_end:
            self.playing = False
        return self.pos != old

    def seek(self, pos: int) -> bool:
        """Go to a step (clamped) and pause there; True when the position moved."""
        old, self.pos = self.pos, min(max(pos, 0), len(self.steps) - 1)
        self.clock = self.steps[self.pos].at
        self.playing = False
        return self.pos != old

    def toggle(self) -> None:
        """Play or pause; playing from the end starts again."""
        if not self.playing and self.at_end:
            self.seek(0)
        self.playing = not self.playing and len(self.steps) > 1

    def change_speed(self, direction: int) -> float:
        """The next allowed speed up (1) or down (-1)."""
        faster = [s for s in SPEEDS if s > self.speed]
        slower = [s for s in SPEEDS if s < self.speed]
        if direction > 0 and faster:
            self.speed = faster[0]
        elif direction < 0 and slower:
            self.speed = slower[-1]
        return self.speed
