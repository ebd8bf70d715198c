"""Soak: many chat turns in the real app (headless, Pilot) on SmolLM2; prints RSS as it goes.

    python benchmarks/soak_chat.py --turns 200 --every 20
    python benchmarks/soak_chat.py --turns 200 --every 20 --new-chat 20

One long chat grows by design (every message stays a widget, the KV cache fills); with
--new-chat N the app starts a fresh chat (ctrl+n) every N turns, so what still grows
across chats is a leak. Prints numbers; asserts nothing. Chats go to a temp data dir.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import tempfile
import time

from spectui.config.resolve import resolve
from spectui.engine.resources import process_rss
from spectui.launch.session import open_session
from spectui.tui import app as app_module
from spectui.tui.app import SpecApp
from spectui.tui.widgets.chat_input import ChatInput

PROMPTS = ("Say one number.", "Name a colour.", "Say hi.", "Name a fruit.")


async def soak(turns: int, every: int, new_chat: int, n_predict: int, ctx: int) -> None:
    setup = resolve("smollm2", {"n_predict": n_predict, "temp": 0.0, "ctx_size": ctx})
    session = open_session(setup)
    app = SpecApp(setup, session=session)
    mib = lambda: process_rss() / 2**20  # noqa: E731
    print(f"loaded: RSS {mib():.0f} MiB", flush=True)
    t0 = time.monotonic()
    async with app.run_test(size=(120, 40)) as pilot:
        chat = app.controller
        for turn in range(1, turns + 1):
            if new_chat and turn > 1 and (turn - 1) % new_chat == 0:
                await pilot.press("ctrl+n")
                await pilot.pause()
            app.query_one(ChatInput).insert(PROMPTS[turn % len(PROMPTS)])
            await pilot.press("enter")
            while chat.turn is None or chat.generating or chat.turn.message not in chat.chat.messages:
                await pilot.pause(0.02)
            if turn % every == 0:
                gc.collect()
                end = chat.turn.end
                print(
                    f"turn {turn:4d}: RSS {mib():6.0f} MiB  messages {len(chat.chat.messages):4d}  "
                    f"n_past {session.status().n_past:5d}  last stop {end.stop_reason.value:12s}  "
                    f"{time.monotonic() - t0:6.0f} s",
                    flush=True,
                )
    session.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=200)
    p.add_argument("--every", type=int, default=20, help="print RSS every N turns")
    p.add_argument("--new-chat", type=int, default=0, help="start a fresh chat every N turns (0: one chat)")
    p.add_argument("-n", type=int, default=12, help="tokens per answer")
    p.add_argument("-c", type=int, default=8192, help="context size")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        os.environ["SPECTUI_DATA_DIR"] = os.environ["SPECTUI_CONFIG_DIR"] = d
        app_module.memory_text = lambda: "soak"  # the panel's memory probe: not what is measured
        asyncio.run(soak(args.turns, args.every, args.new_chat, args.n, args.c))


if __name__ == "__main__":
    main()
