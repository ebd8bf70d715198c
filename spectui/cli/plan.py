"""`spectui plan`: will speculation pay on this machine, and will the pair fit.

The first run for a pair, build, device, threads and offload calibrates acceptance on the
starter prompts and times the decodes the predictions read (under a minute on a small CPU;
each step's seconds on stderr and in --json); later runs read both from the cache;
llama.cpp's memory projection allocates nothing.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from spectui.chat.starters import PROMPTS
from spectui.cli import interrupt
from spectui.cli.loading import loading_line, warn_build
from spectui.cli.phases import Phases
from spectui.cli.progress import ConsoleReport
from spectui.cli.setup_flags import add_setup_flags, levels_of, open_log, overrides_from
from spectui.config.resolve import resolve
from spectui.config.setup import Setup
from spectui.errors import UserError
from spectui.plan import acceptance, cache, concurrency_report, decodes, identity, memory_projection
from spectui.plan.acceptance_sources import build_plan
from spectui.plan.concurrency import MAX_LEVEL, MAX_LEVELS
from spectui.plan.curve import Curve
from spectui.plan.predict import DEPTH, N_MAX
from spectui.plan.report import render
from spectui.spec_types import BASELINE, DRAFT_SIMPLE


def add_parser(sub) -> None:
    p = sub.add_parser(
        "plan",
        help="predict whether speculation pays on this machine, and whether the pair fits",
        description="Measure this machine's costs for the pair (once; then cached), and print the "
        "cost curve, the memory projection, the break-even acceptance and predicted speedup of each "
        "spec type and n-max, and speedup against acceptance.",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object with the same content")
    p.add_argument("--remeasure", action="store_true", help="measure again, even with a curve cached")
    p.add_argument("--depth", type=int, help=f"context depth (tokens) to predict at (default {DEPTH})")
    p.add_argument(
        "--concurrency",
        metavar="C,C,..",
        help="also predict llama-server's aggregate tok/s at these numbers of busy slots (-np), e.g. 1,2,4,8, "
        "and where speculation starts to lose",
    )
    add_setup_flags(p)
    p.set_defaults(func=main)


def _check_context(setup, target: Path) -> None:
    """-c within the model's training context (its GGUF header), told before any work."""
    from spectui.llama import draft_fit

    n_train = draft_fit.read_header(target).n_ctx_train
    if n_train and setup.ctx_size > n_train:
        raise UserError(
            f"context size {setup.ctx_size} is larger than {target.name} allows ({n_train}); use -c {n_train} or less"
        )


def check_calibration(doc: dict) -> None:
    """A cached document's calibrations read back (else the file is corrupt: measured again)."""
    for entry in cache.calibrations(doc):
        acceptance.Calibration.from_dict(entry["calibration"])


def _measure(setup, model_type: str | None, phases: Phases) -> dict:
    """Load the pair, calibrate, time its decodes: the cache's document."""
    from spectui.engine.session import Session
    from spectui.launch.opening import open_session

    types = (model_type, BASELINE) if model_type else (BASELINE,)
    setup = replace(setup, spec=setup.spec.with_types(types[0]))
    warn_build(phases.console)
    with interrupt.held(), loading_line(phases.console) as loading:
        session = open_session(setup, status=loading, types=types)
    assert isinstance(session, Session)  # a local pair: plan refuses --server
    phases.done("load", "loaded the pair")
    longest = max(acceptance.ngram_longest(setup.spec), 0)
    sizes = decodes.batch_sizes(longest, max(N_MAX))

    def calibrated(what: str, left: float, rounds) -> None:
        step = decodes.step_guess(rounds)  # the curve's time, guessed from the rounds' verifications
        curve_s = decodes.prior_seconds(step, sizes, model_type is not None) if step else None
        phases.done("calibration", what, left + curve_s if curve_s else None)

    try:
        session.set_sampling(acceptance.sampling_for_calibration(setup.sampling()))
        with phases.live():
            cal = acceptance.calibrate(session, model_type, setup.spec, PROMPTS, setup.system, phases.step, calibrated)
            phases.step("timing the decodes")
            timed = decodes.measure_decodes(
                session.ctx, session.draft_ctx, cal.filler, longest, max(N_MAX), lambda w, s: phases.done("curve", w, s)
            )
    finally:
        session.close()
    c = replace(
        timed, overhead_none=cal.overhead_none, overhead_spec=cal.overhead_spec, overhead_length=cal.draft_length
    )
    if cal.loop_step is not None:
        c = c.scaled_to_loop(*cal.loop_step)
    return {
        "curve": c.as_dict(),
        "calibration": cal.as_dict(),
        "calibration_key": identity.calibration_key(setup, PROMPTS),
    }


def _width() -> int | None:
    """The terminal's columns (COLUMNS first) where stdout is one; None in a file or a pipe: lines whole."""
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def _pair_flags(preset: str | None, overrides: dict) -> str:
    """The flags that load the measured pair in the chat: the preset and the models given."""
    flags = [f"--preset {shlex.quote(preset)}"] if preset and preset != "default" else []
    flags += [
        f"{flag} {shlex.quote(overrides[k])}" for k, flag in (("model", "-m"), ("model_draft", "-md")) if k in overrides
    ]
    return " ".join(flags)


