"""Rich rendering of the overlay and the summary, shared by `spectui run` and the exports
of `spectui replay`: one place maps the overlay's kinds to terminal styles."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from spectui.engine import overlay
from spectui.engine.events import Round, TurnEnd
from spectui.words import plural


def round_text(r: Round, show_rejected: bool, styled: bool = True) -> Text:
    """One round's overlay; `styled` False gives the plain text (no colours)."""
    text = Text()
    for piece, kind in overlay.segments(r, show_rejected):
        shown = overlay.shown_rejected(piece) if kind == overlay.REJECTED else piece
        text.append(shown, style=overlay.STYLES[kind] if styled else "")
    return text


def legend() -> Text:
    text = Text("legend: ")
    for kind, label in overlay.LEGEND.items():
        text.append(label, style=overlay.STYLES[kind])  # as its tokens print: the target's plain
        text.append("  ")
    text.append("↵ ✗⁹", style=overlay.STYLES[overlay.REJECTED])
    text.append(" newline, 9 chars rejected")
    return text


def _fmt(v, spec: str = ".2f", suffix: str = "") -> str:
    return "-" if v is None else f"{v:{spec}}{suffix}"


def summary_table(s, spec_label: str, end: TurnEnd) -> Table:
    t = Table(title="speculation summary", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    tm = s.timing
    rows = [
        ("spec type", spec_label),
        ("stop reason", end.stop_reason.value + (f" ({end.error})" if end.error else "")),
        ("generated", f"{plural(s.n_generated, 'token')} in {plural(s.rounds, 'round')}"),
        ("accepted / drafted", f"{s.n_accepted} / {s.n_drafted}  ({_fmt(s.acceptance_rate, '.1%')})"),
        ("mean acceptance length", _fmt(s.mean_acceptance_length)),
        ("per-position acceptance", " ".join(f"{p:.0%}" for p in s.per_position) or "-"),
        ("tok/s (generation / e2e)", f"{_fmt(tm.tok_per_s, '.1f')} / {_fmt(tm.tok_per_s_e2e, '.1f')}"),
        ("time to first token", _fmt(tm.ttft_s, ".3f", " s")),
        (
            "inter-token latency p50 / p95",
            f"{_fmt(tm.itl_p50_s and tm.itl_p50_s * 1000, '.1f')} / "
            f"{_fmt(tm.itl_p95_s and tm.itl_p95_s * 1000, '.1f')} ms",
        ),
        ("draft / verify / other", f"{tm.t_draft_s:.2f} / {tm.t_verify_s:.2f} / {tm.t_other_s:.2f} s"),
        ("overhead per round", _fmt(tm.overhead_ms_per_round, ".2f", " ms outside llama.cpp")),
    ]
    for name, c in s.per_type.items():
        rows.append(
            (
                f"  {name}",
                f"#gen drafts {c.gen_drafts}  #acc drafts {c.acc_drafts}  "
                f"#gen tokens {c.gen_tokens}  #acc tokens {c.acc_tokens}  "
                f"dur(g,a) {c.t_draft_s * 1000:.0f}, {c.t_verify_s * 1000:.0f} ms",
            )
        )
    for r in rows:
        t.add_row(*r)
    return t
