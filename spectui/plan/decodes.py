"""Timing the decodes a plan's predictions read, and no others: the target's batches of 1 (`none`)
and k + 1 for every n-max k of the table, knots up to the longest n-gram draft + 1 (between
them t is linear), the draft model's 1 and 2 tokens, at two depths: 64, and the depth the plan
predicts at by default.

Each size of the table is repeated, in a rotating order so that a drift of the machine's speed
spreads over every size, until its repeats agree within SETTLED (one hiccup excused once there
are three) or most_repeats is reached: a knot, a long decode, is timed MIN_REPEATS times. The
depths are filled once, from what the context already holds of the filler, the deeper
extending the shallower; then t(1) is timed again at the first depth: how far it moved is the
curve's drift. A decode asks for every row's argmax, as a greedy verification does.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Collection, Sequence

from spectui.engine.auto import DEPTH
from spectui.engine.noise import steady_spread
from spectui.plan.curve import Curve, Point, fitted

DEPTHS = (64, DEPTH)
DRAFT_BATCHES = (1, 2)
MIN_REPEATS, MAX_REPEATS = 2, 3  # 3: the fewest where one hiccup can be left out of the spread
T1_REPEATS = 5  # t(1): every prediction and the loop's scale rest on it, and it is the cheapest
SETTLED = 0.05  # a size whose repeats agree within this ((max - min) / median) is timed no more
# the cost of a batch of b in single steps before any is timed (b^0.8: the 2-core CPU's t(65)/t(1)
# is 30), and of a token of a fill: what the time-left estimate starts from
PRIOR_EXPONENT, FILL_COST = 0.8, 0.45

Progress = Callable[[str, float], object]  # (what just finished, seconds left of the timing)


def batch_sizes(longest: int, n_max: int = 8) -> tuple[int, ...]:
    """1 and k + 1 for k up to `n_max` (a draft model's round at each n-max), then knots at
    2^i + 1 and the longest n-gram draft + 1: an n-gram round's cost is read between them."""
    top = max(n_max, longest) + 1
    knots = {2**i + 1 for i in range(4, top.bit_length() + 1) if 2**i + 1 < top}
    return tuple(sorted({*range(1, n_max + 2), *knots, top}))


def most_repeats(b: int, knot: bool = False) -> int:
    """A size's repeats at most: a knot's MIN_REPEATS (65 tokens take 2 s on a 2-core CPU, and
    its predictions read a line between knots), t(1)'s T1_REPEATS, another's MAX_REPEATS."""
    return MIN_REPEATS if knot else T1_REPEATS if b == 1 else MAX_REPEATS


def settled(samples: Sequence[float], most: int = MAX_REPEATS) -> bool:
    """Enough repeats: MIN_REPEATS within SETTLED, or all but the one furthest from the median
    once there are three (a page fault or another process's burst hits one decode), or `most`."""
    n = len(samples)
    return n >= most or (n >= MIN_REPEATS and (steady_spread(samples) or 0.0) <= SETTLED)


def _unsettled(samples: dict[int, list[float]], knots: Collection[int]) -> list[int]:
    return [b for b, got in samples.items() if not settled(got, most_repeats(b, b in knots))]


def _cost(b: int, depth: int) -> float:
    """A batch's prior cost in single steps at the first depth (attention adds with depth)."""
    return b**PRIOR_EXPONENT * (1 + (depth - DEPTHS[0]) / 2000)


def step_guess(rounds: Sequence) -> float | None:
    """A single step's seconds read off a generation's rounds (engine Rounds), each verification
    at its prior cost: where the time-left estimate starts before the curve is timed."""
    steps = [r.t_verify / (r.n_drafted + 1) ** PRIOR_EXPONENT for r in rounds if r.t_verify > 0]
    return statistics.median(steps) if steps else None


def prior_seconds(t1: float, sizes: Sequence[int], draft: bool) -> float:
    """The whole timing's seconds expected from a single step of t1 seconds, before any is timed."""
    return t1 * Left(sizes, draft).units()


class Left:
    """What is left to time, in prior single steps (each size MIN_REPEATS times where nothing
    says otherwise); the seconds of one, learned from the passes timed so far."""

    def __init__(self, sizes: Sequence[int], draft: bool):
        self.sizes, self.draft = tuple(sizes), draft
        self.depth_i, self.todo = 0, [b for b in sizes for _ in range(MIN_REPEATS)]
        self.timed_units = self.timed_s = 0.0

    def units(self) -> float:
        here = sum(_cost(b, DEPTHS[self.depth_i]) for b in self.todo)
        later = sum(MIN_REPEATS * _cost(b, d) for d in DEPTHS[self.depth_i + 1 :] for b in self.sizes)
        fill = FILL_COST * (DEPTHS[-1] - DEPTHS[self.depth_i]) + (0 if self.timed_units else FILL_COST * DEPTHS[0])
        draft = 0.5 * (FILL_COST * DEPTHS[-1] + 3 * MIN_REPEATS * len(DEPTHS)) if self.draft else 0.0
        return here + later + fill + draft + MIN_REPEATS + 1  # and the re-check of t(1)

    def passed(self, depth_i: int, units: float, seconds: float, todo: Sequence[int]) -> None:
        self.depth_i, self.todo = depth_i, list(todo)
        self.timed_units, self.timed_s = self.timed_units + units, self.timed_s + seconds

    def seconds(self) -> float:
        return self.units() * self.timed_s / self.timed_units if self.timed_units else 0.0


def _decode_seconds(ctx, batch: Sequence[int]) -> float:
    depth = ctx.n_past
    t0 = time.perf_counter()
    ctx.decode_argmax(batch, range(len(batch)))
    dt = time.perf_counter() - t0
    ctx.truncate(depth)
    return dt


def _recheck(ctx, two: Sequence[int]) -> float:
    """t(1) after a decode of another size, as in the rotated passes (llama.cpp reuses a graph
    of the same shape: back-to-back single steps would be faster than the passes' were)."""
    _decode_seconds(ctx, two)
    return _decode_seconds(ctx, two[:1])


def decode_times(
    ctx,
    sizes: Sequence[int],
    filler: Sequence[int],
    depths: Sequence[int] = DEPTHS,
    progress: Progress = lambda what, left: None,
    left: Left | None = None,
    knots: Collection[int] = (),
) -> tuple[dict[int, tuple[Point, ...]], float]:
    """Seconds to decode each batch size after each depth of `filler` (cycled) in `ctx` (a
    llama/context.Context, left empty), fitted non-decreasing, and the drift of t(1): on a GPU a
    warm-up decode of the largest size, passes over the sizes not yet settled (`knots` timed
    MIN_REPEATS times), and t(1) again at the first depth after the rest. The weights are paged
    in by what ran before (the calibration, a bench's runs)."""
    tokens = [filler[i % len(filler)] for i in range(max(depths) + max(sizes))]
    left = left or Left(sizes, False)
    ctx.truncate(min(ctx.common_prefix(tokens), depths[0]))  # a prompt the calibration decoded is kept
    out = {}
    for i, depth in enumerate(depths):
        if depth > ctx.n_past:
            ctx.decode(tokens[ctx.n_past : depth])  # the deeper extends the shallower
        batch = tokens[depth : depth + max(sizes)]
        if not i and ctx.model.devices:  # a GPU backend builds a shape's kernels on first use: once, untimed
            _decode_seconds(ctx, batch)
        samples: dict[int, list[float]] = {b: [] for b in sizes}
        for rep in range(T1_REPEATS):
            todo = _unsettled(samples, knots)
            if not todo:
                break
            t0 = time.perf_counter()
            for b in todo[rep % len(todo) :] + todo[: rep % len(todo)]:
                samples[b].append(_decode_seconds(ctx, batch[:b]))
            units = sum(_cost(b, depth) for b in todo)
            left.passed(i, units, time.perf_counter() - t0, _unsettled(samples, knots))
            what = f"{len(todo)} sizes" if len(todo) > 1 else f"b = {todo[0]}"
            progress(f"depth {depth}, pass {rep + 1} ({what})", left.seconds())
        out[depth] = fitted([Point.of(b, samples[b]) for b in sizes])
    ctx.truncate(depths[0])  # the same tokens as the first depth's fill
    again = statistics.median(_recheck(ctx, tokens[depths[0] : depths[0] + 2]) for _ in range(MIN_REPEATS + 1))
    ctx.truncate(0)
    first = next(p.measured for p in out[depths[0]] if p.b == 1)
    return out, again / first - 1


def measure_decodes(
    target_ctx,
    draft_ctx,
    filler: Sequence[int],
    longest: int,
    n_max: int = 8,
    progress: Progress = lambda what, left: None,
) -> Curve:
    """The target's batch_sizes(longest, n_max) and the draft model's 1 and 2 at each depth in
    DEPTHS, with the target's drift of t(1): a Curve without overheads."""
    sizes = batch_sizes(longest, n_max)
    left = Left(sizes, draft_ctx is not None)
    knots = [b for b in sizes if b > n_max + 1]
    target, drift = decode_times(
        target_ctx, sizes, filler, progress=lambda w, s: progress(f"target {w}", s), left=left, knots=knots
    )
    draft: dict[int, tuple[Point, ...]] = {}
    if draft_ctx is not None:
        draft, _ = decode_times(draft_ctx, DRAFT_BATCHES, filler)
        progress("the draft model's steps", 0.0)
    return Curve(target, draft, 0.0, 0.0, drift=drift)
