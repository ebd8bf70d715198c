"""This machine's costs, measured in seconds: the target's decode of a batch of b tokens at a
few context depths, the draft model's step, the round's overhead.

A point keeps the median of its repeats, their steady spread ((max - min) / median once the one
repeat furthest from the median is left out: one hiccup cannot blow it up) and how far that
repeat lay off the median (the machine was busy where many sizes had one); the curve
kept at each depth is the non-decreasing fit through the medians (plan/monotone.py), each point's
residual kept beside it. Measuring is plan/decodes.py's; what a curve holds for is
plan/identity.py's, and its file plan/cache.py's.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from spectui.engine.noise import steady_spread
from spectui.plan.monotone import monotone, residuals

NOISY = 0.2  # a typical size's repeats further apart than this: the machine's speed varied
BUSY = 0.25  # a hiccup beyond NOISY in more than this share of the sizes: the machine was busy
DRIFT = 0.15  # t(1) re-timed after every other size moved more than this: the machine's speed changed


@dataclass(frozen=True)
class Point:
    b: int
    median: float  # seconds: the fitted curve's value at b
    spread: float  # (max - min) / median over the repeats, the one furthest off left out (steady_spread)
    residual: float = 0.0  # (measured median - fitted) / fitted
    hiccup: float = 0.0  # |left out - median| / median: the repeat the spread left out (0: none)

    @classmethod
    def of(cls, b: int, samples: Sequence[float]) -> Point:
        m = statistics.median(samples)
        off = max(abs(x - m) for x in samples) / m if len(samples) >= 3 and m > 0 else 0.0
        return cls(b, m, steady_spread(samples) or 0.0, hiccup=off)

    @property
    def measured(self) -> float:
        return self.median * (1 + self.residual)


def fitted(points: Sequence[Point]) -> tuple[Point, ...]:
    """The points on the non-decreasing fit through their measured medians, each with its residual
    (idempotent: a fitted curve fits to itself, its residuals kept)."""
    measured = [p.measured for p in points]
    fit = monotone(measured)
    fit_residuals = residuals(measured, fit)
    return tuple(replace(p, median=f, residual=r) for p, f, r in zip(points, fit, fit_residuals, strict=True))


def _interpolate(xs: Sequence[float], ys: Sequence[float], x: float) -> float:
    """Linear through the points, extended by the last segment's slope at either end."""
    if len(xs) == 1:
        return ys[0]
    i = next((j for j in range(1, len(xs) - 1) if x < xs[j]), len(xs) - 1)
    return ys[i - 1] + (ys[i] - ys[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1])


