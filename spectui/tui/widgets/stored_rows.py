"""The stats panel's rows for a reopened chat's last stored answer: its rounds are not
stored, its statistics are, so the panel shows those until this session answers."""

from __future__ import annotations

from textual.content import Content

from spectui.store.chat_types import Message
from spectui.tui.widgets.gauges import MUTED, num, pct, position_bar, row
from spectui.words import plural


def stored_lines(stored: Message | None, width: int, max_positions: int) -> list[Content]:
    """The stored answer's acceptance, per position and speed; "no answer yet" without one."""
    s = stored.stats if stored is not None else {}
    if not s:
        return [Content.styled(" no answer yet: ask something", MUTED)]
    per_position = s.get("per_position") or []
    return [
        Content.styled(f" the saved answer, {plural(s.get('n_generated', 0), 'token')}", MUTED),
        row("turn", f"{pct(s.get('acceptance_rate'))}  {s.get('n_accepted', 0)}/{s.get('n_drafted', 0)}"),
        row("mean acc. len", num(s.get("mean_acceptance_length"), ".2f")),
        *(position_bar(i, p, width) for i, p in enumerate(per_position[:max_positions])),
        row("tok/s turn", num(s.get("tok_per_s"))),
        Content.styled(" its rounds are not saved: f7, f11", MUTED),
        Content.styled(" show this session's answers", MUTED),
    ]
