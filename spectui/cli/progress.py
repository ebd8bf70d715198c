"""The embedded models' install and check reports drawn with Rich: a byte bar only on a
terminal (in a log or a pipe a bar is noise, as pip does), and the checks' verdicts in colour."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

VERDICTS = {"ok": "[green]ok[/]  ", "bad": "[red]bad[/] "}


class ConsoleReport:
    """`config.assembly.Report` on a Rich console."""

    def __init__(self, console: Console):
        self.console = console

    @property
    def is_terminal(self) -> bool:
        return self.console.is_terminal

    def line(self, text: str, verdict: str = "") -> None:
        # a failed check's line is read as it is: its hashes and sizes are not highlighted
        self.console.print(VERDICTS.get(verdict, "") + text, soft_wrap=True, highlight=verdict != "bad")

    @contextmanager
    def bar(self, name: str, total: int) -> Iterator[Callable[[int], object]]:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(bar_width=None),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            disable=not self.console.is_terminal,
        ) as progress:
            task = progress.add_task(name, total=total)
            yield lambda n: progress.advance(task, n)
