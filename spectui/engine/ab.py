"""The A/B verdict: the same prompt run with configuration A and with B, judged from the
two runs' events alone.

UI-free, so the judgement can be tested on synthetic events; the TUI's A/B screen only
renders it. The numbers come from stats.summarize (as in the panel and the benchmark), the
divergence from the benchmark's own first_divergence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from spectui import spec_types
from spectui.engine.events import Event, StopReason, TurnStart
from spectui.engine.noise import WITHIN, Judgement, band, judge, spread
from spectui.engine.overlay import MARKS
from spectui.engine.stats import TurnSummary, first_divergence, rounds_of, speedup, summarize
from spectui.spec_config import recorded_types
from spectui.spec_types import Spec

NAMES = ("A", "B")
BASELINE = spec_types.BASELINE  # the spec type every speedup is measured against
BEFORE_CHARS = 20  # at most this much common text is quoted before the first difference
CHARACTER_TOKENS = 4  # a UTF-8 character spans at most 4 byte tokens
CLEAN_ENDS = (StopReason.EOS, StopReason.N_PREDICT)


@dataclass(frozen=True)
class Divergence:
    index: int  # the first differing token, from 0
    before: str  # the common text just before it, "…" and its end where long
    a: str | None  # A's token there; None where A had ended
    b: str | None

    def words(self) -> str:
        """Where and how the outputs part, for a reader: "at token 8 (after '…def add'): A wrote
        '_numbers', B wrote '('"."""
        where = f"at token {self.index + 1}" + (f" (after {quoted(self.before)})" if self.before else "")
        a, b = (
            f"{name} had ended" if t is None else f"{name} wrote {quoted(t)}"
            for name, t in zip(NAMES, (self.a, self.b))
        )
        return f"{where}: {a}, {b}"


def quoted(text: str) -> str:
    """A piece of the answer in quotes on one line, its newlines and tabs as marks."""
    return repr(text.translate(MARKS)) if text else "'' (part of a character)"


@dataclass(frozen=True)
class Verdict:
    summaries: tuple[TurnSummary, TurnSummary]
    speedup: float | None  # B's tok/s over A's, as shown (shown_tok_s)
    divergence: Divergence | None  # None: the token sequences are identical
    greedy: bool
    notes: tuple[str, ...]  # what makes the numbers less than a clean comparison
    spec_types: tuple[tuple[Spec, ...], tuple[Spec, ...]]  # each side's configured types; (BASELINE,): the baseline
    drafted_nothing: tuple[str, ...] = ()  # the sides ("A", "B") that speculated and drafted nothing
    speedups: tuple[float, ...] = ()  # every run of this pair on this prompt (chat/ab.py), this one last

    @property
    def identical(self) -> bool:
        return self.divergence is None

    def is_baseline(self, side: int) -> bool:
        """The side ran none: plain decoding by choice, what a speedup is measured against
        (never a side that "drafted nothing")."""
        return self.spec_types[side] == (BASELINE,)


@dataclass(frozen=True)
class Speed:
    """The verdict's speedup in words, one definition throughout: a run's speedup is B's tok/s
    over A's (the tok/s shown beside it), and over several runs of the pair the median of
    those per-run ratios, judged against their spread (engine.noise, as the bench and panel)."""

    ratio: str  # "×1.12 pays", engine.noise's WITHIN, "×1.12" from one run, or "-"
    how: str  # what the ratio is, from what
    this_run: str = ""  # over several runs: this run's own ratio and the tok/s that give it
    warning: bool = False  # a side drafted nothing: no speedup is claimed


def shown_tok_s(x: float | None) -> str:
    """A run's tok/s as the verdict shows it, to three figures at least (123.4, 30.1, 2.14):
    the speedup is the ratio of these, so that the shown speeds give the shown speedup."""
    return "-" if x is None else f"{x:.1f}" if x >= 99.95 else f"{x:#.3g}"


def _shown_speedup(b: float | None, a: float | None) -> float | None:
    """B over A, of the speeds as shown (their rounding is far below a run's noise)."""
    return None if a is None or b is None else speedup(float(shown_tok_s(b)), float(shown_tok_s(a)))


