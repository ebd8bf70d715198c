"""Text boxes run their own key bindings as each key reaches them.

Textual runs a focused widget's bindings only once the key has bubbled up to the app, by
when the widget has taken the keys typed after it: a burst of keys (a fast typist, a slow
SSH link) put a newline, a backspace or a cursor move after the letters that followed it.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget


async def run_own_binding(widget: Widget, event: events.Key) -> bool:
    """Run `widget`'s own binding for the key now; True (the key consumed) when one ran."""
    for binding in widget._bindings.key_to_bindings.get(event.key, ()):
        if not binding.priority and await widget.app.run_action(binding.action, widget):
            event.stop()
            event.prevent_default()
            return True
    return False
