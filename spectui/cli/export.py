"""Exports of a trace for sharing: SVG of the finished answers with the overlay and a
legend (Rich's console export); a self-contained HTML page of the same, every token a
span whose hover tooltip says where it came from and, for an inspected run, what the
verifier saw; and an asciinema v2 cast that streams them at the recorded pace.
`show_rejected` False gives the text a reader wants, without the rejected drafts."""

from __future__ import annotations

import html
import io
import json
from pathlib import Path

from rich.console import Console
from rich.text import Text

from spectui.chat.inspector import rejection_kinds
from spectui.cli.render import legend, round_text
from spectui.config.model_choice import recorded_name
from spectui.config.paths import write_atomic
from spectui.engine import overlay, verdicts
from spectui.engine.ab import compare
from spectui.engine.events import Round, Token, TurnEnd
from spectui.engine.stats import summarize
from spectui.errors import UserError
from spectui.trace.format import Trace, TraceTurn, machine_line
from spectui.trace.timeline import steps
from spectui.words import plural

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
    """The target as the chat and the replay name it (the catalog title), not its general.name."""
    return f"spectui · {recorded_name(trace.header['environment'].get('models', {}).get('target')) or '?'}"


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
        f"{turn.end.stop_reason.value} · {plural(s.n_generated, 'token')} · {tok_s} tok/s · "
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
    if suffix == ".html":
        return write_atomic(path, _html(trace, show_rejected))
    return write_atomic(path, _page(trace, show_rejected).export_svg(title=_title(trace)))


# --- HTML: a span per token, its tooltip in its title ---------------------------------------

CSS = {  # overlay.STYLES for a page
    "draft": "color: #5fd75f; font-weight: bold",
    "ngram": "color: #d75fd7; font-weight: bold",
    "target": "",
    "resampled": "color: #d7d700; font-weight: bold; text-decoration: underline",
    overlay.REJECTED: "color: #d75f5f; opacity: 0.7; text-decoration: line-through",
}
PAGE_CSS = """body { background: #101010; color: #e4e4e4; margin: 2em; }
pre { font-family: ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; }
.dim { opacity: 0.6; } .b { font-weight: bold; } .blue { color: #5f87ff; font-weight: bold; }
[title]:hover { outline: 1px dotted #888; cursor: help; }"""


def _span(text: str, kind: str, tip: list[str]) -> str:
    return f'<span class="{kind}" title="{html.escape(chr(10).join(tip))}">{html.escape(text)}</span>'


def _token_tip(r: Round, t: Token, i: int) -> list[str]:
    """A token's tooltip: its source, and at a drafted position what the verifier saw there."""
    where = f" ({r.spec_type})" if r.spec_type and i < r.n_accepted else ""
    tip = [f"{overlay.LEGEND[t.source.value]}{where}"]
    v = next((v for v in r.verdicts if v.position == i), None)
    if v is not None and v.accepted:
        tip += verdicts.facts(v, r.verify)
    elif i == r.n_accepted and r.rejected:  # (with --no-rejected, the only place the rejection shows)
        tip.append(f"emitted instead of the rejected draft token {r.n_accepted + 1} of {r.n_drafted}")
        if v is not None:
            tip += [f"the draft had {v.text!r}"] + verdicts.facts(v, r.verify, t.piece)
    return tip


def _round_html(r: Round, show_rejected: bool) -> str:
    """overlay.segments, token by token: the accepted drafts, the rejected tail, the target's own."""
    out = [_span(t.piece, t.source.value, _token_tip(r, t, i)) for i, t in enumerate(r.tokens[: r.n_accepted])]
    if show_rejected and r.rejected_text:
        tip = [f"rejected draft ({r.spec_type}): {plural(len(r.rejected), 'token')} from position {r.n_accepted + 1}"]
        v = next((v for v in r.verdicts if not v.accepted), None)
        if v is not None:
            emitted = r.tokens[r.n_accepted].piece if len(r.tokens) > r.n_accepted else None
            tip += [f"first rejected token {v.text!r}"] + verdicts.facts(v, r.verify, emitted)
        out.append(_span(overlay.shown_rejected(r.rejected_text), overlay.REJECTED, tip))
    out += [
        _span(t.piece, t.source.value, _token_tip(r, t, r.n_accepted + j))
        for j, t in enumerate(r.tokens[r.n_accepted :])
    ]
    return "".join(out)


def _html(trace: Trace, show_rejected: bool) -> str:
    """The page: no script, no stylesheet or font from elsewhere; tooltips are title attributes."""
    kinds = [k for k in overlay.KINDS if show_rejected or k != overlay.REJECTED]
    css = "\n".join([PAGE_CSS] + [f".{k} {{ {CSS[k]} }}" for k in kinds if CSS[k]])
    body = [f'<span class="dim">{html.escape(f"{_title(trace)} · {machine_line(trace.header)}")}</span>\n']
    for i, turn in enumerate(trace.turns):
        side = f"{turn.side} · " if turn.side else ""
        body.append(f'\n<span class="b">▌ {html.escape(side + turn.config_label)}</span>\n')
        body.append(f'<span class="blue">▌ </span>{html.escape(turn.prompt)}\n\n')
        body += [_round_html(e, show_rejected) for e in turn.events if isinstance(e, Round)]
        body.append(html.escape(_tail(turn)) + "\n")
        body.append(f'<span class="dim">{html.escape(_summary(turn).plain)}</span>\n')
        inspected = [e for e in turn.events if isinstance(e, Round) and e.verdicts]
        if inspected:
            n, ties, errors, median = verdicts.summarize(inspected)
            why = f"{rejection_kinds(n, ties, errors, brief=True)}, median p {median:.3f}" if n else "none rejected"
            body.append(f'<span class="dim">inspected: {html.escape(why)}</span>\n')
        if turn.side == "B" and i and trace.turns[i - 1].side == "A":
            body.append(f'<span class="b">{html.escape(_verdict(trace.turns[i - 1], turn).plain)}</span>\n')
    legend = "  ".join(f'<span class="{k}">{html.escape(overlay.LEGEND[k])}</span>' for k in kinds)
    hidden = "" if show_rejected else '  <span class="dim">rejected drafts hidden</span>'
    inspected_any = any(e.verdicts for t in trace.turns for e in t.events if isinstance(e, Round))
    hover = "hover a token for where it came from" + (", its p and q, and the target's choices" * inspected_any)
    body.append(f'\nlegend: {legend}{hidden}\n<span class="dim">{hover}</span>\n')
    head = f'<meta charset="utf-8">\n<title>{html.escape(_title(trace))}</title>\n<style>\n{css}\n</style>'
    page = "".join(body)
    return f'<!DOCTYPE html>\n<html lang="en">\n<head>\n{head}\n</head>\n<body><pre>{page}</pre></body>\n</html>\n'
