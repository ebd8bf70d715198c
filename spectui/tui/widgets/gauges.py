"""The panels' small drawings, from a turn's rounds: number cells, bars, the acceptance
sparkline and the rolling tok/s (the chat's panel and the A/B sides share them)."""

from __future__ import annotations

from textual.content import Content

from spectui.engine import stats
from spectui.engine.events import Event, PromptDone, Round

WINDOW = 32  # rounds in the rolling acceptance and tok/s
SPARK = "▁▂▃▄▅▆▇█"
MUTED = "$text-muted"


def pct(x: float | None) -> str:
    return "  -" if x is None else f"{x:4.0%}"


def num(x: float | None, fmt: str = ".1f", unit: str = "") -> str:
    return "-" if x is None else f"{x:{fmt}}{unit}"


def bar(fraction: float, width: int, style: str = "$primary") -> Content:
    """A horizontal bar: `fraction` of `width` cells filled (eighths for the edge)."""
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = round(fraction * width * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + ("▏▎▍▌▋▊▉"[part - 1] if part else "")
    return Content.assemble((filled, style), ("░" * (width - len(filled)), MUTED))


def sparkline(rounds: list[Round], width: int) -> list[Content]:
    """Per-round acceptance over the last `width` rounds, and a line of ▲ under the rounds
    where the configuration changed (omitted when none did in the window)."""
    if not rounds:
        return []
    start = max(0, len(rounds) - width)
    cells = []
    for r in rounds[start:]:
        if r.n_drafted:
            rate = r.n_accepted / r.n_drafted
            cells.append((SPARK[min(int(rate * len(SPARK)), len(SPARK) - 1)], "$spec-draft"))
        else:
            cells.append(("·", MUTED))
    lines = [Content.assemble(*cells)]
    marks = [i - start for i in stats.config_changes(rounds) if i >= start]
    if marks:
        row = [" "] * len(cells)
        for i in marks:
            row[i] = "▲"
        lines.append(Content.styled("".join(row).rstrip(), "$warning"))
    return lines


def rolling_tok_per_s(events: list[Event], n: int = WINDOW) -> float | None:
    """Tokens of the last n rounds over the time they took (from the round before them)."""
    rounds = stats.rounds_of(events)
    if not rounds:
        return None
    window = rounds[-n:]
    since: float | None
    if len(rounds) > n:
        since = rounds[-n - 1].t
    else:
        since = next((e.t for e in events if isinstance(e, PromptDone)), None)
    if since is None or window[-1].t <= since:
        return None
    return sum(len(r.tokens) for r in window) / (window[-1].t - since)


HEAD = "bold $accent"
LABEL = 15  # columns before a panel row's value


def row(label: str, value: Content | str) -> Content:
    """A panel row: a muted label, then its value."""
    return Content.assemble((f" {label:<{LABEL - 2}} ", MUTED), value)


def section(title: str) -> Content:
    return Content.styled(title, HEAD)


def position_bar(i: int, rate: float, width: int) -> Content:
    """Draft position i's acceptance as a bar across the panel's `width`."""
    return Content.assemble((f" #{i + 1:<3}", MUTED), bar(rate, width - 10, "$spec-draft"), f" {rate:4.0%}")
