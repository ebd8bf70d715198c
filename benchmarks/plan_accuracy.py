"""How close `spectui plan`'s predictions come to measured tok/s.

    python benchmarks/plan_accuracy.py [--presets default,fast] [--lang en] [--limit 2] [--repeat 3] [-n 128]
                                       [--n-max 1,3,5,8] [--temp 0] [--remeasure] [--json OUT] [--smoke]

`--smoke` checks that it runs end to end in a minute or two (SmolLM2, one prompt, one repeat, 16
tokens, n-max 1 and 2): its figures mean nothing. Progress goes to stderr, one whole line per
finished run with the time elapsed and left.

Per pair: `spectui plan`'s document (from its cache, else measured now, as plan does: the
calibration and overheads), then none, ngram-simple, ngram-mod and draft-simple at each n-max
measured with the bench's protocol (spectui/bench/protocol.py: warm-up, interleaved and
rotated runs, repeats). The fast preset has no draft model: SmolLM2 drafts for itself there.

The decode costs are timed as plan times them (plan/decodes.measure_decodes), with the runs' own
session, before the first pass and after each: the point-wise median of those curves is
the one predicted from, so a drift of the machine's speed over the minutes of the runs
weighs on both sides alike; the spread of t(1) across them is printed as that drift.

For each configuration, the prediction is made from the curve and the acceptance the same
runs measured (for an n-gram type: its share of drafting rounds, their length and accepted
tokens; for draft-simple: acceptance per position), at the runs' mean context depth; the
what-if predicts every smaller n-max from the largest n-max's runs alone. Prints measured
against predicted tok/s, the errors, and their median and maximum. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from spectui.bench import prompts as prompt_set
from spectui.bench import protocol
from spectui.bench.results import median
from spectui.cli import plan as plan_command
from spectui.cli.loading import loading_line
from spectui.cli.phases import Phases
from spectui.config.resolve import resolve
from spectui.engine.events import TurnEnd
from spectui.launch.opening import checked_models, open_session
from spectui.llama import draft_fit
from spectui.plan import acceptance, cache, curve, decodes, identity
from spectui.plan.observed import read_run
from spectui.plan.predict import tok_per_s, tok_per_s_none


def relative_error(predicted: float, measured: float) -> float:
    return abs(predicted - measured) / measured if measured > 0 else math.inf


def measured_tok_per_s(runs: list[protocol.Run]) -> float | None:
    """The bench's figure: per prompt the median of its runs, then the median over prompts."""
    by_prompt: dict[str, list[float]] = {}
    for r in runs:
        if r.summary.timing.tok_per_s:
            by_prompt.setdefault(r.prompt.id, []).append(r.summary.timing.tok_per_s)
    return median(statistics.median(v) for v in by_prompt.values())


def plan_document(setup, remeasure: bool, phases: Phases) -> dict:
    """spectui plan's document for this pair and machine: cached, else (or `remeasure`)
    measured and cached."""
    target, draft = checked_models(setup)
    key = identity.key(setup, target, draft)
    doc = None if remeasure else cache.load_cached(key, plan_command.check_calibration)[0]
    if doc is None:
        model_type = draft_fit.read_header(draft).draft_type if draft else None
        doc = plan_command._measure(setup, model_type, phases)
        cache.store(key, doc)
    return doc


def pooled(curves: list[curve.Curve], planned: curve.Curve) -> curve.Curve:
    """Each point's median over the curves; its spread, that median's range across them; the
    overheads plan's, and its scale to the generation loop's single step."""

    def points(parts: list[dict[int, tuple[curve.Point, ...]]]) -> dict[int, tuple[curve.Point, ...]]:
        out = {}
        for depth, first in parts[0].items():
            medians = [[next(q.median for q in part[depth] if q.b == p.b) for part in parts] for p in first]
            out[depth] = curve.fitted([curve.Point.of(p.b, m) for p, m in zip(first, medians, strict=True)])
        return out

    drafts = [c.draft for c in curves]
    pooled = replace(
        planned, target=points([c.target for c in curves]), draft=points(drafts) if drafts[0] else {}, loop_scale=1.0
    )
    return pooled.scaled(planned.loop_scale)


