"""`spectui plan --concurrency`: the multi-slot timings (cached beside the curve) and the
predictions at each level of busy slots."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from spectui.plan import acceptance, cache, concurrency
from spectui.plan.predict import tok_per_s_none
from spectui.plan.report import Plan


def run(
    levels: Sequence[int],
    setup,
    key: dict,
    plan: Plan,
    filler: Sequence[int],
    models: tuple[Path, Path | None],
    projection,
    remeasure: bool,
    status: Callable[[str], object],
) -> concurrency.Concurrency:
    """Read the timings cached for the pair, the levels and the sizes the plan's rows need, or
    time them (a minute or a few on a small CPU) and cache them; then predict."""
    rows = plan.rows
    sizes = concurrency.sizes_needed(plan.model_type, max(acceptance.ngram_longest(setup.spec), 0))
    timed_levels = sorted({1, *levels})  # level 1: a split batch's second pass
    ckey = concurrency.cache_key(key, timed_levels, sizes)
    timed, why = (None, None) if remeasure else concurrency.load(ckey)
    if why:
        status(f"note: {why}")
    if timed is None:
        cache.check_writable()
        t0 = time.perf_counter()
        timed = concurrency.measure(setup, *models, timed_levels, sizes, filler, status)
        path = concurrency.store(ckey, timed)
        status(f"timed the concurrency levels in {time.perf_counter() - t0:.0f} s; cached in {path}")
    at = concurrency.levels_for(timed, plan.curve)
    memory = concurrency.slots_that_fit(projection, levels) if projection is not None else None
    rows_at = concurrency.predict_levels(at, levels, rows, plan.depth)
    none = tok_per_s_none(plan.curve, plan.depth)
    return concurrency.Concurrency(tuple(levels), plan.depth, at, rows_at, memory, none)
