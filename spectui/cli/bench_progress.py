"""The bench's progress on stderr: a bar redrawn in place on a terminal; in a log (where a bar
is noise and carriage returns garble the file), one whole line per finished run and at least
one a minute, each with the time elapsed and an estimate of what is left. The same decision
as the model's loading line (cli/loading.py): Rich's console.is_terminal."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from spectui.bench import protocol, results
from spectui.engine.events import Event, Round, TurnEnd, TurnStart

EVERY_S = 60.0  # a log hears from a long run at least this often


class Shown:
    """What the runs' events advance: `tokens` in all (each run's -n), `runs` in all."""

    def __init__(self, console: Console, tokens: int, runs: int):
        self.console, self.tokens, self.runs = console, tokens, runs
        self.what, self.n = "", 0

    def on_event(self, what: str, ev: Event, n: int) -> None:
        """`what`: the run's configuration and prompt; `n`: the tokens each run generates."""
        if isinstance(ev, TurnStart):
            self.what, self.n = what, n
            self.started()
        elif isinstance(ev, Round):
            self.advance(len(ev.tokens))
        elif isinstance(ev, TurnEnd):
            self.advance(max(0, n - ev.n_generated))  # a run that stopped early counts its -n
            self.finished()

    def started(self) -> None: ...

    def advance(self, n: int) -> None: ...

    def finished(self) -> None: ...


class Bar(Shown):
    def __init__(self, console: Console, tokens: int, runs: int, progress: Progress):
        super().__init__(console, tokens, runs)
        self.progress = progress
        self.task = progress.add_task("bench", total=tokens)

    def started(self) -> None:
        self.progress.update(self.task, description=self.what)

    def advance(self, n: int) -> None:
        self.progress.advance(self.task, n)


class Lines(Shown):
    def __init__(self, console: Console, tokens: int, runs: int):
        super().__init__(console, tokens, runs)
        self.t0 = self.said = self.run_t0 = time.monotonic()
        self.done = self.run_done = self.runs_done = 0

    def started(self) -> None:
        self.run_t0, self.run_done = time.monotonic(), 0

    def advance(self, n: int) -> None:
        self.done += n
        self.run_done += n
        if time.monotonic() - self.said >= EVERY_S:
            self.say(f"{self.run_done}/{self.n} tokens so far")

    def finished(self) -> None:
        self.runs_done += 1
        self.say(f"done in {time.monotonic() - self.run_t0:.0f} s")

    def say(self, how: str) -> None:
        self.said = time.monotonic()
        elapsed = self.said - self.t0
        left = f"about {_clock(elapsed / self.done * (self.tokens - self.done))} left" if self.done else "left unknown"
        self.console.print(
            f"[{self.runs_done}/{self.runs}] {self.what}: {how}; {_clock(elapsed)} elapsed, {left}",
            highlight=False,
            markup=False,
        )


def _clock(seconds: float) -> str:
    return str(timedelta(seconds=round(seconds)))  # H:MM:SS, as the bar's


@contextmanager
def shown(console: Console, tokens: int, runs: int) -> Iterator[Shown]:
    if not console.is_terminal:
        yield Lines(console, tokens, runs)
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("tokens"))
    timing = (TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, *timing, console=console) as progress:
        yield Bar(progress.console, tokens, runs, progress)


def report_pass(
    console: Console, configs: list[protocol.Config], index: int, repeat: int, done: dict[str, list[protocol.Run]]
) -> None:
    """After each pass, one line per configuration with its tok/s so far, above the progress
    bar (only tok/s, so the group sizes given to aggregate do not matter)."""
    for cfg in configs:
        runs = done[cfg.label]
        rows = results.aggregate(runs, [cfg], {r.prompt.group: 0 for r in runs}, 0)
        speeds = ", ".join(f"{r['group']} {r['tok_per_s']:.1f} tok/s" for r in rows if r["tok_per_s"] is not None)
        console.print(f"pass {index + 1}/{repeat}: {cfg.label}: {speeds}", highlight=False)
