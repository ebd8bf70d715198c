"""Round details (f11): one row per round of the last answer, and the highlighted round in
words under the table, where its rejected draft and auto's note read whole at any width."""

from __future__ import annotations

from spectui.engine.events import Round
from spectui.engine.overlay import MARKS
from spectui.words import plural

# The columns of fixed width first, so that 80 columns show them all; the rejected text and
# auto's note follow (→ scrolls to them; the detail line says them whole).
COLUMNS = ("#", "drafted by", "drafted", "accepted", "draft ms", "verify ms", "tokens", "rejected", "note")
REJECTED_CHARS = 24  # a longer rejected draft is cut in its cell


def cells(r: Round) -> tuple:
    rejected = r.rejected_text.translate(MARKS)  # newlines as the overlay marks them
    if len(rejected) > REJECTED_CHARS:
        rejected = rejected[: REJECTED_CHARS - 1] + "…"
    return (
        r.index + 1,
        r.spec_type or "-",
        r.n_drafted,
        r.n_accepted,
        f"{1000 * r.t_draft:.1f}",
        f"{1000 * r.t_verify:.1f}",
        len(r.tokens),
        rejected,
        r.note,
    )


def detail(r: Round) -> str:
    """The round in a sentence or two: what drafted and what became of it, the rejected draft
    whole, and why (auto's note)."""
    if r.n_drafted:
        what = f"{r.spec_type} drafted {plural(r.n_drafted, 'token')}, {r.n_accepted} accepted"
    else:
        what = "nothing drafted"
    if r.rejected:
        what += f", {len(r.rejected)} rejected: {r.rejected_text.translate(MARKS)!r}"
    emitted = plural(len(r.tokens), "token")
    return f"round {r.index + 1}: {what}; {emitted} emitted" + (f"\n{r.note}" if r.note else "")
