"""`spectui run`: one answer in the terminal with the speculation overlay, or `--json`.

Generation runs on the llama thread (engine/llama_thread.py), so that Ctrl+C only asks the
session to stop between rounds: the caches stay consistent and the summary is still printed.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

from rich.console import Console

from spectui.cli import interrupt
from spectui.cli.render import legend, round_text, summary_table
from spectui.config import text as user_text
from spectui.config.options import add_setup_flags, overrides_from
from spectui.config.resolve import model_label, resolve
from spectui.engine import llama_thread, verdicts
from spectui.engine.events import Round, StopReason, TurnEnd
from spectui.engine.handover import Handover
from spectui.engine.stats import summarize
from spectui.errors import UserError
from spectui.launch.session import open_session

HAND_OVER_S = 0.05  # rounds reach the printing thread at most 20 times a second


def add_parser(sub) -> None:
    p = sub.add_parser(
        "run",
        help="answer one prompt headless, with the speculation overlay",
        description="Answer one prompt: from the argument, -f FILE, or stdin.",
    )
    p.add_argument("prompt", nargs="?", help="the prompt (default: -f FILE or stdin)")
    p.add_argument("-f", "--file", help="read the prompt from this file")
    p.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    p.add_argument("--no-color", action="store_true", help="plain text (for pipes); hides rejected tokens")
    p.add_argument("--no-rejected", action="store_true", help="hide rejected draft tokens")
    p.add_argument("--trace", metavar="FILE", help="record the run as a trace (JSON Lines) for spectui replay")
    p.add_argument(
        "--inspect",
        action="store_true",
        help="record what the verifier saw at each drafted token (p, q, the target's top 3 at a rejection): "
        "in --json, the trace and the summary",
    )
    p.add_argument(
        "--ignore-eos",
        action="store_true",
        help="go on past the end of generation up to -n tokens, as llama.cpp's --ignore-eos "
        "(a fixed length for timing)",
    )
    add_setup_flags(p)
    p.set_defaults(func=main)


def read_prompt(args) -> str:
    if args.prompt is not None and args.file:
        raise UserError("give the prompt either as an argument or with -f, not both")
    if args.file:
        text = user_text.read_text(args.file, "prompt file")
    elif args.prompt is not None:
        text = user_text.from_argv(args.prompt, "the prompt argument")
    elif not sys.stdin.isatty():
        text = user_text.from_bytes(sys.stdin.buffer.read(), "the prompt on stdin")
    else:
        raise UserError('no prompt: spectui run "PROMPT", -f FILE, or pipe it on stdin')
    if not text.strip():
        raise UserError("the prompt is empty")
    return text


def writable(name: str) -> Path:
    """An output file's path, checked before any model loads: its folder must exist and
    it must not be a folder itself."""
    path = Path(name).expanduser()
    if path.is_dir():
        raise UserError(f"{name} is a folder; give a file name")
    if not path.parent.is_dir():
        raise UserError(f"cannot write {name}: the folder {path.parent} does not exist")
    return path


def save_trace(path: Path, recorded_by: str, session, setup, turns: list) -> Path:
    """Write a trace of `turns` with this session's environment and the setup's settings."""
    from spectui.launch.environment import collect
    from spectui.trace.format import Trace, header

    return Trace(header(recorded_by, collect(session, setup, hash_files=False), setup.values()), turns).write(path)


def generate_in_thread(session, on_event, **kwargs) -> list:
    """Generate on the llama thread, handing each event to `on_event` here, rounds in batches
    once every HAND_OVER_S (engine/handover.py); Ctrl+C, wherever it lands, asks the session
    to stop after the current round. Returns all events."""
    handover = Handover()

    def work():
        try:
            for ev in session.generate(**kwargs):
                handover.put(ev)
        finally:
            handover.close()

    done = llama_thread.submit(work)
    events = []
    while True:
        try:
            batch = handover.take(HAND_OVER_S)
            if batch is None:
                break
            events.extend(batch)
            for ev in batch:
                on_event(ev)
        except KeyboardInterrupt:
            session.cancel()
        except BaseException:  # the caller fails (a closed pipe): the answer stops after its round
            session.cancel()
            raise
    done.result()  # the generation's own exception, if it raised one
    return events


def main(args) -> int:
    prompt = read_prompt(args)
    setup = resolve(args.preset, overrides_from(args))
    trace_path = writable(args.trace) if args.trace else None
    err = Console(stderr=True)
    out = Console(no_color=args.no_color, highlight=False, soft_wrap=True)
    for note in setup.notes:
        err.print(f"note: {note}", style="dim", highlight=False)
    with interrupt.held():
        from spectui.engine.interface import GenerationLimits, chat_messages
        from spectui.llama.runtime import configure_logging

        configure_logging(args.verbose, Path(args.log_file) if args.log_file else None)
        session = open_session(setup, console=err)
    session.inspect = args.inspect
    show_rejected = not (args.no_rejected or args.no_color) and out.color_system is not None

    def show(ev) -> None:
        if isinstance(ev, Round) and not args.json:
            out.print(round_text(ev, show_rejected, styled=show_rejected), end="")

    events = generate_in_thread(
        session,
        show,
        messages=chat_messages([("user", prompt)], setup.system),
        limits=GenerationLimits(n_predict=setup.n_predict, ignore_eos=args.ignore_eos),
    )
    end = events[-1]
    assert isinstance(end, TurnEnd)
    if trace_path is not None:
        from spectui.trace.format import TraceTurn

        save_trace(trace_path, "spectui run", session, setup, [TraceTurn(prompt, events, memory=session.memory_text())])
    if end.stop_reason is StopReason.CONTEXT_FULL and not end.n_generated:
        raise UserError(end.error)
    summary = summarize(events)
    if args.json:
        print(
            json.dumps(
                {
                    "text": end.text,
                    "tokens": list(end.tokens),
                    "stop_reason": end.stop_reason.value,
                    "error": end.error or None,
                    "config": {
                        **session.spec.as_dict(),
                        "temp": setup.temp,
                        "seed": setup.seed,
                        "model": model_label(setup.model),
                        "model_draft": model_label(setup.model_draft),
                        "n_predict": setup.n_predict,
                        "ignore_eos": args.ignore_eos,
                        "ctx_size": setup.ctx_size,
                        "backend_sampling": setup.backend_sampling,
                    },
                    "stats": summary.as_dict(),
                    **(inspected(events) if args.inspect else {}),
                },
                ensure_ascii=False,
            )
        )
        return 0
    out.print()
    if why := cut_off(end, setup):
        err.print(f"[answer cut off: {why}]", style="yellow", highlight=False, markup=False)
    if show_rejected:
        err.print(legend())
    err.print(summary_table(summary, session.spec.label, end))
    if args.inspect:
        err.print(inspect_line(events), highlight=False)
    return 0


def inspected(events: list) -> dict:
    """--inspect's part of --json: each drafting round's verdicts, as the trace records them,
    and their summary."""
    rounds = [e for e in events if isinstance(e, Round) and e.drafted]
    return {
        "rounds": [
            {
                "index": r.index,
                "spec_type": r.spec_type,
                "n_accepted": r.n_accepted,
                "verdicts": list(map(asdict, r.verdicts)),
            }
            for r in rounds
        ],
        "inspect": verdicts.summary_dict(rounds),
    }


def inspect_line(events: list) -> str:
    """--inspect's line under the summary: why drafts were rejected, in aggregate."""
    n, ties, errors, median = verdicts.summarize(e for e in events if isinstance(e, Round))
    if not n:
        return "inspect: no rejected draft token"
    return (
        f"inspect: {n} rejections, {ties} near-ties (top-1 minus top-2 < {verdicts.NEAR_TIE}), "
        f"{errors} confident draft errors (q > {verdicts.CONFIDENT_Q}, p < {verdicts.CONFIDENT_P}), "
        f"median p of rejected tokens {median:.3f}"
    )


def cut_off(end: TurnEnd, setup) -> str:
    """Why the answer ended before the model finished it ("" if it did)."""
    return {
        StopReason.N_PREDICT: f"-n/--n-predict {setup.n_predict} tokens reached",
        StopReason.CONTEXT_FULL: f"the context of {setup.ctx_size} tokens (-c) is full",
        StopReason.CANCELLED: "stopped (Ctrl+C)",
    }.get(end.stop_reason, "")
