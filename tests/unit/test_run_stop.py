"""`spectui run` stops its answer on SIGTERM, SIGHUP or Ctrl+C wherever the signal lands in the
loop that shows it: a tracer sends it at each of the loop's instructions in turn. A signal that
raised there could land outside the loop's try: the answer then ran on to its end on the llama
thread, which the exit waits for (a CI run's SIGHUP test timed out so)."""

from __future__ import annotations

import os
import signal
import sys

from spectui.cli import interrupt
from spectui.cli.run import generate_in_thread
from spectui.engine import llama_thread
from spectui.engine.events import TurnEnd
from tests.fake_session import FakeSession

CODE = generate_in_thread.__code__


def answer_signalled_at(k: int) -> tuple[list, list[int], bool]:
    """The events, the signals noted and whether one was sent (at the loop's k-th instruction)."""
    executed, sent = 0, False

    def tracer(frame, event, arg):
        nonlocal executed, sent
        if frame.f_code is not CODE:
            return None
        frame.f_trace_opcodes = True
        if event == "opcode":
            if executed == k:
                sent = True
                os.kill(os.getpid(), signal.SIGHUP)  # its handler runs here, at once
            executed += 1
        return tracer

    received: list[int] = []
    with interrupt.noted(received):
        sys.settrace(tracer)
        try:
            events = generate_in_thread(
                FakeSession(round_s=0), lambda ev: None, received, messages=[{"role": "user", "content": "hi"}]
            )
        finally:
            sys.settrace(None)
    return events, received, sent


def test_a_signal_at_any_instruction_of_the_loop_stops_the_answer():
    k = 0
    while True:
        events, received, sent = answer_signalled_at(k)
        assert isinstance(events[-1], TurnEnd)  # nothing raised: the answer's end was shown
        llama_thread.submit(lambda: None).result(timeout=5)  # and nothing of it runs on
        if not sent:
            break
        assert received == [signal.SIGHUP], k
        k += 1
    assert k > 100  # every instruction of the loop's turns
