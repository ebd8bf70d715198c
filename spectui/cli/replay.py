"""`spectui replay FILE`: play a recorded trace in the chat UI (or the A/B view), step
through it, or export it to SVG, HTML or an asciinema cast. No model is loaded, unless
the trace lacks its token text and -m names the model to rebuild it from the ids."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from spectui.cli.progress import ConsoleReport
from spectui.cli.streams import has_terminal
from spectui.engine.events import Round
from spectui.errors import UserError
from spectui.words import plural


def add_parser(sub) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a recorded trace (spectui run --trace, the chat, A/B, bench)",
        description="Replay a trace with the overlay and the stats panel, or export it.",
    )
    p.add_argument("trace", metavar="FILE", help="a trace (.jsonl) written by spectui")
    p.add_argument("--speed", type=float, default=1.0, help="playback speed, 0.25 to 10 (default 1: as recorded)")
    p.add_argument("--paused", action="store_true", help="start paused: step with → (or .), play with space")
    p.add_argument("--no-rejected", action="store_true", help="hide rejected draft tokens")
    p.add_argument("--export", metavar="OUT", help="write OUT.svg, OUT.html or OUT.cast (asciinema) instead of playing")
    p.add_argument(
        "-m",
        "--model",
        help="the recorded target (GGUF file or embedded name), only to rebuild "
        "token text a trace lacks from its ids; only its vocabulary is loaded",
    )
    p.set_defaults(func=main)


def with_text(trace, model: str | None):
    """The trace with its token text, rebuilt from the ids with the model's vocabulary
    when it is missing; never loads a model otherwise."""
    from spectui.trace.token_text import fill_text, missing_text

    if not missing_text(trace):
        return trace
    recorded = trace.header["environment"].get("models", {}).get("target", {})
    if model is None:
        raise UserError(
            f"this trace has token ids without their text; give -m with the recorded target "
            f"({recorded.get('file', 'its GGUF file')}) to rebuild the text from the ids"
        )
    from spectui.config.embedded import resolve_model
    from spectui.llama.detokenizer import Detokenizer
    from spectui.llama.model import Model

    vocab = Model(resolve_model(model, ConsoleReport(Console(stderr=True))), vocab_only=True)
    bad = next(  # the ids the text is rebuilt from; llama.cpp aborts on one out of range
        (
            i
            for turn in trace.turns
            for e in turn.events
            if isinstance(e, Round)
            for i in (*e.rejected, *(t.id for t in e.tokens))
            if not 0 <= i < vocab.n_vocab
        ),
        None,
    )
    if bad is not None:
        raise UserError(
            f"{model} has {vocab.n_vocab} tokens (ids 0 to {vocab.n_vocab - 1}) but the trace uses id {bad}: "
            f"not the recorded model ({recorded.get('file', '?')}), or a damaged trace"
        )
    fill_text(trace, lambda: Detokenizer(vocab))
    return trace


def main(args) -> int:
    from spectui.config.paths import writable
    from spectui.trace import format as trace_format
    from spectui.trace.timeline import check_speed

    check_speed(args.speed)
    out = writable(args.export, "--export") if args.export else None
    trace = trace_format.read(Path(args.trace).expanduser())
    if not trace.turns:
        raise UserError(f"{args.trace} holds no turn: nothing to replay")
    if out is None and not has_terminal():  # the screen would wait for keys that never come
        raise UserError("the replay needs a terminal (stdin and stdout); without one, use --export OUT.html")
    trace = with_text(trace, args.model)  # may load the model's vocabulary
    if out is not None:
        from spectui.cli.export import export

        path = export(trace, out, show_rejected=not args.no_rejected)
        Console(stderr=True, soft_wrap=True).print(
            f"exported {plural(len(trace.turns), 'turn')} to {path}", highlight=False
        )
        return 0
    from spectui.tui.replay_app import ReplayApp

    return ReplayApp(trace, args.speed, playing=not args.paused, show_rejected=not args.no_rejected).run_reporting()
