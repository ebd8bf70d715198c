"""`spectui bench`: the measurement protocol, and `spectui bench compare A.json B.json`.

Flag parsing, the progress bar and the files live here; the protocol, the statistics and
the verdicts live in spectui.bench and consume the same engine events as everything else.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from rich.console import Console

from spectui import spec_types
from spectui.bench import compare, protocol, report, results
from spectui.bench import prompts as prompt_set
from spectui.cli import bench_concurrency, bench_curve, bench_progress, bench_tables, bench_traces, interrupt, streams
from spectui.cli.loading import loading_line, warn_build
from spectui.cli.progress import ConsoleReport
from spectui.cli.setup_flags import add_setup_flags, elements, open_log, overrides_from
from spectui.config.paths import writable
from spectui.config.resolve import resolve
from spectui.config.setup import Setup
from spectui.engine.server import ServerPool, ServerSession, server_wide
from spectui.engine.server_checks import refuse_long_answers, refuse_other_models
from spectui.errors import UserError
from spectui.launch.environment import collect
from spectui.launch.opening import open_session
from spectui.llama.runtime import configure_logging
from spectui.spec_config import choice_types, parse_types
from spectui.spec_types import Spec

DEFAULT_N = 256
OWN_DEFAULTS: dict[str, Any] = {
    "n_predict": DEFAULT_N,
    "temp": 0.0,
    "seed": 0,
}  # a bench's, where a chat's differ (the help says why)
DEFAULT_N_MAX = "3,5,8"
MAX_REPEAT = 1000  # passes; more is a typo, not a plan (each pass runs every prompt)

EPILOG = f"""\
protocol: the baseline (spec type none) and each spec-type set x each n-max, one variable
at a time. First one warm-up run per configuration (the first prompt, not counted), then
--repeat passes; a pass runs each prompt with every configuration in turn (the order
rotating from prompt to prompt), so drift on a busy or throttling machine hits all
configurations alike. Every run starts cold and generates exactly -n tokens (end of
generation banned, as llama.cpp's --ignore-eos, unless --respect-eos). Temperature 0
(greedy) and seed 0 unless --temp/--seed are given.

medians: {results.MEDIAN_NOTE}. Speedup: a configuration's median tok/s over the
baseline's, same group, same run. Greedy agreement: each prompt's first measured run
against the baseline's, token by token. An auto configuration also shows its choices: the
share of rounds drafted by n-gram, by the draft model and by neither; its probes' drafting
and its draft cache's catch-ups as shares of generation time; its tok/s against the fastest
fixed type of the same group and run.

verdict: for each configuration, the speedup this machine's decode costs predict at its
measured acceptance (the curve spectui plan cached for the pair, else timed after the runs)
against the measured one; a gap beyond the noise is said.

Ctrl+C stops and still writes everything measured so far, marked partial (exit 130);
so do SIGTERM and SIGHUP (exit 143, 129) and a llama.cpp or server failure (exit 1).

compare: spectui bench compare A.json B.json shows per-configuration deltas (B - A) of
tok/s, speedup, acceptance and TTFT, and what differs in environment and protocol.
"""


class Paragraphs(argparse.HelpFormatter):
    """The epilog's paragraphs kept apart, each filled at the terminal's width: argparse's
    default runs them together, and as written they would break mid-word."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        fill = super()._fill_text
        return "\n\n".join(fill(part, width, indent) for part in text.split("\n\n"))


def add_parser(sub) -> None:
    p = sub.add_parser(
        "bench",
        help="measure whether speculation pays off on this machine",
        usage="spectui bench [options]\n       spectui bench compare A.json B.json",
        description="Run the measurement protocol on the shipped Korean/English prompts "
        "(or yours) and say whether speculation pays off here, and why not.",
        epilog=EPILOG,
        formatter_class=Paragraphs,
    )
    _add_compare(p)
    _add_benchmark_flags(p.add_argument_group("benchmark"))
    _add_output_flags(p.add_argument_group("output"))
    add_setup_flags(
        p,
        {
            "n_predict": f"tokens each run generates, exactly (default {OWN_DEFAULTS['n_predict']})",
            "temp": f"temperature (default {OWN_DEFAULTS['temp']:g}: greedy, so the outputs can be compared)",
            "seed": f"sampling seed (default {OWN_DEFAULTS['seed']}, so a sampled run can be repeated)",
        },
    )
    p.set_defaults(func=main)


def _add_compare(p) -> None:
    """`spectui bench compare A.json B.json`, the one action."""
    actions = p.add_subparsers(dest="action", metavar="ACTION", title="actions (optional)")
    c = actions.add_parser(
        "compare",
        prog="spectui bench compare",
        help="per-configuration deltas between two --json results",
        description="Deltas (B - A) per configuration and group: tok/s, speedup, "
        "acceptance, TTFT; then what differs in environment and protocol.",
    )
    c.add_argument("a", metavar="A.json")
    c.add_argument("b", metavar="B.json")
    c.set_defaults(func=compare_main)


def _add_benchmark_flags(b) -> None:
    """What is measured: the prompts, the repeats, the configurations, the concurrency."""
    b.add_argument("--lang", help="ko, en or all (default: ko for the shipped set, all for --prompts)")
    b.add_argument(
        "--category",
        choices=("qa", "code", "all"),
        default="all",
        help="qa (questions, summaries), code (code, repetitive text) or all (default)",
    )
    b.add_argument(
        "--prompts",
        metavar="FILE",
        help="your prompts: TOML [[prompt]] tables or JSONL, keys id, lang, category (qa|code), text",
    )
    b.add_argument("--limit", type=int, metavar="N", help="only the first N prompts of each group")
    b.add_argument("--repeat", type=int, default=3, help="measured runs per prompt (default 3)")
    b.add_argument("--respect-eos", action="store_true", help="stop at end of generation (lengths then vary)")
    b.add_argument(
        "--inspect",
        action="store_true",
        help="record what the verifier saw at each draft token: near-tie share and median p of the rejected ones",
    )
    b.add_argument(
        "--sweep-types",
        metavar="SETS",
        help="spec-type sets to measure, ';'-separated, each as --spec-type "
        f"(e.g. '{spec_types.SPEC_DEFAULT};{spec_types.DRAFT_SIMPLE};"
        f"{spec_types.AUTO_NGRAM},{spec_types.DRAFT_SIMPLE}'); "
        "default: the one --spec-type (or the preset's)",
    )
    b.add_argument(
        "--sweep-n-max",
        metavar="LIST",
        help=f"draft n-max values, comma-separated (default {DEFAULT_N_MAX}, or just --spec-draft-n-max when given); "
        "n-gram types, and auto with no model to draft with, run once",
    )
    b.add_argument(
        "--concurrency",
        metavar="LIST",
        help="with --server: requests at once, comma-separated (e.g. 1,2,4); each level needs as many "
        "slots (llama-server -np); aggregate tok/s, TTFT and ITL per level, and up to which level speculation pays",
    )


def _add_output_flags(o) -> None:
    """Where the result goes besides the report on stdout."""
    o.add_argument(
        "--json",
        metavar="FILE",
        help="write the full result (schema spectui-bench/1; -concurrency/1 with --concurrency)",
    )
    o.add_argument("--csv", metavar="FILE", help="write one row per configuration and group")
    o.add_argument("--markdown", metavar="FILE", help="write a report")
    o.add_argument(
        "--trace",
        metavar="DIR",
        help="write one trace per run into DIR (spectui replay shows why a configuration was slow)",
    )


def _type_sets(args, setup) -> list[tuple[Spec, ...]]:
    if args.sweep_types is not None and args.spec_type is not None:
        raise UserError("give --spec-type (one set) or --sweep-types (several), not both")
    given = elements(args.sweep_types, ";", "--sweep-types") if args.sweep_types is not None else None
    sets = [parse_types(t) for t in given] if given is not None else [setup.spec.types]
    sets = [s for s in dict.fromkeys(sets) if s != (spec_types.BASELINE,)]  # the baseline is always measured
    if not sets:
        raise UserError("nothing to compare with the baseline: give --spec-type TYPES or --sweep-types 'A;B'")
    return sets


def _n_maxes(args) -> list[int]:
    if args.sweep_n_max is not None and args.spec_draft_n_max is not None:
        raise UserError("give --spec-draft-n-max (one value) or --sweep-n-max (several), not both")
    text = args.sweep_n_max or (str(args.spec_draft_n_max) if args.spec_draft_n_max is not None else DEFAULT_N_MAX)
    out = []
    for part in elements(text, ",", "--sweep-n-max"):
        try:
            out.append(int(part))
        except ValueError:
            raise UserError(f"--sweep-n-max: '{part}' is not a whole number") from None
    return list(dict.fromkeys(out))


def _lang(args) -> str:
    return args.lang or ("all" if args.prompts else "ko")


def _prompts(args) -> list[prompt_set.Prompt]:
    chosen = prompt_set.load(args.prompts) if args.prompts else prompt_set.shipped()
    return prompt_set.select(chosen, _lang(args), args.category, args.limit)


def main(args) -> int:
    chosen, setup = _bench_setup(args)
    if args.concurrency is not None:
        return bench_concurrency.main(args, setup, chosen, _lang(args))
    configs, setup = _configurations(args, setup)
    n = setup.n_predict
    proto = protocol.Protocol(n_predict=n, ignore_eos=not args.respect_eos, repeat=args.repeat, system=setup.system)

    trace_dir = bench_traces.folder(args.trace) if args.trace else None
    configure_logging(args.verbose, open_log(args.log_file))
    err = streams.console(stderr=True)
    session, configs = _opened(args, setup, configs, err)
    try:
        err.print("recording the environment", style="dim")
        environment = collect(session, setup)
        started, t0 = datetime.now(UTC), time.perf_counter()
        traces = bench_traces.RunTraces(trace_dir, environment, setup) if trace_dir else None
        m, signals = _measured(session, configs, chosen, proto, traces, err)
        servers = server_wide(session)  # each server's own counters over the run: all its slots
        for note in (note for wide in servers for note in wide.notes):
            err.print(f"note: {note}", style="dim", highlight=False, markup=False, soft_wrap=True)
        # a server's costs are not this machine's: no curve, no citation
        costs, unpredicted = None, None
        if not setup.server:
            costs, unpredicted = bench_curve.costs(session, setup, configs, m, proto.system, _dim(err))
    finally:
        session.close()
    meta = {
        "started": started.isoformat(timespec="seconds"),
        "duration_s": time.perf_counter() - t0,
        "setup": {"preset": setup.preset, **setup.values()},
        **({"server_counters": [wide.as_dict() for wide in servers]} if servers else {}),
    }
    predicted = bench_curve.predictions(costs, configs, m.runs) if costs else None
    record = _record(args, setup, proto, configs)
    doc = results.build(
        m, configs, chosen, record, environment, meta, predicted, unpredicted, costs.as_dict() if costs else None
    )
    show(doc)  # before the files: a file that cannot be written after all leaves the figures on screen
    written = report.write(doc, args.json, args.csv, args.markdown)
    for path in written:
        err.print(f"wrote {path}" + (" (partial)" if m.partial else ""), highlight=False, soft_wrap=True)
    if traces is not None:
        err.print(f"wrote {traces.written} traces into {trace_dir}", highlight=False, soft_wrap=True)
    return interrupt.exit_code(m, signals)


def _bench_setup(args) -> tuple[list[prompt_set.Prompt], Setup]:
    """The prompts and the setup the bench runs, its own defaults in (a fixed length, greedy, a
    seed), every flag and output file checked before anything loads."""
    if not 1 <= args.repeat <= MAX_REPEAT:
        raise UserError(f"--repeat must be 1 to {MAX_REPEAT}, got {args.repeat}")
    for flag, name in (("--json", args.json), ("--csv", args.csv), ("--markdown", args.markdown)):
        if name:
            writable(name, flag)  # before the bench runs: a typo must not lose its measurements
    chosen = _prompts(args)
    setup = resolve(args.preset, overrides_from(args))
    n = DEFAULT_N if args.n_predict is None else args.n_predict
    if n < 1:
        raise UserError(f"-n must be at least 1 for a fixed output length, got {n}")
    setup = replace(
        setup,
        n_predict=n,
        temp=args.temp if args.temp is not None else OWN_DEFAULTS["temp"],
        seed=args.seed if args.seed is not None else OWN_DEFAULTS["seed"],
    )
    return chosen, setup


def _configurations(args, setup: Setup) -> tuple[list[protocol.Config], Setup]:
    """The configurations to measure (none yet for --server: its servers give them) and the setup
    to load: no draft model where none drafts with it, the session starting as the baseline."""
    if setup.server:  # each server's speculation is fixed: its configurations come from the servers
        for flag in ("--spec-type", "--sweep-types", "--sweep-n-max"):
            if getattr(args, flag[2:].replace("-", "_")) is not None:
                raise UserError(f"{flag} does not apply to --server (each server's speculation is fixed); drop it")
        return [], setup
    configs = protocol.plan(setup.spec, _type_sets(args, setup), _n_maxes(args))
    if not any(c.spec.uses_draft_model for c in configs):
        setup = replace(setup, model_draft=None)  # no configuration drafts with it: do not load it
    # the session starts as the baseline
    return configs, replace(setup, spec=setup.spec.replace(types=(spec_types.BASELINE,)))


def _opened(args, setup: Setup, configs: list[protocol.Config], err: Console):
    """The session, loaded or connected, and the configurations (a server's: one per server,
    the one without a draft first, the baseline)."""
    for note in setup.notes:
        err.print(f"note: {note}", style="dim", highlight=False)
    if not setup.server:
        warn_build(err)
    with interrupt.held(), loading_line(err) as status:
        session = open_session(
            setup,
            status=status,
            report=ConsoleReport(err),
            types=tuple({t: None for c in configs for t in c.spec.types}) or None,
        )
    session.inspect = args.inspect
    if not setup.server:
        swept = len(configs)
        configs = protocol.for_session(configs, choice_types(session.choices()))
        if len(configs) < swept:
            err.print("note: auto runs once: with no model to draft with, n-max bounds nothing", style="dim")
    if isinstance(session, (ServerSession, ServerPool)):  # checked as --concurrency checks them
        infos = [s.info for s in (session.servers if isinstance(session, ServerPool) else [session])]
        refuse_other_models(infos)
        refuse_long_answers(setup.n_predict, infos)
    if setup.server:
        specs = [session.spec.with_types(c) for c in session.choices()]
        configs = [protocol.Config(s.label, s) for s in sorted(specs, key=lambda s: s.types != (spec_types.BASELINE,))]
    return session, configs


def _measured(session, configs, chosen, proto: protocol.Protocol, traces: bench_traces.RunTraces | None, err: Console):
    """The protocol run under the bench's bar (each run's trace written as it ends), and the
    signals that stopped it."""
    n = proto.n_predict
    runs = len(configs) * (proto.warmup + proto.repeat * len(chosen))
    signals: list[int] = []
    with bench_progress.shown(err, runs * n, runs) as progress, interrupt.as_ctrl_c(signals):

        def on_event(cfg, prompt, repeat, ev):
            if traces is not None:
                traces.add(cfg, prompt, repeat, ev)
            progress.on_event(f"{cfg.label} | {prompt.id}" + (" (warm-up)" if repeat < 0 else ""), ev, n)

        m = protocol.measure(
            session,
            configs,
            chosen,
            proto,
            on_event,
            lambda i, done: bench_progress.report_pass(progress.console, configs, i, proto.repeat, done),
        )
    interrupt.stopped_by(signals, m)
    return m, signals


def _record(args, setup: Setup, proto: protocol.Protocol, configs: list[protocol.Config]) -> dict:
    """What the result records of how it was measured."""
    return {
        "n_predict": proto.n_predict,
        "ignore_eos": proto.ignore_eos,
        "repeat": proto.repeat,
        "warmup": proto.warmup,
        **setup.per_answer(),
        "verify": setup.spec.verify,
        "system": setup.system,
        "prompts": args.prompts or "shipped",
        "lang": _lang(args),
        "category": args.category,
        "limit": args.limit,
        "spec_types": list(dict.fromkeys(c.spec.label for c in configs)),
        "n_max": list(dict.fromkeys(c.n_max for c in configs if c.n_max is not None)),
    }


def _dim(console: Console):
    return lambda text: console.print(text, style="dim", highlight=False)


def show(doc: dict) -> None:
    """The report on stdout, its prose wrapped at word boundaries at the terminal's width
    ($COLUMNS, else 80 in a pipe), where the terminal would cut words."""
    streams.console().print(bench_tables.render(doc))


def compare_main(args) -> int:
    a, b = results.load(args.a), results.load(args.b)
    out = streams.console()
    for t in bench_tables.compare_tables(compare.diff(a, b), args.a, args.b):
        out.print(t)
    for name, doc in (("A", a), ("B", b)):
        if doc["partial"]:
            out.print(f"note: {name} is a partial result ({doc['interrupted']})", style="yellow", highlight=False)
    differences = compare.settings_diff(a, b)
    if differences:
        out.print("what else differs (A -> B):", style="bold")
        for key, va, vb in differences:
            out.print(f"  {key}: {va} -> {vb}", highlight=False)
    return 0
