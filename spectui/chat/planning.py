"""Measuring this machine from the chat (f6): `spectui plan` for the loaded pair, run as its own
process in a worker thread while the chat holds its messages (a turn beside it would skew the
timings), then the cache it wrote read back as the chat reads it at a load.

A process of its own, not the chat's session: the plan loads the pair as the CLI does, under
the identity the chat reads (the same files, threads and offload), and the chat's state stays
untouched if it fails."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO

from spectui.config.setup import OPTIONS, Setup

TIMEOUT_S = 900  # a plan takes about a minute on a small CPU; past this, something is wrong
ERROR_CHARS = 300  # of the plan's last line, in the notice


def plan_argv(setup: Setup) -> tuple[str, ...]:
    """`spectui plan` with the setup's preset and every setting as its flag: the pair, threads,
    offload and sampling the chat runs (the plan's cache key and its calibration's)."""
    argv = [sys.executable, "-m", "spectui", "plan", "--preset", setup.preset]
    for name, option in OPTIONS.items():
        value = setup.value(name)
        if value is not None and name != "server":
            argv.append(option.argv(value))
    return tuple(argv)


class PlanRun:
    """One `spectui plan` process: a worker waits for it, and the chat stops it when it ends
    (the process would otherwise hold the quit for minutes: a worker thread is joined at exit)."""

    def __init__(self, argv: tuple[str, ...]):
        self.argv = argv
        self._process: subprocess.Popen | None = None
        self._stopped = False

    def wait(self, progress: Callable[[str], object] | None = None) -> str | None:
        """Run the plan (blocking: a worker's); None when it cached its measurement, else why
        not in one line (its own error line where it printed one). `progress` is told each
        line the plan writes on stderr (its steps, each with the time left), as it writes it."""
        try:  # a session of its own: a signal to the chat's terminal is the chat's to handle
            self._process = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                start_new_session=True,
            )  # fmt: skip
        except OSError as e:
            return f"`spectui plan` did not start: {e}"
        if self._stopped:
            self.stop()
        err: list[str] = []
        out: list[str] = []
        readers = [
            threading.Thread(target=_read, args=(self._process.stderr, err, progress), daemon=True),
            threading.Thread(target=_read, args=(self._process.stdout, out, None), daemon=True),
        ]
        for reader in readers:
            reader.start()
        try:
            self._process.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
            return f"`spectui plan` took more than {TIMEOUT_S // 60} minutes: stopped"
        finally:
            for reader in readers:
                reader.join()
        if self._process.returncode == 0:
            return None
        if self._stopped:
            return "`spectui plan` was stopped"
        lines = [line for line in err + out if line.strip()]
        said = next((line for line in lines if line.startswith("error:")), lines[-1] if lines else "")
        return f"`spectui plan` failed (exit {self._process.returncode}): {said[:ERROR_CHARS]}"

    def stop(self) -> None:
        """End the process, if it runs (the chat quits)."""
        self._stopped = True
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()


def _read(stream: IO[str] | None, into: list[str], progress: Callable[[str], object] | None) -> None:
    """One of the plan's pipes to its end, line by line (two pipes read by one thread could
    fill the other's buffer and stall the plan)."""
    for line in stream or ():
        into.append(line.rstrip("\n"))
        if progress is not None and line.strip():
            progress(line.strip())
