"""SIGTERM, SIGHUP and SIGINT end the chat as ctrl+c twice does, and as quickly: the answer
stops, the chat is saved, and the terminal is given back (alternate screen and mouse
reporting off). The app runs in a real pseudo-terminal; a FakeSession (a recorded answer)
stands in for the model."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from spectui.store import chat_store

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import sys
from tests.tui_helpers import slow_app

app = slow_app()
app.controller.state.session.round_s = 0.5  # the answer's rest takes 4 s: the signal must not wait for it
ready = sys.argv[1]

def check():
    turn = app.controller.conversation.turn
    if turn is not None and len(turn.rounds) >= 4:
        with open(ready, "w") as f:
            f.write(app.controller.state.chat.id)

app.call_later(app.controller.conversation.submit, "Count")
app.call_later(app.set_interval, 0.05, check)
sys.exit(app.run())
"""


def read_until_exit(fd: int, pid: int, timeout: float) -> tuple[bytes, int]:
    """Everything the app wrote to its terminal, and its wait status."""
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed its side
                chunk = b""
            if not chunk:
                break
            out += chunk
    _, status = os.waitpid(pid, 0)
    return out, status


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_saves_the_chat_and_restores_the_terminal(dirs, sig):
    ready = dirs / "ready"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SPECTUI_DATA_DIR": str(dirs / "data"),
        "SPECTUI_CONFIG_DIR": str(dirs / "config"),
        "TERM": "xterm-256color",
        "COLUMNS": "100",
        "LINES": "30",
    }
    pid, fd = pty.fork()
    if pid == 0:  # the child: the chat app in the pseudo-terminal
        os.chdir(ROOT)
        os.execve(sys.executable, [sys.executable, "-c", CHILD, str(ready)], env)
    try:
        out = b""
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.1)[0]:
                out += os.read(fd, 65536)  # keep the terminal drained, or the app blocks writing
        assert ready.exists(), out[-2000:]
        os.kill(pid, sig)
        sent = time.monotonic()
        rest, status = read_until_exit(fd, pid, timeout=30)
        took = time.monotonic() - sent
    finally:
        os.close(fd)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert took < 2.0, f"{took:.1f} s to exit"  # under Python's own handler SIGINT let the answer run on
    tail = (out + rest)[-4000:]
    assert b"\x1b[?1049l" in tail and b"\x1b[?1000l" in tail  # left the alternate screen, mouse off
    answer = chat_store.load_chat(ready.read_text()).messages[-1]
    assert answer.role == "assistant" and answer.stopped and answer.content  # stopped and saved
