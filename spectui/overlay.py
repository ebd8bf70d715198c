"""The speculation overlay: a round as coloured text segments.

One place decides the order (accepted draft tokens, the rejected tail, then the target
token that replaced it) and the kinds; `spectui run` and the TUI only map kinds to
colours. Rejected text is display-only: it is never part of the answer.
"""

from __future__ import annotations

from spectui.events import Round, Source

REJECTED = "rejected"
KINDS = (Source.DRAFT.value, Source.NGRAM.value, Source.TARGET.value, Source.RESAMPLED.value, REJECTED)

# Default rich styles for the terminal; themes override them in the TUI.
STYLES = {
    Source.DRAFT.value: "bold green",
    Source.NGRAM.value: "bold cyan",
    Source.TARGET.value: "",
    Source.RESAMPLED.value: "bold yellow underline",
    REJECTED: "dim red strike",
}
LEGEND = {
    Source.DRAFT.value: "accepted (draft model)",
    Source.NGRAM.value: "accepted (n-gram)",
    Source.TARGET.value: "target / bonus",
    Source.RESAMPLED.value: "resampled (rejection sampling)",
    REJECTED: "rejected draft",
}


def segments(r: Round, show_rejected: bool = True) -> list[tuple[str, str]]:
    """(text, kind) pieces of one round in display order, adjacent kinds merged."""
    out: list[tuple[str, str]] = []

    def add(text: str, kind: str) -> None:
        if not text:
            return
        if out and out[-1][1] == kind:
            out[-1] = (out[-1][0] + text, kind)
        else:
            out.append((text, kind))

    accepted, last = r.tokens[: r.n_accepted], r.tokens[r.n_accepted:]
    for t in accepted:
        add(t.piece, t.source.value)
    if show_rejected:
        add(r.rejected_text, REJECTED)
    for t in last:
        add(t.piece, t.source.value)
    return out
