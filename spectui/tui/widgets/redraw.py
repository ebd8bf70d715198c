"""Redraw a Static without a layout pass when its height has not changed.

A layout pass reflows and repaints the whole screen (twice: once for the widget, once
for its parents' new size), which costs the CPU that llama.cpp's threads need while an
answer streams.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


def update_in_place(widget: Static, content: Content) -> None:
    width = widget.content_region.width
    same = width > 0 and content.get_height(widget.styles, width) == widget.content_region.height  # type: ignore[arg-type]  # as Textual's Widget does
    widget.update(content, layout=not same)
