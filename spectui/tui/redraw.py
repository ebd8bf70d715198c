"""Redraw a Static without a layout pass when its height has not changed.

A layout pass reflows and repaints the whole screen; while an answer streams most
updates only change the last line, so skipping it keeps the UI thread (and with it the
CPU that llama.cpp's threads need) mostly idle.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


def update_in_place(widget: Static, content: Content) -> None:
    width, height = widget.content_region.width, widget.content_region.height
    same = width > 0 and content.get_height(widget.styles, width) == height
    widget.update(content, layout=not same)
