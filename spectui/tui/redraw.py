"""Redraw a Static without a layout pass when its height has not changed.

A layout pass reflows and repaints the whole screen (twice: once for the widget, once
for its parents' new size); while an answer streams most updates only change the last
line, so skipping it keeps the UI thread (and with it the CPU that llama.cpp's threads
need) mostly idle. A streaming widget can also grow `step` lines at a time, so that a
layout pass happens every few lines rather than on each one.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


def update_in_place(widget: Static, content: Content, step: int = 1) -> None:
    width = widget.content_region.width
    if width <= 0:
        widget.update(content)
        return
    lines = content.get_height(widget.styles, width)
    height = -(-lines // step) * step
    if step > 1 and widget.styles.height is not None and widget.styles.height.cells == height:
        widget.update(content, layout=False)
    elif step > 1:
        widget.styles.height = height
        widget.update(content)
    else:
        widget.update(content, layout=lines != widget.content_region.height)
