"""What this machine's costs predict for each bench configuration, for the verdict to cite.

The curve is the one `spectui plan` cached for the pair where there is one; else the bench
times the decodes itself, with its loaded session after the runs, and takes the overhead per
round from its own runs (the baseline's and each configuration's). A curve timed here goes
into the result, never into plan's cache: plan's document also holds a calibration.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from spectui.bench.citation import BENCH, PLAN_CACHE
from spectui.bench.protocol import BASELINE, Config, Measurement, Run
from spectui.engine.interface import chat_messages
from spectui.plan import cache, decodes, identity
from spectui.plan.acceptance_sources import build_plan
from spectui.plan.curve import Curve
from spectui.plan.observed import read_run
from spectui.plan.predict import tok_per_s_none
from spectui.spec_config import NGRAM_TYPES
from spectui.spec_config import unpriced as spec_unpriced


@dataclass(frozen=True)
class Costs:
    curve: Curve  # BENCH: decodes only; the overheads come per configuration from its runs
    source: str  # PLAN_CACHE or BENCH

    def as_dict(self) -> dict:
        out = {"source": self.source, **self.curve.as_dict()}
        if self.source == BENCH:
            out.update(overhead_none_s=None, overhead_spec_s=None)  # each prediction holds the ones it used
        return out


def unpriced(cfg: Config, draft_step: bool) -> str | None:
    """Why a curve (with a draft model's step or not) cannot price this configuration; None
    where it can."""
    why = spec_unpriced(cfg.spec.types, draft_step)
    return why.reason if why else None


def _overhead(runs: Sequence[Run]) -> float | None:
    """The median seconds per round outside llama.cpp."""
    ms = [r.summary.timing.overhead_ms_per_round for r in runs]
    known = [v for v in ms if v is not None]
    return statistics.median(known) / 1000 if known else None


def predicted(costs: Costs, cfg: Config, runs: Sequence[Run], base: Sequence[Run]) -> dict:
    """The prediction for one configuration's runs of a group (`base`: the baseline's), at
    the runs' mean context depth and their recorded drafting; or the `reason` there is none."""
    if why := unpriced(cfg, bool(costs.curve.draft)):
        return {"reason": why}
    run = read_run([rd for r in runs for rd in r.rounds], cfg.spec)
    if not run.drafts or run.depth is None:
        return {"reason": "nothing was drafted"}
    d, depth = run.drafting, run.depth
    c = costs.curve
    if costs.source == BENCH:
        over_none, over_spec = _overhead(base), _overhead(runs)
        if over_none is None or over_spec is None:
            return {"reason": "no overhead per round was measured"}
        # this configuration's own overhead, at the drafting it ran (predict scales it per draft step)
        c = replace(c, overhead_none=over_none, overhead_spec=over_spec, overhead_length=d.share * d.length)
    p = build_plan(c, cfg.spec, depth, run=run).row(run.spec_type, run.n_max)
    assert p is not None  # a plan of the run's one type
    return {
        "curve_source": costs.source,
        "predicted_speedup": p.speedup,
        "predicted_tok_per_s": p.tok_per_s,
        "predicted_tok_per_s_none": tok_per_s_none(c, depth),
        "break_even_alpha": p.break_even,
        "measured_alpha": d.alpha,
        "draft_share": d.share,
        "draft_length": d.length,
        "depth": depth,
        "overhead_none_s": c.overhead_none,
        "overhead_spec_s": c.overhead_spec,
    }


def predictions(costs: Costs, configs: list[Config], runs: Sequence[Run]) -> dict[tuple[str, str], dict]:
    """(group, configuration) -> its prediction, for every speculative configuration measured."""
    out = {}
    for cfg in configs:
        mine = [r for r in runs if r.config == cfg.label]
        for group in dict.fromkeys(r.prompt.group for r in mine):
            base = [r for r in runs if r.config == BASELINE and r.prompt.group == group]
            if not cfg.is_baseline:
                out[group, cfg.label] = predicted(costs, cfg, [r for r in mine if r.prompt.group == group], base)
    return out


def _filler(session, runs: Sequence[Run], system: str | None) -> list[int]:
    """The runs' prompt and answer tokens, each prompt once: the text the decodes are timed on."""
    out: list[int] = []
    seen = set()
    for r in runs:
        if r.prompt.id not in seen:
            seen.add(r.prompt.id)
            out += session.target.tokenize_chat(chat_messages([("user", r.prompt.text)], system)) + list(r.tokens)
    return out


def costs(
    session, setup, configs: list[Config], m: Measurement, system: str | None, status: Callable[[str], object]
) -> tuple[Costs | None, str | None]:
    """The pair's cost curve, or None and why not. `session` is the bench's loaded Session."""
    priceable = [c for c in configs if not c.is_baseline and unpriced(c, True) is None]
    if not priceable:
        reasons = dict.fromkeys(why for c in configs if not c.is_baseline and (why := unpriced(c, True)))
        return None, "; ".join(reasons) or "no speculative configuration"
    draft = session.draft if session.draft_ctx is not None else None
    key = identity.key(setup, session.target.path, draft.path if draft else None)
    doc, _ = cache.load_cached(key)  # a stale or foreign file is plan's to replace
    if doc is not None:
        return Costs(Curve.from_dict(doc["curve"]), PLAN_CACHE), None
    if m.partial:
        return None, "the bench stopped before this machine's decodes were timed"
    # the longest n-gram draft measured, not the longest the sizes allow: timing that batch costs the most
    ngram = {c.label for c in priceable if c.spec.types[0] in NGRAM_TYPES}
    longest = max((rd.n_drafted for r in m.runs if r.config in ngram for rd in r.rounds), default=0)
    n_max = max([8, *(c.n_max for c in priceable if c.n_max)])  # a draft model's rounds at each n-max run
    deepest = max(decodes.DEPTHS) + max(decodes.batch_sizes(longest, n_max))
    if session.ctx.n_ctx < deepest:
        return None, f"the context (-c {session.ctx.n_ctx}) is too small to time decodes at {deepest} tokens"
    draft_ctx = session.draft_ctx if any(c.spec.needs_draft_model for c in priceable) else None
    status("timing this machine's decodes for the verdict")
    said = [time.monotonic()]

    def progress(what: str, left: float) -> None:
        """A line every 20 s at most, so a log shows a minutes-long timing is alive."""
        if time.monotonic() - said[0] >= 20:
            said[0] = time.monotonic()
            status(f"timing this machine's decodes: {what} done, about {left:.0f} s left")

    try:
        filler = _filler(session, m.runs, system)
        timed = decodes.measure_decodes(session.ctx, draft_ctx, filler, longest, n_max, progress)
    except KeyboardInterrupt:
        return None, "the timing of this machine's decodes was interrupted"
    except Exception as e:  # noqa: BLE001 - the measured runs matter more than the citation
        return None, f"timing this machine's decodes failed ({type(e).__name__}: {e})"
    return Costs(timed, BENCH), None
