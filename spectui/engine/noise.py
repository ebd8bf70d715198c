"""Is a speedup real: the one rule, and its words, behind every view that says whether
speculation pays (the plan's table and conclusion, `plan --concurrency`, the welcome card, the
panel, the bench's verdicts and the A/B view): each prints the word judge() gives.

A speedup pays where the whole range it could plausibly be lies above 1, loses where it lies
below, and is within noise where the range holds 1; with nothing to size the range (one run),
it is unknown. Views differ only in what sizes the range, each for its own reason:
- measured speeds (bench, panel, A/B): the speedup ± the noise band, the largest spread of the
  runs at hand and never under NOISE_FLOOR (a few runs understate a machine's noise);
- a predicted speedup (the plan's rows, `--concurrency`, the card): the steady spread of the
  timed decodes the prediction rests on (no floor: those are repeated until they settle); the
  panel's plan rows widen it by the acceptance's own sampling error, since the few drafts of one
  chat are uncertain too.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Speedups within +-3% are noise, whatever a few runs measured.
NOISE_FLOOR = 0.03
PAYS, LOSES, WITHIN, UNKNOWN = "pays", "loses", "within noise", "unknown"


def spread(samples: Iterable[float | None]) -> float | None:
    """Run-to-run noise: (max - min) / median of the defined samples; None under two of them
    or a median that is not positive."""
    vals = [v for v in samples if v is not None]
    if len(vals) < 2:
        return None
    m = statistics.median(vals)
    return (max(vals) - min(vals)) / m if m > 0 else None


def steady_spread(samples: Sequence[float]) -> float | None:
    """The spread of repeats once the one furthest from their median is left out, where there are
    three or more: one hiccup (a page fault, another process's burst) cannot move it."""
    if len(samples) < 3:
        return spread(samples)
    m = statistics.median(samples)
    return spread(sorted(samples, key=lambda x: abs(x - m))[:-1])


def band(*spreads: float | None, floor: float = NOISE_FLOOR) -> float | None:
    """The noise band of measured speeds: their largest spread, at least `floor`; None where no
    spread was measured (the noise is unknown)."""
    known = [s for s in spreads if s is not None]
    return max(floor, *known) if known else None


def decide(lo: float, hi: float) -> str:
    """The one decision: PAYS where the plausible speedups [lo, hi] all clear 1, LOSES where all
    fall short of it, WITHIN where 1 is among them."""
    return PAYS if lo > 1 else LOSES if hi < 1 else WITHIN


@dataclass(frozen=True)
class Judgement:
    word: str  # PAYS, LOSES, WITHIN or UNKNOWN
    speedup: float
    noise: float | None  # the band it was judged by; None: unknown

    @property
    def reason(self) -> str:
        """Why, in a line: what the speedup was held against."""
        if self.noise is None:
            return "one run: the noise is unknown"
        side = {PAYS: "above", LOSES: "below", WITHIN: "within"}[self.word]
        return f"×{self.speedup:.2f} is {side} 1 ± {self.noise:.0%}"


def judge(speedup: float, noise: float | None) -> Judgement:
    """`speedup` against its noise band (band(); None: unknown)."""
    if noise is None:
        return Judgement(UNKNOWN, speedup, None)
    return Judgement(decide(speedup - noise, speedup + noise), speedup, noise)
