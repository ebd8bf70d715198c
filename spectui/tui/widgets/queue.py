"""The outbox: messages typed while an answer streams (or the models load), shown above
the box until the chat sends them, oldest first, when it is free."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class Outbox(Static):
    DEFAULT_CSS = """
    Outbox {
        height: auto;
        max-height: 5;
        padding: 0 1;
        margin: 0 0 0 8;
        color: $text-muted;
        border-left: dashed $primary 60%;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        display: none;
    }
    """

    def show(self, texts: tuple[str, ...], until: str) -> None:
        """`until`: what they wait for ("the measurement ends"), in the chat's words."""
        self.display = bool(texts)
        lines = [Content.assemble(("queued ", "$accent"), " ".join(t.split())) for t in texts]
        lines.append(Content.styled(f"sent when {until} · ↑ takes the last one back", "italic"))
        self.update(Content("\n").join(lines))
