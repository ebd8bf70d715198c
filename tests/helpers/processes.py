"""`spectui ARGS` as a user runs it, in a child process: where the process itself (signals,
exit codes, stdout's buffering) is what a test checks; tests/cli_helpers.py runs it in-process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def interruptible():
    """Let a child process take Ctrl+C even where the test runner was started with SIGINT
    ignored (a background job in a non-interactive shell passes that on)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def spectui(*args, stdin=None, timeout=180, env=None):
    """`env`: variables to set on top of ours (None: unset it)."""
    env = {k: v for k, v in {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}.items() if v is not None}
    return subprocess.run(
        [sys.executable, "-m", "spectui", *args], input=stdin, capture_output=True, text=True, timeout=timeout, env=env
    )