@dataclass(frozen=True)
class Curve:
    """Decode seconds per batch size at each measured depth, for the target and the draft model,
    and the seconds a round spends outside llama.cpp: without a draft, and with a draft model's
    draft of `overhead_length` tokens (most of it per draft step: a decode call each)."""

    target: dict[int, tuple[Point, ...]]  # depth -> points by batch size
    draft: dict[int, tuple[Point, ...]]  # empty without a draft model
    overhead_none: float
    overhead_spec: float
    overhead_length: float = 8.0  # the mean draft length overhead_spec was measured at
    loop_scale: float = 1.0  # the timed decodes were multiplied by this (scaled_to_loop)
    drift: float = 0.0  # t(1) re-timed after every other decode, relative to its first timing

    @staticmethod
    def _at(curves: dict[int, tuple[Point, ...]], b: float, depth: float) -> float:
        per_depth = sorted(curves.items())
        at_depth = [_interpolate([p.b for p in pts], [p.median for p in pts], b) for _, pts in per_depth]
        # never below the shallowest measured depth's value: attention only adds cost
        return max(min(at_depth), _interpolate([d for d, _ in per_depth], at_depth, depth))

    def t(self, b: float, depth: float) -> float:
        """The target's seconds to decode a batch of b tokens with `depth` tokens before them."""
        return self._at(self.target, b, depth)

    def t_draft(self, b: float, depth: float) -> float:
        """The draft model's, 0 without one (an n-gram lookup costs nothing here)."""
        return self._at(self.draft, b, depth) if self.draft else 0.0

    def points(self) -> list[Point]:
        return [p for pts in (*self.target.values(), *self.draft.values()) for p in pts]

    @property
    def noise(self) -> float:
        """A typical point's spread (the median): a lone outlier is one size's hiccup, a busy
        machine moves them all."""
        return statistics.median(p.spread for p in self.points())

    def unsteady(self) -> str | None:
        """Why the machine's speed is said to have varied while timing, or None."""
        why = []
        if abs(self.drift) > DRIFT:
            why.append(f"t(1) moved {self.drift:+.0%} between the first and the last timing")
        if self.noise > NOISY:
            why.append(f"a typical batch size's repeats were {self.noise:.0%} apart")
        points = self.points()
        hiccups = [p.hiccup for p in points if p.hiccup > NOISY]
        if len(hiccups) > BUSY * len(points):
            why.append(
                f"the machine was busy: {len(hiccups)} of {len(points)} sizes had a repeat up to "
                f"{max(hiccups):.0%} off the others (left out of their noise)"
            )
        return "; ".join(why) or None

    def ratios(self, depth: int) -> list[tuple[int, float, float]]:
        """(b, t(b)/t(1), spread) at the measured depth nearest `depth`."""
        d = min(self.target, key=lambda x: abs(x - depth))
        pts = self.target[d]
        t1 = next(p.median for p in pts if p.b == 1)
        return [(p.b, p.median / t1, p.spread) for p in pts]

    def as_dict(self) -> dict:
        def pts(curves):
            return {str(d): [[p.b, p.median, p.spread, p.residual, p.hiccup] for p in ps] for d, ps in curves.items()}

        return {
            "target": pts(self.target),
            "draft": pts(self.draft),
            "overhead_none_s": self.overhead_none,
            "overhead_spec_s": self.overhead_spec,
            "overhead_spec_length": self.overhead_length,
            "loop_scale": self.loop_scale,
            "drift": self.drift,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Curve:
        """The inverse of as_dict; ValueError (or KeyError, TypeError) on anything else. An older
        file's points (three numbers, measured medians) are fitted as they are read."""

        def pts(curves) -> dict[int, tuple[Point, ...]]:
            out = {}
            for depth, ps in curves.items():
                points = tuple(Point(int(b), float(m), float(s), *(float(r) for r in rest)) for b, m, s, *rest in ps)
                bad = (p.b < 1 or not p.median > 0 or p.spread < 0 or p.residual <= -1 or p.hiccup < 0 for p in points)
                if not points or any(bad):
                    raise ValueError(f"a bad point at depth {depth}")
                if [p.b for p in points] != sorted({p.b for p in points}):
                    raise ValueError(f"batch sizes out of order at depth {depth}")
                out[int(depth)] = fitted(points)
            return out

        target = pts(d["target"])
        if not target or any(ps[0].b != 1 for ps in target.values()):
            raise ValueError("no single-token decode")
        over = float(d["overhead_none_s"]), float(d["overhead_spec_s"])
        if min(over) < 0:
            raise ValueError("a negative overhead")
        length = float(d.get("overhead_spec_length", 8.0))
        if not length > 0:
            raise ValueError("a draft length of 0 or less")
        scale = float(d.get("loop_scale", 1.0))
        if not scale > 0:
            raise ValueError("a scale of 0 or less")
        return cls(target, pts(d["draft"]), *over, length, scale, float(d.get("drift", 0.0)))

    def scaled_to_loop(self, step: float, depth: int) -> Curve:
        """Every decode time scaled so that t(1) at `depth` is `step`, the single step the
        generation loop itself measured: a decode timed apart (the KV cache cut back after
        each) runs a few percent slower than the same decode inside the loop."""
        return self.scaled(step / self.t(1, depth))

    def scaled(self, factor: float) -> Curve:
        """Every decode time multiplied by `factor` (kept in loop_scale)."""

        def times(curves: dict[int, tuple[Point, ...]]) -> dict[int, tuple[Point, ...]]:
            return {d: tuple(replace(p, median=p.median * factor) for p in pts) for d, pts in curves.items()}

        return replace(self, target=times(self.target), draft=times(self.draft), loop_scale=self.loop_scale * factor)
