"""The speculation overlay: a round as coloured text segments.

One place decides the order (accepted draft tokens, the rejected tail, then the target
token that replaced it) and the kinds; `spectui run` and the TUI only map kinds to
colours. Rejected text is display-only: it is never part of the answer.
"""

from __future__ import annotations

from spectui.engine.events import Round, Source

REJECTED = "rejected"
KINDS = (Source.DRAFT.value, Source.NGRAM.value, Source.TARGET.value, Source.RESAMPLED.value, REJECTED)

# Default rich styles for the terminal; themes override them in the TUI.
STYLES = {
    Source.DRAFT.value: "bold green",
    Source.NGRAM.value: "bold magenta",
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


COLLAPSE_CHARS = 16  # a longer rejected draft shows as ✗ and its length (f11 shows it whole)
MARKS = str.maketrans({"\n": "↵", "\t": "→"})
SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")  # a length never reads as the answer's digits


def shown_rejected(text: str) -> str:
    """A rejected draft as a short run inside its line: newlines and tabs as marks, never
    breaks, so it never moves the answer's own text."""
    return text.translate(MARKS) if len(text) <= COLLAPSE_CHARS else "✗" + str(len(text)).translate(SUPERSCRIPT)


def add_segments(into: list[tuple[str, str]], new) -> None:
    """Append (text, kind) pieces, merging adjacent pieces of the same kind (fewer spans)."""
    for text, kind in new:
        if not text:
            continue
        if into and into[-1][1] == kind:
            into[-1] = (into[-1][0] + text, kind)
        else:
            into.append((text, kind))


def segments(r: Round, show_rejected: bool = True) -> list[tuple[str, str]]:
    """(text, kind) pieces of one round in display order, adjacent kinds merged."""
    accepted, last = r.tokens[: r.n_accepted], r.tokens[r.n_accepted :]
    pieces = [(t.piece, t.source.value) for t in accepted]
    if show_rejected:
        pieces.append((r.rejected_text, REJECTED))
    pieces += [(t.piece, t.source.value) for t in last]
    out: list[tuple[str, str]] = []
    add_segments(out, pieces)
    return out