def main(args) -> int:
    from spectui.launch.opening import checked_models
    from spectui.llama import draft_fit
    from spectui.llama.runtime import configure_logging
    from spectui.store import answers

    overrides, setup, depth, levels = _plan_setup(args)
    err = Console(stderr=True, soft_wrap=True)

    def status(text: str) -> None:
        err.print(text, style="dim", highlight=False)

    configure_logging(args.verbose, open_log(args.log_file))
    phases = Phases(err)
    for note in setup.notes:
        status(f"note: {note}")
    # the vocabularies are compared where the pair loads (open_session): a cached pair has loaded
    target, draft = checked_models(setup, ConsoleReport(err), vocabularies=False)
    _check_context(setup, target)
    model_type = draft_fit.read_header(draft).draft_type if draft else None
    key = identity.key(setup, target, draft)
    calibration_key = identity.calibration_key(setup, PROMPTS)
    doc, earlier = (None, None) if args.remeasure else _cached(key, calibration_key, status)
    if doc is None:
        cache.check_writable()
    phases.done("cache", None)
    projection, no_projection = memory_projection.for_setup(setup, target, draft)
    phases.done("memory", None)
    if projection is not None and not projection.fits:  # measuring would fail to load: say what would fit
        for line in projection.render_lines(80):
            print(line)
        return 1
    if doc is None:
        doc = cache.with_calibrations(_measure(setup, model_type, phases), earlier)  # others' kept
        doc["phases"] = phases.as_dict()
        path = cache.store(key, doc)
        phases.done("store", f"measured and cached in {path}")
    c = _curve(doc, status)
    cal = acceptance.Calibration.from_dict(cache.calibration_for(doc, calibration_key) or {})  # ({}: never)

    saved = acceptance.saved(answers.answer_stats(), setup.model or "", setup.model_draft)
    flags = _pair_flags(args.preset, overrides)
    plan = build_plan(c, setup.spec, depth, model_type=model_type, saved=saved, calibration=cal, pair_flags=flags)
    phases.done("predictions", None)
    conc = None
    if levels:
        from spectui.cli import plan_concurrency

        conc = plan_concurrency.run(
            levels, setup, key, plan, cal.filler, (target, draft), projection, args.remeasure, status
        )
    if args.json:
        projected = projection.to_json() if projection is not None else {"unavailable": no_projection}
        timed = {"phases": phases.as_dict(), "measured_phases": doc.get("phases")}
        extra = {"concurrency": conc.as_dict()} if conc else {}
        print(json.dumps({**plan.as_dict(), "memory": projected, "identity": key, **timed, **extra}, indent=1))
    else:
        _print_plan(plan, projection, no_projection, conc)
    return 0


def _plan_setup(args) -> tuple[dict, Setup, int, tuple[int, ...] | None]:
    """The overrides, the setup, the depth and the --concurrency levels, each checked before any
    model is read."""
    overrides = overrides_from(args)
    if "model_draft" in overrides and "spec_type" not in overrides:
        overrides["spec_type"] = DRAFT_SIMPLE  # plan covers every type; this one keeps the draft
    setup = resolve(args.preset, overrides)
    if setup.server:
        raise UserError("spectui plan measures models on this machine; give -m (and -md), not --server")
    if args.depth is not None and not 1 <= args.depth < setup.ctx_size:
        raise UserError(f"--depth must be at least 1 and below -c ({setup.ctx_size}), got {args.depth}")
    depth = args.depth or min(DEPTH, setup.ctx_size // 2)
    levels = levels_of(args.concurrency, "--concurrency", MAX_LEVEL, "busy slots") if args.concurrency else None
    if levels is not None and len(levels) > MAX_LEVELS:
        raise UserError(f"--concurrency takes at most {MAX_LEVELS} levels, got {len(levels)}")
    return overrides, setup, depth, levels


def _curve(doc: dict, status) -> Curve:
    """The measured curve, and a note where the machine's speed varied while it was timed."""
    c = Curve.from_dict(doc["curve"])
    if unsteady := c.unsteady():
        status(
            f"note: the machine's speed varied while timing ({unsteady}): the predictions are that uncertain; "
            "run `spectui plan --remeasure` on a quiet machine"
        )
    return c


def _cached(key: dict, calibration_key: dict, status) -> tuple[dict | None, dict | None]:
    """(the cached measurement for this identity, the file read): the first None where there is
    none, it cannot be read or none of its calibrations used these prompts and sampling (each
    said in a note); the file read keeps its other calibrations when this one is measured."""
    doc, why = cache.load_cached(key, check_calibration)
    if why:
        status(f"note: {why}")
    if doc is not None and cache.calibration_for(doc, calibration_key) is None:
        status("note: no cached calibration used these prompts and sampling: measuring again")
        return None, doc
    return doc, doc


def _print_plan(plan, projection, no_projection: str | None, conc) -> None:
    """The plan as text, wrapped to the terminal (whole lines in a file or a pipe)."""
    width = _width()
    memory_w = min(width or 80, 80)  # its table's columns are sized to 80
    lines = projection.render_lines(memory_w) if projection is not None else [f"memory: {no_projection}"]
    for line in render(plan, lines, width) + (concurrency_report.render(conc) if conc else []):
        print(line)