def one_pair(preset: str, args, phases: Phases) -> list[dict]:
    overrides: dict = {"temp": args.temp}
    base = resolve(preset, {})
    if not base.model_draft:  # the fast preset: SmolLM2 drafts for itself
        overrides["model_draft"] = base.model
    setup = resolve(preset, overrides | {"spec_type": "draft-simple"})
    doc = plan_document(setup, args.remeasure, phases)
    planned = curve.Curve.from_dict(doc["curve"])
    filler = acceptance.Calibration.from_dict(doc["calibration"]).filler
    n_maxes = [int(x) for x in args.n_max.split(",")]
    configs = protocol.plan(setup.spec, [("ngram-simple",), ("ngram-mod",), ("draft-simple",)], n_maxes)
    chosen = prompt_set.select(prompt_set.shipped(), args.lang, "all", args.limit)[: 1 if args.smoke else None]
    proto = protocol.Protocol(n_predict=args.n, repeat=args.repeat, system=setup.system)
    with loading_line(phases.console) as loading:  # in a log: each step once, no tenths
        none = replace(setup, spec=setup.spec.with_types("none"))
        session = open_session(none, loading, types=("draft-simple", "none"))
    phases.done("load", f"{preset}: loaded the pair for the runs")
    longest = acceptance.ngram_longest(setup.spec)
    curves: list[curve.Curve] = []

    def time_decodes(*_) -> None:
        def passed(what: str, left: float) -> None:
            phases.done("curve", f"{preset}: timing {len(curves) + 1}, {what}", left)

        timed = decodes.measure_decodes(session.ctx, session.draft_ctx, filler, longest, max(n_maxes), passed)
        curves.append(replace(planned, target=timed.target, draft=timed.draft))

    total, ran = len(configs) * (proto.warmup + proto.repeat * len(chosen)), [0]

    def finished(cfg: protocol.Config, prompt: prompt_set.Prompt, repeat: int, event) -> None:
        """One whole line per run, the time left at the pace of the runs before it."""
        if isinstance(event, TurnEnd):
            pace = phases.seconds["runs"] / ran[0] if ran[0] else None
            ran[0] += 1
            left = pace * (total - ran[0]) if pace else None
            phases.done("runs", f"{preset}: {cfg.label} on {prompt.id} ({ran[0]}/{total})", left)

    t0 = time.perf_counter()
    try:
        time_decodes()
        m = protocol.measure(session, configs, chosen, proto, on_event=finished, on_pass=time_decodes)
    finally:
        session.close()
    print(f"{preset}: measured in {time.perf_counter() - t0:.0f} s{' (partial)' if m.partial else ''}")
    c = pooled(curves, planned)
    t1 = [one.t(1, 64) * 1000 for one in curves]
    print(f"{preset}: t(1) at depth 64 across the {len(curves)} timings: {min(t1):.2f}..{max(t1):.2f} ms")
    runs: dict[str, list[protocol.Run]] = {}
    for r in m.runs:
        runs.setdefault(r.config, []).append(r)
    largest = max(n_maxes)
    rows = []
    for cfg in configs:
        got = runs.get(cfg.label, [])
        rounds = [rd for r in got for rd in r.rounds]
        if not rounds:
            continue
        depth = round(statistics.fmean(rd.n_past for rd in rounds))
        measured = measured_tok_per_s(got)
        if cfg.is_baseline:
            predicted, what_if = tok_per_s_none(c, depth), None
        else:
            predicted = tok_per_s(c, read_run(rounds, cfg.spec).drafting, depth)
            what_if = None
            if cfg.n_max is not None and cfg.n_max < largest:
                big = [rd for r in runs.get(f"draft-simple n={largest}", []) for rd in r.rounds]
                if big:
                    from_largest = read_run(big, cfg.spec).drafting
                    what_if = tok_per_s(c, from_largest, depth)
        rows.append(
            {
                "pair": preset,
                "config": cfg.label,
                "depth": depth,
                "overhead_ms": statistics.median(r.summary.timing.overhead_ms_per_round or 0.0 for r in got),
                "measured": measured,
                "predicted": predicted,
                "error": relative_error(predicted, measured) if measured else None,
                "what_if": what_if,
                "what_if_error": relative_error(what_if, measured) if measured and what_if else None,
            }
        )
    return rows


def report(rows: list[dict]) -> None:
    print(
        f"{'pair':<8}{'configuration':<20}{'overhead':>9}{'measured':>10}{'predicted':>10}{'error':>8}"
        f"{'what-if':>9}{'error':>8}"
    )
    for r in rows:
        wi = f"{r['what_if']:>9.2f}{100 * r['what_if_error']:>7.1f}%" if r["what_if"] else ""
        print(
            f"{r['pair']:<8}{r['config']:<20}{r['overhead_ms']:>7.2f}ms"
            f"{r['measured'] or 0:>10.2f}{r['predicted']:>10.2f}"
            f"{100 * (r['error'] or 0):>7.1f}%{wi}"
        )
    for name, key in (("predicted", "error"), ("what-if", "what_if_error")):
        errs = [r[key] for r in rows if r[key] is not None]
        if errs:
            mid, top = 100 * statistics.median(errs), 100 * max(errs)
            print(f"{name}: median error {mid:.1f}%, max {top:.1f}% ({len(errs)} configurations)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--presets", default="default,fast")
    p.add_argument("--lang", default="en", help="the shipped prompts' language (all: every one)")
    p.add_argument("--limit", type=int, default=2, help="prompts per language and category")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("-n", type=int, default=128, help="tokens per run")
    p.add_argument("--n-max", default="1,3,5,8")
    p.add_argument("--temp", type=float, default=0.0)
    p.add_argument("--remeasure", action="store_true", help="measure the curve now, not from plan's cache")
    p.add_argument("--json", help="write the rows here")
    p.add_argument("--smoke", action="store_true", help="a check that it runs (fast preset, 1 prompt, 16 tokens)")
    args = p.parse_args()
    if args.smoke:
        args.presets, args.repeat, args.n, args.n_max = "fast", 1, 16, "1,2"
    phases = Phases(Console(stderr=True))
    rows = [row for preset in args.presets.split(",") for row in one_pair(preset, args, phases)]
    report(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
