"""The A/B verdict block under the two sides (engine/ab.py judges; this renders)."""

from __future__ import annotations

from textual.content import Content

from spectui.engine.ab import Verdict, speed
from spectui.engine.stats import TurnSummary
from spectui.words import plural


def _acceptance(summary: TurnSummary, baseline: bool) -> str:
    if baseline:
        return "- (the baseline)"
    if not summary.n_drafted:
        return "- (nothing drafted)"
    return f"{summary.acceptance_rate:.0%} ({summary.n_accepted}/{summary.n_drafted})"


def render_verdict(v: Verdict, labels: list[str], live: bool = True) -> Content:
    """The verdict block under the two sides; `live`: the A/B view's, where enter runs the
    pair again (a replay's cannot)."""
    a, b = v.summaries
    named = [
        f"{side} {label}" + (" (the baseline)" if v.is_baseline(i) else "")
        for i, (side, label) in enumerate(zip("AB", labels))
    ]
    head = Content.assemble(("Verdict", "bold $accent"), (f"  {named[1]} vs {named[0]}", "$text-muted"))
    said = speed(v, "enter reruns" if live else "")
    speedup = [
        Content.assemble(
            ("speedup ", "$text-muted"), (said.ratio, "bold"), (said.how, "$warning" if said.warning else "$text-muted")
        )
    ]
    if said.this_run:
        speedup.append(Content.styled(said.this_run, "$text-muted"))
    accepted = Content.assemble(
        ("acceptance ", "$text-muted"), f"A {_acceptance(a, v.is_baseline(0))} · B {_acceptance(b, v.is_baseline(1))}"
    )
    # under sampling neither outcome is news: only greedy verification promises identical text
    if v.divergence is None:
        same = "bold $success" if v.greedy else "bold"
        output = Content.assemble(
            ("output ", "$text-muted"), ("identical", same), f" ({plural(a.n_generated, 'token')})"
        )
    else:
        output = Content.assemble(
            ("output ", "$text-muted"), ("differs", "bold $warning" if v.greedy else "bold"), f" {v.divergence.words()}"
        )
    notes = [Content.styled(f"· {note}", "$text-muted") for note in v.notes]
    return Content("\n").join([head, *speedup, accepted, output, *notes])
