"""Exports of a trace for sharing: SVG and HTML of the finished answers with the overlay
and a legend (Rich's console export), and an asciinema v2 cast that streams them at the
recorded pace. `show_rejected` False gives the text a reader wants, without the rejected
drafts."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console
from rich.text import Text

from spectui.cli.render import legend, round_text
from spectui.config.paths import write_atomic
from spectui.engine.ab import compare
from spectui.engine.events import Round, TurnEnd
from spectui.engine.stats import summarize
from spectui.errors import UserError
from spectui.trace.format import Trace, TraceTurn, machine_line
from spectui.trace.timeline import steps

WIDTH = 100  # columns of the exported page and of the cast's terminal
CAST_HEIGHT = 32
FORMATS = (".svg", ".html", ".cast")


def _console(file=None) -> Console:
    return Console(
        record=file is None,
        file=file or io.StringIO(),
        width=WIDTH,
        force_terminal=True,
        color_system="truecolor",
        highlight=False,
        soft_wrap=file is not None,
    )


def _title(trace: Trace) -> str:
    target = trace.header["environment"].get("models", {}).get("target", {}).get("name", "?")
    return f"spectui · {target}"


def _prompt(turn: TraceTurn) -> Text:
    side = f"{turn.side} · " if turn.side else ""
    return Text.assemble((f"▌ {side}{turn.config_label}\n", "bold"), ("▌ ", "bold blue"), turn.prompt, "\n")


def _tail(turn: TraceTurn) -> str:
    """Text the detokenizer flushed at the end (in TurnEnd only)."""
    shown = "".join(t.piece for e in turn.events if isinstance(e, Round) for t in e.tokens)
    text = turn.end.text
    return text[len(shown) :] if text.startswith(shown) else ""


def _summary(turn: TraceTurn) -> Text:
    s = summarize(turn.events)
    tok_s = "-" if s.timing.tok_per_s is None else f"{s.timing.tok_per_s:.1f}"
    rate = "-" if s.acceptance_rate is None else f"{s.acceptance_rate:.0%}"
    return Text(
        f"{turn.end.stop_reason.value} · {s.n_generated} tokens · {tok_s} tok/s · "
        f"accepted {s.n_accepted}/{s.n_drafted} ({rate})",
        style="dim",
    )


def _verdict(a: TraceTurn, b: TraceTurn) -> Text:
    v = compare(a.events, b.events)
    speed = "-" if v.speedup is None else f"×{v.speedup:.2f}"
    output = "identical output" if v.divergence is None else f"outputs differ from token {v.divergence.index}"
    return Text(f"verdict: B over A {speed} · {output}", style="bold")


def _page(trace: Trace, show_rejected: bool) -> Console:
    console = _console()
    console.print(Text(f"{_title(trace)} · {machine_line(trace.header)}", style="dim"))
    for i, turn in enumerate(trace.turns):
        console.print()
        console.print(_prompt(turn))
        answer = Text()
        for e in turn.events:
            if isinstance(e, Round):
                answer.append_text(round_text(e, show_rejected))
        answer.append(_tail(turn))
        console.print(answer)
        console.print(_summary(turn))
        if turn.side == "B" and i and trace.turns[i - 1].side == "A":
            console.print(_verdict(trace.turns[i - 1], turn))
    console.print()
    console.print(legend() if show_rejected else Text("rejected drafts hidden", style="dim"))
    return console


def _cast(trace: Trace, show_rejected: bool) -> str:
    """asciinema v2: a header line, then [seconds, "o", text] for each step of the replay."""

    def ansi(*texts: Text) -> str:
        buf = io.StringIO()
        console = _console(buf)
        for t in texts:
            console.print(t, end="")
        return buf.getvalue().replace("\r\n", "\n").replace("\n", "\r\n")

    lines = [
        json.dumps(
            {
                "version": 2,
                "width": WIDTH,
                "height": CAST_HEIGHT,
                "title": _title(trace),
                "env": {"TERM": "xterm-256color"},
            }
        )
    ]
    shown = [-1] * len(trace.turns)  # events of each turn written so far; -1: not started
    for step in steps(trace):
        turn = trace.turns[step.turn]
        out = []
        if shown[step.turn] < 0:
            shown[step.turn] = 0
            out.append(Text("\n") + _prompt(turn) + Text("\n"))
        for e in turn.events[shown[step.turn] : step.n_events]:
            if isinstance(e, Round):
                out.append(round_text(e, show_rejected))
            elif isinstance(e, TurnEnd):
                out += [Text(_tail(turn) + "\n"), _summary(turn), Text("\n")]
        shown[step.turn] = step.n_events
        if out:
            lines.append(json.dumps([round(step.at, 6), "o", ansi(*out)], ensure_ascii=False))
    return "\n".join(lines) + "\n"


def export(trace: Trace, path: Path, show_rejected: bool) -> Path:
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise UserError(f"cannot export to {path.name}: the file name must end in {', '.join(FORMATS)}")
    if suffix == ".cast":
        return write_atomic(path, _cast(trace, show_rejected))
    page = _page(trace, show_rejected)
    text = page.export_svg(title=_title(trace)) if suffix == ".svg" else page.export_html(inline_styles=True)
    return write_atomic(path, text)
