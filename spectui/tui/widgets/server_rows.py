"""The stats panel's rows for a llama-server's own counters: every slot's drafts (other
clients' too) since the chat connected, apart from the rows of this client's turn."""

from __future__ import annotations

from textual.content import Content

from spectui.engine.server_metrics import ServerWide
from spectui.tui.widgets.gauges import MUTED, pct, position_bar, row, section

TITLE = "Server, all slots"


def server_lines(wide: ServerWide, width: int, max_positions: int) -> list[Content]:
    """The server's acceptance, drafts and acceptance per position since connecting, how
    busy its slots were, and its notes (no --metrics, not speculating), muted."""
    lines = [section(TITLE).append(Content.styled(f"  -np {wide.n_slots}", MUTED))]
    c = wide.counters
    if c is not None and c.drafts:
        lines.append(row("accepted", f"{pct(c.acceptance)}  {c.accepted}/{c.drafted}"))
        lines.append(row("drafts", f"{c.drafts} · mean len {c.mean_accepted:.2f}"))
        lines += [position_bar(i, p, width) for i, p in enumerate(c.per_pos_rates[:max_positions])]
    elif c is not None:
        lines.append(Content.styled(" no drafts since connecting", MUTED))
    if c is not None:
        lines.append(row("busy slots", f"{c.busy_slots_per_decode:.2f} per decode"))
    lines += [Content.styled(f" {note}", MUTED) for note in wide.notes]
    return lines


def server_short(wide: ServerWide) -> Content | None:
    """The server's acceptance in a few cells for the one-line panel ("srv 58%"); a word
    where it does not speculate; None where it says nothing."""
    c = wide.counters
    if c is not None and c.drafts:
        return Content.assemble(("srv ", MUTED), pct(c.acceptance).strip())
    if wide.idle:
        return Content.styled("srv: not speculating", "$warning")
    return None
