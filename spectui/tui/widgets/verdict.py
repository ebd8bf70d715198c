"""The A/B verdict block under the two sides (engine/ab.py judges; this renders)."""

from __future__ import annotations

from statistics import median

from textual.content import Content

from spectui.engine.ab import Verdict
from spectui.engine.stats import TurnSummary


def _acceptance(summary: TurnSummary, baseline: bool) -> str:
    if baseline:
        return "- (the baseline)"
    if not summary.n_drafted:
        return "- (nothing drafted)"
    return f"{summary.acceptance_rate:.0%} ({summary.n_accepted}/{summary.n_drafted})"


def _speed(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f} tok/s"


def render_verdict(v: Verdict, labels: list[str], live: bool = True) -> Content:
    """The verdict block under the two sides; `live`: the A/B view's, where enter runs the
    pair again (a replay's cannot)."""
    a, b = v.summaries
    named = [
        f"{side} {label}" + (" (the baseline)" if v.is_baseline(i) else "")
        for i, (side, label) in enumerate(zip("AB", labels))
    ]
    head = Content.assemble(("Verdict", "bold $accent"), (f"  {named[1]} vs {named[0]}", "$text-muted"))
    runs = v.speedups or ((v.speedup,) if v.speedup is not None else ())
    if v.drafted_nothing:  # plain decoding under another name: no speedup to claim
        ratio, caveat = "-", f" {' and '.join(v.drafted_nothing)} drafted nothing"
    elif not runs:
        ratio, caveat = "-", ""
    elif len(runs) == 1:  # the machine's own noise is unmeasured
        again = " (enter runs the pair again)" if live else ""
        ratio, caveat = f"×{runs[0]:.2f}", f" from 1 run each: noise unknown{again}"
    else:
        lo, hi = min(runs), max(runs)
        spread = f" (×{lo:.2f}-×{hi:.2f} over {len(runs)} runs each, interleaved)"
        ratio, caveat = ("no measurable difference", spread) if lo <= 1 <= hi else (f"×{median(runs):.2f}", spread)
    speed = Content.assemble(
        ("speedup of B over A ", "$text-muted"),
        (ratio, "bold"),
        (caveat, "$warning" if v.drafted_nothing else "$text-muted"),
        f"  (B {_speed(b.timing.tok_per_s)}, A {_speed(a.timing.tok_per_s)})",
    )
    accepted = Content.assemble(
        ("acceptance ", "$text-muted"), f"A {_acceptance(a, v.is_baseline(0))} · B {_acceptance(b, v.is_baseline(1))}"
    )
    # under sampling neither outcome is news: only greedy verification promises identical text
    if v.divergence is None:
        same = "bold $success" if v.greedy else "bold"
        output = Content.assemble(("output ", "$text-muted"), ("identical", same), f" ({a.n_generated} tokens)")
    else:
        output = Content.assemble(
            ("output ", "$text-muted"), ("differs", "bold $warning" if v.greedy else "bold"), f" {v.divergence.words()}"
        )
    notes = [Content.styled(f"· {note}", "$text-muted") for note in v.notes]
    return Content("\n").join([head, speed, accepted, output, *notes])
