"""Speculation for several users of one llama-server: the aggregate tok/s at each number of
busy slots, with and without speculation, and the concurrency from which speculation loses.

llama-server (server-context.cpp, `update_slots`) runs a round for every busy slot together:
the draft model drafts for all drafting slots at once (one decode of one token per slot per
draft step, common/speculative.cpp), then one `llama_decode` verifies every slot's last
token and draft; with a draft model the draft context then decodes that same batch again
(`common_speculative_process`). With `-np N` each slot has its own KV cache, and a batch
whose slots hold different numbers of tokens is split into ubatches of equal tokens per
slot (llama-batch.cpp, `split_equal`): a round where only some slots draft runs two passes.

So a round at c busy slots costs, with T(c, b) the decode of c sequences x b tokens each:
    none:         T(c, 1)                                            for c tokens
    draft model:  T(c, k+1) + k * Td(c, 1) + Td(c, k+1)              for c (1 + accepted)
    n-gram:       sum over j drafting slots (binomial in the share q) of
                  T(c, 1 + j L / c) + (0 < j < c) * T(1, 1)          for c (1 + q accepted)
plus each slot's overhead per round (the plan's). T is measured here (llama/sequences.py) at
the curve's depths, for the levels asked and the batch sizes those formulas read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from spectui.bounded import CONFIG_BYTES, loads_json, read_bytes
from spectui.engine import noise
from spectui.errors import UserError
from spectui.plan.cache import cache_path, forget_stale
from spectui.plan.curve import NOISY, Curve, Point, fitted
from spectui.plan.decodes import DEPTHS
from spectui.plan.predict import N_MAX, Drafting, Prediction, round_overhead, timing_spread
from spectui.spec_types import BASELINE

FORMAT = "spectui-plan-concurrency/2"
MAX_LEVEL = 64  # slots; the measurement decodes max level x (longest draft + 1) tokens at once
MAX_LEVELS = 6  # levels the table shows within 80 columns
REPEATS = 3  # timed passes after the warm-up: c x b sizes are many, so a fixed count bounds the time


# --- the model ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Level:
    """What was timed at c busy slots: a Curve whose t(b) is T(c, b) (c sequences x b tokens in
    one decode) and t_draft(b) the draft model's Td(c, b), with the plan's overheads."""

    c: int
    curve: Curve


def _binomial(n: int, q: float) -> list[float]:
    return [math.comb(n, j) * q**j * (1 - q) ** (n - j) for j in range(n + 1)]


def round_seconds(level: Level, single: Level, d: Drafting, depth: int) -> float:
    """Seconds of one server round at `level`'s c busy slots, every slot drafting as `d` does
    (none: share 0). `single` is level 1: a second pass's fixed cost, when drafts split the batch."""
    c, cv = level.c, level.curve
    verify = 0.0
    for j, p in enumerate(_binomial(c, d.share)):
        if p:
            split = single.curve.t(1, depth) if 0 < j < c else 0.0
            verify += p * (cv.t(1 + j * d.length / c, depth) + split)
    drafting = 0.0
    if d.model and d.share:
        drafting = d.share * (d.length * cv.t_draft(1, depth) + cv.t_draft(d.length + 1, depth))
    return verify + drafting + c * round_overhead(cv, d)


def aggregate(level: Level, single: Level, d: Drafting, depth: int) -> float:
    """tok/s summed over c busy slots."""
    return level.c * (1 + d.share * d.accepted) / round_seconds(level, single, d, depth)


NONE = Drafting(0.0, 0.0, 0.0, False)


