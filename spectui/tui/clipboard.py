"""Copying text out of the terminal, and saying how it went.

Textual copies by OSC 52, an escape sequence the terminal may honour or drop, and tmux drops
it unless `set-clipboard on`; no answer comes back. So the desktop's own clipboard tool is
used where there is one, tmux's paste buffer as well inside tmux, and the notice says which
of them got the text rather than claiming a copy nobody can see.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping

from spectui.words import plural

# (tool, arguments, the display variable it needs) in the order tried
TOOLS = (
    ("wl-copy", (), "WAYLAND_DISPLAY"),
    ("xclip", ("-selection", "clipboard"), "DISPLAY"),
    ("xsel", ("--clipboard", "--input"), "DISPLAY"),
    ("pbcopy", (), None),
    ("clip.exe", (), None),
)
TIMEOUT_S = 2.0


def _run(argv: list[str], text: str) -> bool:
    try:
        done = subprocess.run(argv, input=text.encode("utf-8"), capture_output=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def copy_elsewhere(text: str, env: Mapping[str, str] = os.environ) -> tuple[str | None, bool]:
    """Copy `text` with the desktop's clipboard tool (its name, or None where none works) and,
    inside tmux, into tmux's paste buffer (True when that worked)."""
    tool = None
    for name, args, display in TOOLS:
        if (display is None or env.get(display)) and shutil.which(name) and _run([name, *args], text):
            tool = name
            break
    in_tmux = bool(env.get("TMUX")) and shutil.which("tmux") is not None and _run(["tmux", "load-buffer", "-"], text)
    return tool, in_tmux


def copy_notice(what: str, n_chars: int, tool: str | None, tmux_buffer: bool, in_tmux: bool) -> str:
    """What a copy did, in words: where the text went and, where that is only OSC 52, what
    may stop it."""
    head = f"{what} ({plural(n_chars, 'character')})"
    if tool is not None:
        return f"Copied {head} to the clipboard ({tool})."
    if in_tmux:
        buffer = " It is in tmux's paste buffer (prefix ])." if tmux_buffer else ""
        return (
            f"Sent {head} to the terminal by OSC 52, which tmux drops unless its option "
            f"`set -g set-clipboard on` is set.{buffer}"
        )
    return f"Sent {head} to the terminal by OSC 52: most terminals copy it, some ignore it."


def copy_and_say(text: str, what: str, osc52: Callable[[str], None]) -> str:
    """Send `text` by OSC 52 (`osc52`: the app's own copy) and every other way there is here;
    what happened, in words."""
    osc52(text)
    tool, tmux_buffer = copy_elsewhere(text)
    return copy_notice(what, len(text), tool, tmux_buffer, "TMUX" in os.environ)
