"""`spectui bench --server A,B --concurrency 1,2,4`: does speculation still pay when several
requests share a llama-server? Everything a level needs is checked before any request:
the levels, the servers' slots (-np), the same model on both, the output files.

The protocol and its statistics live in bench/concurrency*.py; here the servers are
connected, the progress is shown and the files are written.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from rich.console import Console, Group
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from spectui.bench import concurrency, report
from spectui.bench import concurrency_report as creport
from spectui.bench import concurrency_results as cresults
from spectui.bench.protocol import BASELINE
from spectui.bench.report import figure
from spectui.cli import interrupt, streams
from spectui.cli.setup_flags import elements, levels_of
from spectui.engine.server import ServerPool, ServerSession
from spectui.engine.server_checks import model_file, refuse_long_answers, refuse_other_models, refuse_twice
from spectui.errors import UserError
from spectui.launch.environment import collect

NOT_WITH = ("trace", "inspect", "spec_type", "sweep_types", "sweep_n_max")  # the local protocol's flags


def _refuse_other_flags(args) -> None:
    for name in NOT_WITH:
        if getattr(args, name):
            flag = "--" + name.replace("_", "-")
            raise UserError(f"{flag} does not apply to --concurrency (each server's speculation is fixed); drop it")


def _connect(setup, levels: tuple[int, ...], err: Console) -> list[concurrency.Target]:
    """One session per server, checked (slots, models, a baseline), then one per concurrent
    client; the baseline (spec type none) first."""
    urls = [u.strip() for u in elements(setup.server, ",", "--server")]
    if len(urls) > 2:
        raise UserError("--concurrency compares at most two servers: one with --spec-type none, one speculating")
    refuse_twice(urls)
    firsts = []
    for url in urls:
        err.print(f"connecting to {url}", style="dim", highlight=False, soft_wrap=True)
        s = ServerSession(url, setup.sampling(), n_max=setup.spec.draft_n_max, watch=False)
        concurrency.check_slots(levels, s.url, s.info.n_slots)
        if s.counters() is None:  # said once: the table's server columns stay empty
            err.print(f"note: {s.counters_note}", style="dim", highlight=False, soft_wrap=True)
        firsts.append(s)
    refuse_long_answers(setup.n_predict, [s.info for s in firsts])
    if len(firsts) == 2:
        refuse_other_models([s.info for s in firsts])
        ServerPool(firsts)  # refuses two servers that speculate alike
        if all(s.spec.types != (BASELINE,) for s in firsts):
            raise UserError("neither server runs without speculation: start one with --spec-type none, the baseline")
    firsts.sort(key=lambda s: s.spec.types != (BASELINE,))
    return [
        concurrency.Target(
            s.spec.label,
            s.url,
            [s]
            + [
                ServerSession(s.url, setup.sampling(), n_max=setup.spec.draft_n_max, watch=False)
                for _ in range(max(levels) - 1)
            ],
        )
        for s in firsts
    ]


def _line(b: concurrency.Burst, repeat: int, elapsed: float) -> str:
    """One whole line per finished burst: a log keeps it, a terminal shows it above the bar."""
    s = cresults.burst_stats(b)
    ttft = figure(s["ttft_p50_s"], ".0f", 1000)
    drafts = (
        f", {s['accepted_per_request']:.1f}/{s['drafted_per_request']:.1f} accepted/drafted per request"
        if s["drafted_per_request"]
        else ""
    )
    return (
        f"[{elapsed:6.1f} s] pass {b.repeat + 1}/{repeat}, concurrency {b.level}, {b.server}: "
        f"{figure(s['agg_tok_per_s'], '.1f')} tok/s aggregate, TTFT p50 {ttft} ms{drafts}"
    )


def render(doc: dict) -> Group:
    parts: list = [Text(report.environment_line(doc["environment"]), style="dim")]
    parts += [Text(f"server {line}", style="dim") for line in creport.server_lines(doc)]
    parts.append(Text(creport.protocol_line(doc), style="dim"))
    for columns in (creport.SPEED_COLUMNS, creport.DRAFT_COLUMNS):
        t = Table()
        for i, (name, _) in enumerate(columns):
            t.add_column(name, justify="left" if i == 1 else "right", no_wrap=i == 1)
        for r in doc["results"]:
            t.add_row(*(cell(r) for _, cell in columns))
        parts.append(t)
    parts.append(Text(doc["verdict"]["summary"], style="bold"))
    if doc["partial"]:
        parts.append(Text(f"partial result: {report.stopped(doc)}", style="bold yellow"))
    parts += [Text(f"warning: {w}", style="yellow") for w in doc["warnings"]]
    return Group(*parts)


def main(args, setup, prompts: list, lang: str) -> int:
    """After bench.main's checks (--repeat, the output files, the prompts, -n): the rest."""
    levels = levels_of(args.concurrency, "--concurrency", concurrency.MAX_LEVEL, "concurrent requests")
    if not setup.server:
        raise UserError(
            "--concurrency needs --server URL[,URL]: spectui's own engine runs one sequence at a time; "
            "start llama-server with -np N and point the bench at it"
        )
    _refuse_other_flags(args)
    err = Console(stderr=True)
    targets = _connect(setup, levels, err)
    proto = concurrency.Protocol(
        levels=levels,
        n_predict=setup.n_predict,
        ignore_eos=not args.respect_eos,
        repeat=args.repeat,
        system=setup.system,
    )
    firsts = [t.clients[0] for t in targets]
    environment = collect(firsts[0] if len(firsts) == 1 else ServerPool(firsts), setup)
    started, t0 = datetime.now(UTC), time.perf_counter()
    m, signals = _measured(targets, prompts, proto, err, t0)
    record = {
        **setup.per_answer(),
        "prompts": args.prompts or "shipped",
        "lang": lang,
        "category": args.category,
        "limit": args.limit,
    }
    servers = [_server(t) for t in targets]
    meta = {
        "started": started.isoformat(timespec="seconds"),
        "duration_s": time.perf_counter() - t0,
        "setup": {"preset": setup.preset, **setup.values()},
    }
    doc = cresults.build(m, servers, proto, record, prompts, environment, meta)
    # before the files: one that cannot be written after all leaves the figures on screen
    streams.console().print(render(doc))
    if m.failed:
        err.print(f"failed: {m.interrupted}", style="red", highlight=False, soft_wrap=True)
    written = report.write(doc, args.json, args.csv, args.markdown, creport.markdown, creport.csv_rows)
    for path in written:
        err.print(f"wrote {path}" + (" (partial)" if m.partial else ""), highlight=False, soft_wrap=True)
    return interrupt.exit_code(m, signals)