@dataclass(frozen=True)
class Row:
    """One configuration across the levels: aggregate tok/s, speedup over none, each level's
    timing noise (timing_spread, as the plan's rows) and engine.noise's word for it, and the first
    level where it loses (None: it pays at every level)."""

    spec_type: str
    n_max: int | None
    tok_per_s: tuple[float, ...]
    speedup: tuple[float, ...]
    noise: tuple[float, ...]
    levels: tuple[int, ...]

    @property
    def break_even(self) -> int | None:
        """The first level asked where speculation's aggregate falls below none's."""
        return next((c for c, s in zip(self.levels, self.speedup) if s < 1), None)

    @property
    def words(self) -> tuple[str, ...]:
        """engine.noise's word at each level."""
        return tuple(noise.judge(s, n).word for s, n in zip(self.speedup, self.noise))

    @property
    def uncertain(self) -> bool:
        """The timing noise could move the break-even one level: within noise there or at the
        level before."""
        i = len(self.levels) - 1 if self.break_even is None else self.levels.index(self.break_even)
        return noise.WITHIN in self.words[max(0, i - 1) : i + 1]

    @property
    def verdict(self) -> str:
        if self.spec_type == BASELINE:
            return "the baseline"
        be = self.break_even
        if be is None:
            text = f"{noise.PAYS} at every level asked"
        elif be == self.levels[0] and all(s < 1 for s in self.speedup):
            text = f"{noise.LOSES} at every level asked"
        else:
            text = f"loses from {be} slot{'s' if be > 1 else ''}"
        return text + (f" ({noise.WITHIN} around it)" if self.uncertain else "")

    def as_dict(self) -> dict:
        return {
            "spec_type": self.spec_type,
            "n_max": self.n_max,
            "tok_per_s": list(self.tok_per_s),
            "speedup": list(self.speedup),
            "noise": list(self.noise),
            "words": list(self.words),
            "break_even_concurrency": self.break_even,
            "within_noise": self.uncertain,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class Concurrency:
    """Every configuration the plan predicts, at each level of busy slots."""

    levels: tuple[int, ...]
    depth: int
    timed: dict[int, Level]  # the levels asked and 1
    rows: tuple[Row, ...]  # none first
    memory: dict | None = None  # slots_that_fit's answer
    plan_none: float | None = None  # the single-user plan's none tok/s at `depth`, from its own curve

    def moved(self) -> str | None:
        """Why these timings and the plan's curve disagree on none at one slot (the same decode,
        timed twice: the machine's speed changed between the two), or None where they agree."""
        if not self.plan_none:
            return None
        here = aggregate(self.timed[1], self.timed[1], NONE, self.depth)
        allowed = max(NOISY, *(p.spread for p in self.timed[1].curve.points()))
        if abs(here / self.plan_none - 1) <= allowed:
            return None
        return (
            f"none at one slot runs {here:.1f} tok/s in these timings and {self.plan_none:.1f} in the plan's curve: "
            "the machine's speed changed between the two timings, so each holds for its own moment only"
        )

    def as_dict(self) -> dict:
        return {
            "levels": list(self.levels),
            "depth": self.depth,
            "rows": [r.as_dict() for r in self.rows],
            "timings": {str(c): lv.curve.as_dict() for c, lv in sorted(self.timed.items())},
            "memory": self.memory,
            "moved": self.moved(),
        }


def predict_levels(
    timed: dict[int, Level], levels: Sequence[int], predictions: Iterable[Prediction], depth: int
) -> tuple[Row, ...]:
    """none's row, then one per prediction with a measured acceptance."""
    single = timed[1]

    def row(spec_type: str, n_max: int | None, d: Drafting) -> Row:
        tps = tuple(aggregate(timed[c], single, d, depth) for c in levels)
        nones = tuple(aggregate(timed[c], single, NONE, depth) for c in levels)
        return Row(
            spec_type,
            n_max,
            tps,
            tuple(a / b for a, b in zip(tps, nones)),
            tuple(timing_spread(timed[c].curve, d) for c in levels),
            tuple(levels),
        )

    rows = [row(BASELINE, None, NONE)]
    rows += [row(p.spec_type, p.n_max, p.drafting) for p in predictions if p.alpha is not None and p.drafting.share]
    return tuple(rows)


def sizes_needed(model_type: str | None, longest: int) -> tuple[list[int], list[int]]:
    """The batch sizes per slot to time, fixed by the setup (not by the acceptance, which moves
    with every saved answer): a draft model's k+1 for n-max 1..8 (and its own 1 and k+1),
    else a few sizes up to the longest n-gram draft + 1; between them t is linear."""
    target = {1, 2, 3, 5, 9, longest + 1} if longest else {1}
    draft: set[int] = set()
    if model_type:
        target |= {k + 1 for k in N_MAX}
        draft = {1} | {k + 1 for k in N_MAX}
    return sorted(target), sorted(draft)


# --- memory ------------------------------------------------------------------------------


def slots_that_fit(projection, levels: Sequence[int]) -> dict:
    """How many slots of `-c N` (N the projection's context) fit: llama-server at `-np S`
    splits -c among its slots, so each slot of N tokens needs `-c S*N`; the KV cache grows by
    one slot's cells per slot, the models and compute buffers stay (those grow a little with
    the batch: not counted)."""
    per_slot = sum(d.target.context + (d.draft.context if d.draft else 0) for d in projection.devices)
    fits = []
    for d in projection.devices:
        kv = d.target.context + (d.draft.context if d.draft else 0)
        if d.free is not None and kv:
            fits.append(((d.free - (d.need - kv)) // kv, d.name))
    most, device = min(fits) if fits else (None, None)
    return {
        "n_ctx_per_slot": projection.n_ctx,
        "kv_bytes_per_slot": per_slot,
        "need_bytes": {str(c): sum(d.need for d in projection.devices) + (c - 1) * per_slot for c in levels},
        "max_slots": max(0, most) if most is not None else None,
        "limited_by": device,
    }


# --- measuring and the cache -------------------------------------------------------------


def measure(
    setup,
    target: Path,
    draft: Path | None,
    levels: Sequence[int],
    sizes: tuple[Sequence[int], Sequence[int]],
    filler: Sequence[int],
    status: Callable[[str], object] = lambda s: None,
    repeats: int = REPEATS,
) -> dict[int, Curve]:
    """T(c, b) and Td(c, b) for every level and size, at each of the curve's depths: one warm-up
    pass, then `repeats` passes in rotated orders (as the curve's decodes)."""
    from spectui.llama.model import Model
    from spectui.llama.sequences import Sequences

    n_seq = max(levels)
    width = max(max(s) for s in sizes if s)
    tokens = [filler[i % len(filler)] for i in range(max(DEPTHS) + width)]
    found: dict[str, dict[int, dict[int, tuple[Point, ...]]]] = {"target": {}, "draft": {}}
    for role, path, role_sizes in (("target", target, sizes[0]), ("draft", draft, sizes[1])):
        if path is None or not role_sizes:
            continue
        is_draft = role == "draft"
        model = Model(path, n_gpu_layers=setup.n_gpu_layers_draft if is_draft else setup.n_gpu_layers)
        try:
            params = setup.ctx_params(draft=is_draft)
            with Sequences(model, params, n_seq, max(DEPTHS) + width + 1, n_seq * width) as seqs:
                for depth in DEPTHS:
                    status(f"timing the {role}'s decodes of {', '.join(map(str, levels))} sequences at depth {depth}")
                    seqs.fill(tokens[:depth])
                    order = [(c, b) for c in levels for b in role_sizes]
                    samples: dict[tuple[int, int], list[float]] = {cb: [] for cb in order}
                    for rep in range(repeats + 1):  # pass 0 warms up
                        for c, b in order[rep % len(order) :] + order[: rep % len(order)]:
                            dt = seqs.decode_timed(tokens[depth : depth + b], c)
                            if rep:
                                samples[c, b].append(dt)
                    for c in levels:
                        pts = fitted([Point.of(b, samples[c, b]) for b in role_sizes])  # as the plan's curve
                        found[role].setdefault(c, {})[depth] = pts
        finally:
            model.close()
    return {c: Curve(found["target"][c], found["draft"].get(c, {}), 0.0, 0.0) for c in levels}


def cache_key(key: dict, levels: Sequence[int], sizes: tuple[Sequence[int], Sequence[int]]) -> dict:
    """The curve's identity, the levels timed and the sizes: a file beside the curve's."""
    return {**key, "concurrency": {"levels": list(levels), "sizes": [list(s) for s in sizes], "depths": list(DEPTHS)}}


def load(ckey: dict) -> tuple[dict[int, Curve] | None, str | None]:
    """The cached timings for `ckey`, or None and why not (None: nothing cached)."""
    path = cache_path(ckey)
    if not path.is_file():
        return None, None
    try:
        doc = loads_json(read_bytes(path, "cached concurrency timings", CONFIG_BYTES).decode("utf-8"))
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("key") != ckey:
            return None, f"{path} holds other concurrency timings: measuring again"
        return {int(c): Curve.from_dict(d) for c, d in doc["levels"].items()}, None
    except UserError as e:
        return None, f"{e}: measuring again"
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as e:
        return None, f"{path} is corrupt ({type(e).__name__}: {e}): measuring again"


def store(ckey: dict, timed: dict[int, Curve]) -> Path:
    from spectui.config.paths import write_atomic

    doc = {"format": FORMAT, "key": ckey, "levels": {str(c): cv.as_dict() for c, cv in sorted(timed.items())}}
    forget_stale()
    return write_atomic(cache_path(ckey), json.dumps(doc, indent=1))


def levels_for(timed: dict[int, Curve], plan_curve: Curve) -> dict[int, Level]:
    """The timed curves with the plan's overheads, scaled as the plan's curve was (a decode
    timed apart against the generation loop's own step)."""
    p = plan_curve
    return {
        c: Level(
            c,
            replace(
                cv, overhead_none=p.overhead_none, overhead_spec=p.overhead_spec, overhead_length=p.overhead_length
            ).scaled(p.loop_scale),
        )
        for c, cv in timed.items()
    }