def speed(v: Verdict, again: str = "") -> Speed:
    """The speedup line of verdict `v`; `again`: how to run the pair again, said where one
    run leaves the noise unknown."""
    a, b = (shown_tok_s(s.timing.tok_per_s) for s in v.summaries)
    division = f"B {b} ÷ A {a} tok/s"
    runs = v.speedups or ((v.speedup,) if v.speedup is not None else ())
    if v.drafted_nothing:  # plain decoding under another name: no speedup to claim
        who = " and ".join(v.drafted_nothing)
        return Speed("-", f": {who} drafted nothing, it ran as plain decoding ({division})", warning=True)
    if v.speedup is None or not runs:
        return Speed("-", f" ({division})")
    if len(runs) == 1:  # the machine's own noise is unmeasured
        return Speed(f"×{runs[0]:.2f}", f" = {division} · 1 run: noise unknown" + (f", {again}" if again else ""))
    lo, hi = min(runs), max(runs)
    this_run = f"this run ×{v.speedup:.2f} = {division}"
    word = judge_runs(runs).word
    if word == WITHIN:
        return Speed(WITHIN, f", ×{lo:.2f}-×{hi:.2f} over {len(runs)} interleaved runs", this_run)
    return Speed(
        f"×{median(runs):.2f} {word}", f", the median of {len(runs)} interleaved runs (×{lo:.2f}-×{hi:.2f})", this_run
    )


def judge_runs(runs: Sequence[float]) -> Judgement:
    """The pair's speedups, each an interleaved run's B over A, as engine.noise judges speeds:
    their median against their spread's band (unknown from one run)."""
    return judge(median(runs), band(spread(runs)))


def configured_types(events: Sequence[Event]) -> tuple[Spec, ...]:
    """The types a run was configured with (its TurnStart says)."""
    start = next((e for e in events if isinstance(e, TurnStart)), None)
    return recorded_types(start.config) if start else (BASELINE,)


def _emitted(events: Sequence[Event]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Token ids and their text pieces, in order (the rounds hold both)."""
    tokens = [t for r in rounds_of(events) for t in r.tokens]
    return tuple(t.id for t in tokens), tuple(t.piece for t in tokens)


def _divergence(a: Sequence[Event], b: Sequence[Event]) -> Divergence | None:
    (ids_a, pieces_a), (ids_b, pieces_b) = _emitted(a), _emitted(b)
    i = first_divergence(ids_a, ids_b)
    if i is None:
        return None
    common = "".join(pieces_a[:i])
    before = common
    if len(common) > BEFORE_CHARS:  # its end, from a word's start where it has one
        tail = common[-BEFORE_CHARS:]
        start = next((j + 1 for j, ch in enumerate(tail[:-1]) if ch.isspace()), 0)
        before = "…" + tail[start:]
    return Divergence(i, before, *(_character(p, i) for p in (pieces_a, pieces_b)))


def _character(pieces: Sequence[str], i: int) -> str | None:
    """The text from token i on to its first whole character: a token that is part of one
    (an emoji's first bytes) has no text, and "A wrote '', B wrote ''" would show no difference."""
    if i >= len(pieces):
        return None
    return next((p for j in range(i, min(i + CHARACTER_TOKENS, len(pieces))) if (p := "".join(pieces[i : j + 1]))), "")


def _drafted_nothing(runs: Sequence[Sequence[Event]], summaries: Sequence[TurnSummary]) -> tuple[str, ...]:
    """The sides that speculated and drafted nothing: plain decoding under another name."""
    return tuple(
        name
        for name, events, s in zip(NAMES, runs, summaries)
        if configured_types(events) != (BASELINE,) and s.n_drafted == 0 and s.rounds
    )


def _notes(summaries: Sequence[TurnSummary], greedy: bool, divergence: Divergence | None) -> list[str]:
    notes = []  # one line each at 80 columns: the verdict fits an 80x24 screen whole
    for name, s in zip(NAMES, summaries):
        if s.stop_reason not in CLEAN_ENDS:
            reason = s.stop_reason.value if s.stop_reason else "no end"
            notes.append(f"{name} ended early ({reason}): the comparison covers a partial run")
        if s.timing.tok_per_s is None:
            notes.append(f"{name} generated no tokens: no speed to compare")
    if not greedy:
        may = "could have differed" if divergence is None else "are expected to differ"
        notes.append(f"sampling: the outputs {may}; compare speed and acceptance")
    elif divergence is not None:  # greedy keeps the target's choices, yet batches round apart
        notes.append("greedy, yet a near-tie can flip: batched and one-token decodes round apart")
    return notes


def compare(a: Sequence[Event], b: Sequence[Event]) -> Verdict:
    """B against A: speedup (turn tok/s), acceptance of each, identical or where they first differ."""
    summaries = (summarize(a), summarize(b))
    greedy = all(r.verify == "greedy" for r in rounds_of(a) + rounds_of(b))
    divergence = _divergence(a, b)
    idle = _drafted_nothing((a, b), summaries)
    return Verdict(
        summaries=summaries,
        speedup=_shown_speedup(summaries[1].timing.tok_per_s, summaries[0].timing.tok_per_s),
        divergence=divergence,
        greedy=greedy,
        notes=tuple(_notes(summaries, greedy, divergence)),
        spec_types=(configured_types(a), configured_types(b)),
        drafted_nothing=idle,
    )
