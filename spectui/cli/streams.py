"""The process's own streams: whether they are a terminal, consoles that do not wrap in a
log, and a stdout that cannot be written (`> /dev/full`, a full disk)."""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO, TextIO, cast

from rich.console import Console

UNWRAPPED = 100_000  # a log's width: a line stays whole, so grep finds a name with its figure
PADDING = re.compile(r"[ \t]+(?=\n)")  # what Rich pads a table's lines with, up to the line's end


def has_terminal() -> bool:
    """Both stdin and stdout are a terminal; a closed one (`<&-`) is None."""
    return all(stream is not None and stream.isatty() for stream in (sys.stdin, sys.stdout))


def console(stderr: bool = False, **kwargs) -> Console:
    """A Rich console that wraps at the terminal's width, and not at all in a log or a pipe
    (unless $COLUMNS says a width): Rich's 80 columns would split a line (a path) in two;
    there, lines end at their text, without the spaces Rich pads a table's cells with."""
    made = Console(stderr=stderr, **kwargs)
    if not made.is_terminal:
        made.file = cast(TextIO, Trimmed(made.file))
        if "width" not in kwargs and not os.environ.get("COLUMNS", "").isdigit():
            made.width = UNWRAPPED
    return made


class Trimmed:
    """A stream whose lines lose their trailing spaces as they are written (a file, a pipe)."""

    def __init__(self, stream: IO[str]):
        self.stream = stream

    def __getattr__(self, name: str):
        return getattr(self.stream, name)

    def write(self, text: str) -> int:
        return self.stream.write(PADDING.sub("", text))


class Unwritable(Exception):
    """A command stops because stdout could not be written; main says so in one line, with
    this exception's text after the reason (where the command's trace still went)."""


class WatchedStdout:
    """sys.stdout as it is, remembering why a write or a flush failed (a closed pipe aside:
    Rich and `run` end quietly on one). Whoever writes may catch the error; the failure stays."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.failure = ""

    def __getattr__(self, name: str):
        return getattr(self.stream, name)

    def write(self, text: str) -> int:
        with self._watched():
            return self.stream.write(text)

    def flush(self) -> None:
        with self._watched():
            self.stream.flush()

    def failed(self) -> str:
        """Why stdout could not be written, its buffer flushed now ("" where it could)."""
        with suppress(OSError):
            self.flush()
        return self.failure

    @contextmanager
    def _watched(self) -> Iterator[None]:
        try:
            yield
        except BrokenPipeError:
            raise
        except OSError as e:
            self.failure = self.failure or e.strerror or str(e)
            raise


@contextmanager
def watched_stdout() -> Iterator[WatchedStdout]:
    """sys.stdout watched while a command runs, and flushed before it ends (a buffered write
    fails only then); after a failure, stdout goes to /dev/null so that exit's flush is quiet."""
    if sys.stdout is None:  # closed (`>&-`): nothing to watch
        yield WatchedStdout(io.StringIO())
        return
    watched = WatchedStdout(sys.stdout)
    sys.stdout = cast(TextIO, watched)
    try:
        yield watched
    finally:
        sys.stdout = watched.stream
        if watched.failed():
            silence_stdout()


def silence_stdout() -> None:
    """What is still written to stdout goes nowhere (its buffer included)."""
    with suppress(io.UnsupportedOperation):  # a stdout without a file (a test's) has no flush at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
