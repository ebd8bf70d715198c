"""`spectui run`: one answer in the terminal with the speculation overlay, or `--json`.

Generation runs on the llama thread (engine/llama_thread.py), so that Ctrl+C only asks the
session to stop between rounds: the caches stay consistent and the summary is still printed.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.text import Text

from spectui.bounded import TEXT_BYTES, read_stream
from spectui.chat.inspector import rejection_kinds
from spectui.cli import interrupt
from spectui.cli.loading import warn_build
from spectui.cli.progress import ConsoleReport
from spectui.cli.render import legend, round_text, summary_table
from spectui.cli.setup_flags import add_setup_flags, open_log, overrides_from
from spectui.cli.streams import Unwritable, silence_stdout
from spectui.config import describe
from spectui.config import text as user_text
from spectui.config.paths import writable
from spectui.config.resolve import model_label, resolve
from spectui.config.setup import OPTIONS
from spectui.engine import llama_thread, verdicts
from spectui.engine.events import Round, StopReason, TurnEnd
from spectui.engine.handover import Handover
from spectui.engine.server_errors import server_lost
from spectui.engine.server_wire import not_a_server
from spectui.engine.stats import summarize
from spectui.errors import Failure, UserError
from spectui.launch.opening import open_session
from spectui.llama import devices
from spectui.words import plural

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


class Output(Console):
    """stdout: a closed pipe (`| head`) or a failed write (a full disk) stops the answer, and
    the trace is still written, where rich would exit at once or raise."""

    closed = False
    failed = False  # stdout could not be written (a full disk), not closed

    def on_broken_pipe(self) -> None:
        self.quiet = self.closed = True
        silence_stdout()  # no error at exit's flush

    def put(self, *objects, **kwargs) -> None:
        """print, where a failed write ends the output as a closed pipe does."""
        try:
            self.print(*objects, **kwargs)
        except OSError:
            self.failed = True
            self.on_broken_pipe()


def read_prompt(args) -> str:
    if args.prompt is not None and args.file:
        raise UserError("give the prompt either as an argument or with -f, not both")
    if args.file:
        text = user_text.read_text(args.file, "prompt file")
    elif args.prompt is not None:
        text = user_text.from_argv(args.prompt, "the prompt argument")
    elif sys.stdin is not None and not sys.stdin.isatty():  # None: stdin closed (`<&-`)
        stdin = read_stream(sys.stdin.buffer, "the prompt on stdin", TEXT_BYTES)
        text = user_text.from_bytes(stdin, "the prompt on stdin")
    else:
        raise UserError('no prompt: spectui run "PROMPT", -f FILE, or pipe it on stdin')
    if not text.strip():
        raise UserError("the prompt is empty")
    return text


def save_trace(path: Path, recorded_by: str, session, setup, turns: list) -> Path:
    """Write a trace of `turns` with this session's environment and the setup's settings."""
    from spectui.launch.environment import collect
    from spectui.trace.format import Trace, header

    return Trace(header(recorded_by, collect(session, setup, hash_files=False), setup.values()), turns).write(path)


def generate_in_thread(session, on_event, stop: Sequence[int] = (), **kwargs) -> list:
    """Generate on the llama thread, handing each event to `on_event` here, rounds in batches
    once every HAND_OVER_S (engine/handover.py); once `stop` holds a signal (interrupt.noted),
    the session is asked to stop after the current round. Returns all events."""
    handover = Handover()

    def work():
        try:
            for ev in session.generate(**kwargs):
                handover.put(ev)
        finally:
            handover.close()

    done = llama_thread.submit(work)
    events = []
    while (batch := handover.take(HAND_OVER_S)) is not None:
        if stop:
            session.cancel()
        events.extend(batch)
        try:
            for ev in batch:
                on_event(ev)
        except BaseException:  # the caller fails (a closed pipe): the answer stops after its round
            session.cancel()
            raise
    done.result()  # the generation's own exception, if it raised one
    return events


def main(args) -> int:
    prompt = read_prompt(args)
    setup = resolve(args.preset, overrides_from(args))
    trace_path = writable(args.trace, "--trace") if args.trace else None
    err = Console(stderr=True)
    out = Output(no_color=args.no_color, highlight=False, soft_wrap=True)
    session = _opened(args, setup, err)
    from spectui.engine.interface import GenerationLimits, chat_messages

    show_rejected = not (args.no_rejected or args.no_color) and out.color_system is not None

    def show(ev) -> None:
        if isinstance(ev, Round) and not args.json and not out.closed:
            out.put(round_text(ev, show_rejected, styled=show_rejected), end="")
            if out.closed:
                session.cancel()

    received: list[int] = []
    with interrupt.noted(received):
        events = generate_in_thread(
            session,
            show,
            received,
            messages=chat_messages([("user", prompt)], setup.system),
            limits=GenerationLimits(n_predict=setup.n_predict, ignore_eos=args.ignore_eos),
        )
    signals = [s for s in received if s in interrupt.ENDING]  # Ctrl+C: the summary, as an answer's end
    end = events[-1]
    assert isinstance(end, TurnEnd)
    if trace_path is not None:
        from spectui.trace.format import TraceTurn

        save_trace(trace_path, "spectui run", session, setup, [TraceTurn(prompt, events, memory=session.memory_text())])
    if signals or out.closed:
        return stopped(signals, out, end, trace_path, err)
    if end.stop_reason in (StopReason.CONTEXT_FULL, StopReason.ERROR) and not end.n_generated:
        raise (Failure if server_lost(end) else UserError)(end.error)
    summary = summarize(events)
    if not args.json:
        out.put()  # the answer's last line ends before anything is said on stderr
    server = session.status().server
    for note in server.notes if server else ():  # the server's own: not speculating, no --metrics
        err.print(f"note: {note}", style="dim", highlight=False, markup=False, soft_wrap=True)
    if args.json:
        print_json(json.dumps(_json_doc(args, setup, session, end, events, summary), ensure_ascii=False), out)
        if out.closed:
            return stopped(signals, out, end, trace_path, err)
        return ended(end, err)
    if why := cut_off(end, setup):
        err.print(f"[answer cut off: {why}]", style="yellow", highlight=False, markup=False)
    if show_rejected:
        err.print(legend())
    err.print(summary_table(summary, session.spec.label, end))
    if args.inspect:
        err.print(inspect_line(events), highlight=False)
    return ended(end, err)


def _opened(args, setup, err: Console):
    """The session, loaded (llama.cpp's log as asked, Ctrl+C held meanwhile) or connected; auto
    starts from this machine's timed costs where `spectui plan` cached them."""
    for note in setup.notes:
        err.print(f"note: {note}", style="dim", highlight=False)
    with interrupt.held():
        from spectui.llama.runtime import configure_logging

        configure_logging(args.verbose, open_log(args.log_file))
        if not setup.server:
            warn_build(err)
        session = open_session(setup, report=ConsoleReport(err))
    session.inspect = args.inspect
    from spectui.engine.auto import auto_costs
    from spectui.engine.session import Session
    from spectui.plan.loaded_pair import cached_for

    if isinstance(session, Session) and (costs := cached_for(setup, session.status())[0]) is not None:
        session.seed_auto(*auto_costs(costs))  # auto starts from this machine's timed costs (spectui plan)
    return session


def _json_doc(args, setup, session, end: TurnEnd, events: list, summary) -> dict:
    """--json's one object: the answer, its configuration, its statistics and the devices."""
    return {
        "text": end.text,
        "tokens": list(end.tokens),
        "stop_reason": end.stop_reason.value,
        "error": end.error or None,
        "config": {**session.spec.as_dict(), **recorded(setup), "ignore_eos": args.ignore_eos},
        "stats": summary.as_dict(),
        # the devices llama.cpp offloads to here, with their memory; a server's are not visible
        "devices": None if setup.server else [d.record() for d in devices.gpus()],
        **(inspected(events) if args.inspect else {}),
    }


def recorded(setup) -> dict:
    """The settings --json names (their records say recorded), a model by its short label."""
    return {
        o.name: model_label(setup.value(o.name)) if o.name in describe.NAMED else setup.value(o.name)
        for o in OPTIONS.values()
        if o.recorded
    }


def stopped(signals: list[int], out: Output, end: TurnEnd, trace_path: Path | None, err: Console) -> int:
    """A signal, a closed stdout or a failed write ended the answer: one line saying so (and
    where the trace is), and its exit code; a failed write's line is main's, as any command's."""
    saved = f"; the trace of {plural(end.n_generated, 'token')} is in {trace_path}" if trace_path else ""
    if out.failed and not signals:
        raise Unwritable(saved)
    why = f"stopped by {interrupt.ENDING[signals[0]]}" if signals else "stdout was closed"
    err.print(f"{why}{saved}", highlight=False, markup=False, soft_wrap=True)
    return 128 + (signals[0] if signals else signal.SIGPIPE)


def ended(end: TurnEnd, err: Console) -> int:
    """The exit code of an answer that ran its course: 1 where generation failed part way,
    so scripts do not take it for a whole answer; 2 where the server is no llama-server."""
    if end.stop_reason is not StopReason.ERROR:
        return 0
    err.print(Text.assemble(("error: ", "bold red"), end.error), soft_wrap=True)
    return UserError.exit_code if not_a_server(end) else 1


def print_json(text: str, out: Output) -> None:
    """The --json line on stdout; a closed pipe or a failed write is out's, as the rounds' are."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        out.on_broken_pipe()
    except OSError:
        out.failed = True
        out.on_broken_pipe()


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
    """--inspect's line under the summary: why drafts were rejected, in aggregate, in the
    chat inspector's words."""
    n, ties, errors, median = verdicts.summarize(e for e in events if isinstance(e, Round))
    if not n:
        return "inspect: no rejected draft token"
    return f"inspect: {rejection_kinds(n, ties, errors)}, median p of rejected tokens {median:.3f}"


def cut_off(end: TurnEnd, setup) -> str:
    """Why the answer ended before the model finished it ("" if it did)."""
    return {
        StopReason.N_PREDICT: f"-n/--n-predict {setup.n_predict} tokens reached",
        StopReason.CONTEXT_FULL: f"the context of {setup.ctx_size} tokens (-c) is full",
        StopReason.CANCELLED: "stopped (Ctrl+C)",
    }.get(end.stop_reason, "")
