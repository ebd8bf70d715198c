"""Model loading as a command shows it on stderr: one line redrawn on a terminal, its steps in a log."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.text import Text


@contextmanager
def loading_line(console: Console) -> Iterator[Callable[[str], object]]:
    """The load's steps on one line redrawn in place on a terminal; in a log, each step once, without its tenths."""
    if not console.is_terminal:

        def step(s: str) -> None:
            if not s.endswith("%"):
                console.print(s, style="dim", highlight=False)

        yield step
        return
    with console.status("", spinner="dots") as line:
        yield lambda s: line.update(Text(s, style="dim"))


def warn_build(console: Console) -> None:
    """Before the first decode: a llama.cpp build known to crash on this CPU, and the cure."""
    from spectui.llama.build import crash_risk

    if why := crash_risk():
        console.print(Text.assemble(("warning: ", "yellow"), why), soft_wrap=True, highlight=False)
