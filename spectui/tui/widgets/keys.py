"""Text boxes run their own key bindings as each key reaches them.

Textual runs a focused widget's bindings only once the key has bubbled up to the app, by
when the widget has taken the keys typed after it: a burst of keys (a fast typist, a slow
SSH link) put a newline, a backspace or a cursor move after the letters that followed it.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget


async def run_own_binding(widget: Widget, event: events.Key) -> bool:
    """Run `widget`'s own binding for the key now, where it is the one Textual would run; True
    (the key consumed) when one ran."""
    active = widget.screen.active_bindings.get(event.key)
    if active is None or active.node is not widget or active.binding.priority or not active.enabled:
        return False
    if not await widget.app.run_action(active.binding.action, widget):
        return False
    event.stop()
    event.prevent_default()
    return True