def _measured(targets: list, prompts: list, proto: concurrency.Protocol, err: Console, t0: float):
    """The bursts, level by level, under a bar and a line each; and the signals that stopped them."""
    signals: list[int] = []
    total = proto.repeat * sum(proto.levels) * len(targets) * proto.n_predict
    with (
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("tokens"),
            TimeElapsedColumn(),
            console=err,
            disable=not err.is_terminal,
        ) as progress,
        interrupt.as_ctrl_c(signals),
    ):
        task = progress.add_task("concurrency", total=total)
        err.print(
            f"warm-up: {max(proto.levels)} requests at once per server", style="dim", highlight=False, soft_wrap=True
        )

        def on_burst(b: concurrency.Burst) -> None:
            progress.advance(task, b.level * proto.n_predict)
            progress.console.print(_line(b, proto.repeat, time.perf_counter() - t0), highlight=False, soft_wrap=True)

        m = concurrency.measure(targets, prompts, proto, on_burst)
    interrupt.stopped_by(signals, m)
    return m, signals


def _server(t) -> dict:
    """A server as the result records it: its label, address, model, slots and whether it counts."""
    return {
        "label": t.label,
        "url": t.url,
        "model": model_file(t.clients[0].info),
        "total_slots": t.clients[0].info.n_slots,
        "metrics": not t.clients[0].counters_note,
    }
