"""Waiting on what a child process prints: a test that signals a child acts once the child has
said it reached the moment under test, never after a fixed time (a faster machine is past it
by then, a slower one not there yet)."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from typing import IO

UPPER_BOUND_S = 120  # only a child that hangs or never says it reaches this: the test fails


def read_until(proc: subprocess.Popen, pipe: IO, found: Callable[[str], bool], what: str) -> str:
    """What `proc` wrote to `pipe` up to the moment `found(all of it so far)` holds, read as it
    comes (not a line at a time: an answer's tokens end no line). Past UPPER_BOUND_S, or at the
    pipe's end, the child is killed and the test fails naming `what`. The rest stays in the
    pipe for `communicate`."""
    killer = threading.Timer(UPPER_BOUND_S, proc.kill)
    killer.start()
    said = b""
    try:
        while chunk := os.read(pipe.fileno(), 65536):
            said += chunk
            if found(said.decode(errors="replace")):
                return said.decode(errors="replace")
    finally:
        killer.cancel()
    proc.kill()
    raise AssertionError(f"{what} never came (exit {proc.wait()}); it wrote: {said.decode(errors='replace')[-2000:]}")
