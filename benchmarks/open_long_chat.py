"""How long a 20,000-message chat takes to show its last screen, against an empty chat.

    python benchmarks/open_long_chat.py [--messages 20000] [--runs 5]

Each run starts the headless app (Pilot, 120x40, the tests' FakeSession: no model) as
`spectui --resume` does, reading the stored chat, and stops the clock when its last answer
is mounted; empty and long alternate. Chats go to a temp data dir. Prints numbers; asserts
nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tests' FakeSession
for variable in ("SPECTUI_DATA_DIR", "SPECTUI_CONFIG_DIR"):
    os.environ[variable] = tempfile.mkdtemp(prefix="spectui-open-")

from spectui.config.resolve import resolve  # noqa: E402
from spectui.store import chat_store  # noqa: E402
from spectui.store.chat_store import SHOWN  # noqa: E402
from spectui.store.chat_types import Message, new_chat  # noqa: E402
from spectui.tui.app import SpecApp  # noqa: E402
from spectui.tui.widgets.transcript import Transcript  # noqa: E402
from tests.fake_session import FakeSession  # noqa: E402


def store(n: int) -> str:
    """A chat of n messages, ~350 characters an exchange; the last answer's text."""
    chat = new_chat()
    for i in range(n // 2):
        answer = f"answer {i} " * 30
        chat.messages += [Message("user", f"question {i} " * 8), Message("assistant", answer, [(answer, "draft")])]
    chat_store.save_chat(chat)
    return chat.messages[-1].content


async def show(setup, last: str | None) -> float:
    """Seconds from reading the chat to its last answer mounted (the empty chat: to the first screen)."""
    t0 = time.perf_counter()
    chat = chat_store.latest_chat(last=SHOWN) if last else None
    app = SpecApp(setup, session=FakeSession(spec=setup.spec), chat=chat)
    async with app.run_test(size=(120, 40)) as pilot:
        while last:
            answers = list(app.query_one(Transcript).query("AssistantMessage").results())
            if answers and answers[-1].message.content == last:
                break
            await pilot.pause(0.001)
        await pilot.pause()
        return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=20_000)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    last = store(args.messages)
    setup = resolve("smollm2", {})
    times: dict[str, list[float]] = {"empty chat": [], f"{args.messages:,} messages": []}
    for _ in range(args.runs):
        times["empty chat"].append(asyncio.run(show(setup, None)))
        times[f"{args.messages:,} messages"].append(asyncio.run(show(setup, last)))
    for name, got in times.items():
        print(f"{name:>16}: median {statistics.median(got):.2f} s ({', '.join(f'{t:.2f}' for t in got)})")


if __name__ == "__main__":
    main()
