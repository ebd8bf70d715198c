"""One answer as it streams: the events, the history message they build, and the changes of
configuration made while it streamed (its trace merges them with its rounds).

Kept free of widgets so the bookkeeping (segments, answer text, stop marking, stats) can
be tested without a screen, and so Persistence can save the partial message at any moment.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from spectui.engine.events import Event, Round, StopReason, TurnEnd
from spectui.engine.noise import spread
from spectui.engine.overlay import add_segments
from spectui.engine.overlay import segments as round_segments
from spectui.engine.stats import summarize
from spectui.engine.verdicts import summary_dict
from spectui.spec_config import SpecConfig
from spectui.spec_types import BASELINE
from spectui.store.chat_types import AnswerConfig, Message
from spectui.trace.format import ConfigChange

MIN_BASELINE_TOKENS = 16  # shorter `none` turns are too noisy to compare against


@dataclass(frozen=True)
class Growth:
    """What events added to an answer: the overlay's pieces (rejected drafts included) and the
    answer's text. It travels to the answer's widget, which appends it to what it shows."""

    segments: tuple[tuple[str, str], ...] = ()
    text: str = ""

    @classmethod
    def joined(cls, grown: list[Growth]) -> Growth:
        """Several growths, in order, as one."""
        return cls(tuple(s for g in grown for s in g.segments), "".join(g.text for g in grown))


class LiveTurn:
    """Feeds engine events into an assistant `Message`; the message is always saveable.

    Until the turn ends the message is marked stopped, so a crash or Ctrl+C leaves a
    saved partial answer that says so; a clean end (EOS, n-predict) clears the mark.
    """

    def __init__(self, spec: SpecConfig, sampling: dict | None = None):
        """`sampling`: the per-answer values it runs with (Setup.per_answer()), where known."""
        self.events: list[Event] = []
        self.message = Message(role="assistant", content="", stopped=True, config=AnswerConfig.of(spec, sampling))
        self.end: TurnEnd | None = None
        self.changes: list[ConfigChange] = []  # the speculation switched while it streamed

    def reconfigured(self, spec: SpecConfig) -> None:
        """The chat now speculates as `spec`: from the next round, so the trace says when."""
        self.changes.append(ConfigChange(time.perf_counter(), spec.as_dict()))

    @property
    def running(self) -> bool:
        return self.end is None

    @property
    def rounds(self) -> list[Round]:
        return [e for e in self.events if isinstance(e, Round)]

    def extend(self, events: list[Event]) -> Growth:
        """Add a batch of events; what they added, in order."""
        return Growth.joined([self.add(event) for event in events])

    def add(self, event: Event) -> Growth:
        """The one place the stored answer changes; what the event added to it."""
        self.events.append(event)
        m = self.message
        growth = Growth()
        if isinstance(event, Round):
            growth = Growth(tuple(round_segments(event, show_rejected=True)), "".join(t.piece for t in event.tokens))
            add_segments(m.segments, growth.segments)
            m.content += growth.text
            if m.config is not None:  # the speculation may switch mid-answer
                m.config = m.config.switched(event.configured or (BASELINE,), event.n_max)
        elif isinstance(event, TurnEnd):
            self.end = event
            # The detokenizer's final flush is in TurnEnd.text only.
            if event.text.startswith(m.content) and len(event.text) > len(m.content):
                growth = Growth(((event.text[len(m.content) :], "target"),), event.text[len(m.content) :])
                add_segments(m.segments, growth.segments)
            m.content = event.text
            m.stopped = event.stop_reason in (StopReason.CANCELLED, StopReason.ERROR, StopReason.CONTEXT_FULL)
            self.sync_stats()
        return growth

    def sync_stats(self) -> Message:
        """Put the turn's summary into the message (before saving it); not per round, as
        summarize() walks every event."""
        self.message.stats = summarize(self.events).as_dict() if self.events else {}
        if any(r.verdicts for r in self.rounds):  # inspected: the answer keeps its kinds of rejection
            self.message.stats["inspect"] = summary_dict(self.rounds)
        return self.message


def baseline_tok_s(turn: LiveTurn) -> float | None:
    """The turn's tok/s when it is a clean baseline: all rounds `none`, ended by EOS or
    n-predict, long enough to trust; else None."""
    rounds = turn.rounds
    tok_s = turn.message.stats.get("tok_per_s")
    clean = (
        turn.end is not None
        and turn.end.stop_reason in (StopReason.EOS, StopReason.N_PREDICT)
        and turn.message.stats.get("n_generated", 0) >= MIN_BASELINE_TOKENS
    )
    return tok_s if rounds and all(r.configured == (BASELINE,) for r in rounds) and tok_s and clean else None


@dataclass(frozen=True)
class Baseline:
    """What `none` measured on a target: the median tok/s of its recent clean turns, and how
    much they varied ((max - min) / median; None from one turn, whose noise is unknown)."""

    tok_s: float
    spread: float | None
    n: int

    @classmethod
    def of(cls, speeds: list[float]) -> Baseline | None:
        if not speeds:
            return None
        return cls(statistics.median(speeds), spread(speeds), len(speeds))


class Baselines:
    """The speedup baseline: the recent clean `none` turns, per target model."""

    KEPT = 5  # recent `none` turns remembered per target model

    def __init__(self) -> None:
        self._kept: dict[str, list[float]] = {}  # target model path -> recent `none` tok/s

    def record(self, target_path: str, turn: LiveTurn) -> None:
        tok_s = baseline_tok_s(turn)
        if tok_s is not None:
            kept = self._kept.setdefault(target_path, [])
            kept[:] = (kept + [tok_s])[-self.KEPT :]

    def get(self, target_path: str) -> Baseline | None:
        return Baseline.of(self._kept.get(target_path, []))
