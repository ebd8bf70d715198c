"""Will speculation pay: tok/s, speedup and break-even acceptance from a measured cost curve.

A round drafts k tokens and verifies them, after the last sampled token, in one target
batch of k+1. With s_i the share of drafts whose positions 1..i were all accepted (llama.cpp's
acceptance per position), a round yields 1 + s_1 + ... + s_k tokens; a constant acceptance α
(s_i = α^i) gives (1 - α^(k+1)) / (1 - α). It costs t(k+1) + the draft's k steps (an n-gram
lookup: nothing) + the round's overhead; no speculation costs t(1) + its overhead per token.

An n-gram type drafts in only some rounds, as long as its match runs: it is described by the
share of rounds that draft, their mean length and mean accepted tokens, as measured.

Everything here is a pure function of a Curve (a few dozen arithmetic operations), so a
panel may call it every round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from spectui.engine import noise
from spectui.engine.auto import DEPTH
from spectui.plan.curve import Curve

N_MAX = tuple(range(1, 9))  # the n-max values a plan covers for a draft-model type


@dataclass(frozen=True)
class Drafting:
    """How a type drafts: the share of rounds with a draft, their mean draft length, the mean
    accepted tokens of a drafting round, whether a draft model runs (k steps a draft), and the
    share of drafts accepted whole (s_k: the next draft's first step then decodes 2 tokens)."""

    share: float
    length: float
    accepted: float
    model: bool
    whole: float = 0.0

    @property
    def alpha(self) -> float | None:
        """Accepted / drafted (llama.cpp's acceptance rate); None with no draft."""
        return self.accepted / self.length if self.length > 0 else None

    def at(self, alpha: float) -> Drafting:
        """The same drafting with a constant acceptance α per position."""
        return Drafting(self.share, self.length, accepted_at(alpha, self.length), self.model, alpha**self.length)

    def at_rate(self, rate: float) -> Drafting:
        """The same drafting at an acceptance rate (accepted / drafted, llama.cpp's), its positions
        each accepted at one constant α (rate rises with α: bisection)."""
        lo, hi = 0.0, 1.0
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if accepted_at(mid, self.length) < rate * self.length else (lo, mid)
        return self.at(hi if rate > 0 else 0.0)


def accepted_at(alpha: float, length: float) -> float:
    """Mean accepted tokens of a draft of `length` (fractional: the next position in part) at
    constant acceptance α: α + α² + ... + α^length."""
    whole = int(length)
    total = sum(alpha**i for i in range(1, whole + 1))
    return total + (length - whole) * alpha ** (whole + 1)


def model_drafting(positions: Sequence[float], n_max: int) -> Drafting:
    """A draft model at `n_max`, from s_1..s_n measured at an n-max of n >= n_max (a what-if:
    a draft model's first k tokens do not depend on the n-max, so neither do s_1..s_k)."""
    if n_max > len(positions):
        raise ValueError(f"acceptance measured for {len(positions)} positions, asked for n-max {n_max}")
    return Drafting(1.0, float(n_max), sum(positions[:n_max]), True, positions[n_max - 1])


def round_seconds(curve: Curve, d: Drafting, depth: int = DEPTH) -> float:
    """Mean seconds of one round. A draft model's k steps: the first decodes the last sampled
    token, with the previous draft's last token when all of it was accepted (a batch of 2)."""
    t1 = curve.t(1, depth)
    drafting = curve.t(d.length + 1, depth)
    if d.model:
        step = curve.t_draft(1, depth)
        drafting += d.length * step + d.whole * (curve.t_draft(2, depth) - step)
    return (1 - d.share) * t1 + d.share * drafting + round_overhead(curve, d)


def round_overhead(curve: Curve, d: Drafting) -> float:
    """Seconds of a round outside llama.cpp: none's, and a draft model's Python per draft step,
    scaled from the calibration's drafts (an n-gram lookup adds a few microseconds: none)."""
    if not d.model:
        return curve.overhead_none
    per_step = max(0.0, curve.overhead_spec - curve.overhead_none) / curve.overhead_length
    return curve.overhead_none + d.share * d.length * per_step


def tok_per_s_none(curve: Curve, depth: int = DEPTH) -> float:
    return 1.0 / (curve.t(1, depth) + curve.overhead_none)


def tok_per_s(curve: Curve, d: Drafting, depth: int = DEPTH) -> float:
    return (1 + d.share * d.accepted) / round_seconds(curve, d, depth)


def speedup(curve: Curve, d: Drafting, depth: int = DEPTH) -> float:
    """Predicted tok/s over `none`'s on the same machine."""
    return tok_per_s(curve, d, depth) / tok_per_s_none(curve, depth)


def break_even(curve: Curve, d: Drafting, depth: int = DEPTH) -> float | None:
    """The acceptance rate (accepted / drafted) at which this drafting runs as fast as `none`,
    each position accepted at one constant α; 0.0 where it pays at any acceptance, None where
    it loses even at 1 (speedup rises with α: bisection) or never drafts."""
    if not d.share or not d.length or speedup(curve, d.at(1.0), depth) < 1:
        return None
    if speedup(curve, d.at(0.0), depth) >= 1:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if speedup(curve, d.at(mid), depth) < 1 else (lo, mid)
    return accepted_at(hi, d.length) / d.length


@dataclass(frozen=True)
class Prediction:
    """One configuration's plan: break-even α, and at the measured acceptance (if any) the
    predicted tok/s and speedup with the spread of the timings it rests on."""

    spec_type: str
    n_max: int | None  # None: an n-gram type (its own sizes bound a draft)
    drafting: Drafting
    break_even: float | None
    alpha: float | None  # measured acceptance (accepted / drafted) at this n-max
    tok_per_s: float | None
    speedup: float | None
    noise: float | None = None  # timing_spread() of the decodes the speedup rests on

    @property
    def word(self) -> str | None:
        """engine.noise's word for the speedup against its timings' noise; None: no speedup."""
        return None if self.speedup is None else noise.judge(self.speedup, self.noise).word

    def as_dict(self) -> dict:
        return {
            "spec_type": self.spec_type,
            "n_max": self.n_max,
            "draft_share": self.drafting.share,
            "draft_length": self.drafting.length,
            "break_even_alpha": self.break_even,
            "alpha": self.alpha,
            "tok_per_s": self.tok_per_s,
            "speedup": self.speedup,
            **({"noise": self.noise, "word": self.word} if self.speedup is not None else {}),
        }


def predict(
    curve: Curve, spec_type: str, d: Drafting, n_max: int | None, measured: bool = True, depth: int = DEPTH
) -> Prediction:
    """`d` with its measured acceptance (`measured`), or only its shape (no acceptance known:
    break-even alone)."""
    return Prediction(
        spec_type,
        n_max,
        d,
        break_even(curve, d, depth),
        d.alpha if measured else None,
        tok_per_s(curve, d, depth) if measured else None,
        speedup(curve, d, depth) if measured else None,
        timing_spread(curve, d) if measured else None,
    )


def speedup_line(curve: Curve, d: Drafting, rates: Sequence[float], depth: int = DEPTH) -> list[float]:
    """Speedup against the acceptance rate (the plan's picture)."""
    return [speedup(curve, d.at_rate(r), depth) for r in rates]


def timing_spread(curve: Curve, d: Drafting) -> float:
    """The largest spread of the timings a prediction rests on: the single step, the measured
    verify batches its drafts' length is read between, and the draft model's steps where one runs."""
    x = d.length + 1
    points = []
    for pts in curve.target.values():
        points += [pts[0], *[p for p in pts if p.b <= x][-1:], *[p for p in pts if p.b >= x][:1]]
    if d.model:
        points += [p for pts in curve.draft.values() for p in pts]
    return max(p.spread for p in points)


def alphas(n: int) -> list[float]:
    """n acceptance rates evenly from 0 to 1."""
    return [i / (n - 1) for i in range(n)]
