"""Soak: many turns in one chat in the real app (headless, Pilot); checks the saved chat
through the database after every turn and prints time per turn and RSS.

    python benchmarks/soak_chat.py --turns 200
    python benchmarks/soak_chat.py --turns 200 --replay tests/data/smollm2_turn.jsonl
    python benchmarks/soak_chat.py --turns 200 --new-chat 20

On SmolLM2 the model's time grows with the prompt (each token attends to all of it) until
the chat outgrows three quarters of -c, from where the prompt keeps its latest half to three
quarters (engine/chat_window.py). --replay answers every turn with a trace's first turn (the
tests' FakeSession, one round per `--round-ms`), so model time is constant and what is
measured is the app's own cost: storing, the transcript, the panel. With --new-chat N the
app starts a fresh chat (ctrl+n) every N turns. Exits 1 when an answer was not saved, or
with --replay when the issue's limits are missed: time per turn at the last turn over 1.2x
that at turn 20, or RSS growing 10 MiB or more from turn 50 to the last.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # --replay uses the tests' FakeSession

from spectui.config.resolve import resolve  # noqa: E402
from spectui.engine.events import TurnStart  # noqa: E402
from spectui.engine.resources import process_rss  # noqa: E402
from spectui.store import chat_store  # noqa: E402
from spectui.tui import app as app_module  # noqa: E402
from spectui.tui.app import SpecApp  # noqa: E402
from spectui.tui.widgets.chat_input import ChatInput  # noqa: E402
from spectui.tui.widgets.transcript import Transcript  # noqa: E402

PROMPTS = ("Say one number.", "Name a colour.", "Say hi.", "Name a fruit.")
CHECKS = (20, 50, 100, 200)  # turns printed (and the last one)
WINDOW = 10  # time per turn at turn N: the median of turns N-9..N (one turn is noisy)
TIME_LIMIT, RSS_LIMIT_MIB = 1.2, 10.0


def open_session(args, setup):
    if args.replay:
        from tests.fake_session import FakeSession, load_recording

        return FakeSession(load_recording(Path(args.replay)), spec=setup.spec, round_s=args.round_ms / 1000)
    from spectui.launch.opening import open_session as open_model

    return open_model(setup)


def check_saved(app: SpecApp, turn: int) -> None:
    """The chat as stored: every message, the last answer as shown."""
    chat = app.controller.chat
    stored = chat_store.load_chat(chat.id, last=1)
    expected = chat.earlier + len(chat.messages)
    if stored.earlier + len(stored.messages) != expected or stored.messages[-1].content != chat.messages[-1].content:
        raise SystemExit(f"turn {turn}: the saved chat differs from the one shown (expected {expected} messages)")


async def soak(args) -> int:
    setup = resolve("smollm2", {"n_predict": args.n, "temp": 0.0, "ctx_size": args.c})
    session = open_session(args, setup)
    app = SpecApp(setup, session=session)
    mib = lambda: process_rss() / 2**20  # noqa: E731
    print(f"{'replayed ' + args.replay if args.replay else 'SmolLM2'}: RSS {mib():.0f} MiB at start", flush=True)
    per_turn: list[float] = []
    rss: dict[int, float] = {}
    checks = {t for t in CHECKS if t <= args.turns} | {args.turns}
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.controller
        for turn in range(1, args.turns + 1):
            if args.new_chat and turn > 1 and (turn - 1) % args.new_chat == 0:
                await pilot.press("ctrl+n")
                await pilot.pause()
            app.query_one(ChatInput).insert(PROMPTS[turn % len(PROMPTS)])
            t0 = time.perf_counter()
            await pilot.press("enter")
            while chat.turn is None or chat.generating or chat.turn.message not in chat.chat.messages:
                await pilot.pause(0.005)
            await pilot.pause()  # the answer's last redraw
            per_turn.append(time.perf_counter() - t0)
            if args.replay:
                session.prompts.clear()  # the fake keeps every prompt for tests: not the app's memory
            check_saved(app, turn)
            if turn in checks:
                gc.collect()
                rss[turn] = mib()
                start = next(e for e in chat.turn.events if isinstance(e, TurnStart))
                widgets = len(app.query_one(Transcript).query("UserMessage, AssistantMessage"))
                print(
                    f"turn {turn:4d}: {1000 * statistics.median(per_turn[-WINDOW:]):7.1f} ms/turn  "
                    f"RSS {rss[turn]:6.1f} MiB  messages {chat.chat.earlier + len(chat.chat.messages):4d}  "
                    f"widgets {widgets:3d}  prompt {start.n_prompt:5d} tok ({start.n_prompt_decoded} decoded)  "
                    f"stop {chat.turn.end.stop_reason.value if chat.turn.end else '?'}",
                    flush=True,
                )
    session.close()
    print(f"every one of {args.turns} answers was saved (checked through {chat_store.db_path().name})")
    if args.turns < 50:
        return 0
    last = args.turns
    ratio = statistics.median(per_turn[last - WINDOW : last]) / statistics.median(per_turn[20 - WINDOW : 20])
    growth = rss[last] - rss[50]
    print(f"time per turn at turn {last} / at turn 20: {ratio:.2f}x (limit {TIME_LIMIT}x)")
    print(f"RSS growth from turn 50 to {last}: {growth:+.1f} MiB (limit {RSS_LIMIT_MIB:.0f} MiB)")
    return int(bool(args.replay) and (ratio > TIME_LIMIT or growth >= RSS_LIMIT_MIB))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=200)
    p.add_argument("--replay", metavar="TRACE", help="answer every turn with this trace's first turn (no model)")
    p.add_argument("--round-ms", type=float, default=5.0, help="with --replay: milliseconds per round")
    p.add_argument("--new-chat", type=int, default=0, help="start a fresh chat every N turns (0: one chat)")
    p.add_argument("-n", type=int, default=12, help="tokens per answer (the model's)")
    p.add_argument("-c", type=int, default=8192, help="context size (the model's)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        os.environ["SPECTUI_DATA_DIR"] = os.environ["SPECTUI_CONFIG_DIR"] = d
        app_module.memory_text = lambda: "soak"  # the panel's memory probe: not what is measured
        code = asyncio.run(soak(args))
        chat_store.close()
    raise SystemExit(code)


if __name__ == "__main__":
    main()
