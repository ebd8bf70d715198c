"""Overlay segments as Textual Content, coloured by the theme's `$spec-*` variables.

Styles name theme variables rather than colours, so a theme switch recolours every
message without rebuilding it.
"""

from __future__ import annotations

from textual.content import Content
from textual.selection import Selection

from spectui.engine.overlay import LEGEND, REJECTED, shown_rejected

STYLES = {
    "draft": "$spec-draft",
    "ngram": "$spec-ngram",
    "target": "$spec-target",
    "resampled": "$spec-resampled underline",
    REJECTED: "$spec-rejected dim strike",
}


def visible(segments, show_rejected: bool) -> list[tuple[str, str]]:
    """What the overlay shows: the answer's own text as it is, each rejected draft flattened
    (shown_rejected), and one that would start a line shown at the end of the line before,
    or, at the answer's start, at the end of its first line (so far), so it never shifts a
    line's start (indentation, a list number, a fence's frame) nor takes a line of its own."""
    out: list[tuple[str, str]] = []
    lead: list[tuple[str, str]] = []  # rejected before any of the answer's text: its first line's end
    for text, kind in segments:
        if kind != REJECTED:
            if lead and "\n" in text:
                i = text.index("\n")
                out += [(text[:i], kind)] if i else []
                out, lead, text = out + lead, [], text[i:]
            out.append((text, kind))
        elif show_rejected and text:
            mark = (shown_rejected(text), REJECTED)
            if not out:
                lead.append(mark)
            elif out[-1][1] != REJECTED and out[-1][0].endswith("\n"):
                before, was = out.pop()
                out += [(before[:-1], was), mark, ("\n", was)] if before[:-1] else [mark, ("\n", was)]
            else:
                out, lead = out + lead + [mark], []
    return out + lead


def shown_content(shown: list[tuple[str, str]]) -> Content:
    """Pieces `visible` gave, coloured by kind."""
    return Content.assemble(*((text, STYLES[kind]) for text, kind in shown))


def legend_lines() -> list[Content]:
    """One line per kind: a sample in the kind's style, then what it means; then the marks a
    rejected draft is shown with, and the colour of Markdown's own marks: every colour the
    overlay shows."""
    lines = [Content.assemble(("tok", STYLES[kind]), f" {label}") for kind, label in LEGEND.items()]
    lines.append(Content.assemble(("↵ ✗⁹", STYLES[REJECTED]), " newline, 9 chars rejected"))
    lines.append(Content.assemble(("```", STYLES[REJECTED]), " rejected Markdown, as text"))
    lines.append(Content.assemble(("# • ╭─", "$text-muted"), " Markdown marks"))
    return lines


def slice_segments(segments, start: int, end: int | None = None) -> list[tuple[str, str]]:
    """The segments covering characters [start, end) of their concatenated text."""
    out, pos = [], 0
    for text, kind in segments:
        lo, hi = max(start - pos, 0), len(text) if end is None else min(end - pos, len(text))
        if lo < hi:
            out.append((text[lo:hi], kind))
        pos += len(text)
        if end is not None and pos >= end:
            break
    return out


def split_point(segments, limit: int) -> int | None:
    """Where to cut segments of `limit` characters or more so the first piece stays near
    `limit`: at the answer's last newline before it (if that keeps at least half), else
    at its first newline after it. Newlines of rejected text do not count (they may be
    hidden). The newline itself is dropped: the boundary between widgets breaks the line."""
    if sum(len(t) for t, _ in segments) < limit:
        return None
    newlines, pos = [], 0
    for text, kind in segments:
        i = text.find("\n") if kind != REJECTED else -1
        while i >= 0:
            newlines.append(pos + i)
            i = text.find("\n", i + 1)
        pos += len(text)
    before = [p for p in newlines if limit // 2 <= p < limit]
    after = [p for p in newlines if p >= limit]
    return before[-1] if before else (after[0] if after else None)


def selected_answer(segments, show_rejected: bool, selection: Selection) -> str:
    """The selected part of the displayed text, without rejected tokens: copying a
    selection must never put rejected draft text on the clipboard."""
    shown = visible(segments, show_rejected)
    text = "".join(t for t, _ in shown)
    keep = [kind != REJECTED for t, kind in shown for _ in t]
    lines = text.split("\n")

    def index(offset, default: int) -> int:
        if offset is None:
            return default
        y = min(offset.y, len(lines) - 1)
        return sum(len(line) + 1 for line in lines[:y]) + min(offset.x, len(lines[y]))

    start, end = index(selection.start, 0), index(selection.end, len(text))
    return "".join(c for c, k in zip(text[start:end], keep[start:end]) if k)
