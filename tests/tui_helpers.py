"""Plain helpers for the Pilot tests of the chat app (the fixtures are in conftest.py):
the prompts, `sync` for async tests, the chat command's arguments and their Setup, an app
whose answer runs long enough to stop (`slow_app`), typing and sending, waiting for the app
(`until`, `answered`), starting an A/B run, a saved chat.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import time

from textual import events
from textual.command import CommandList, CommandPalette
from textual.widgets import Input

from spectui.cli.chat import add_parser
from spectui.cli.setup_flags import overrides_from
from spectui.config.resolve import resolve
from spectui.config.setup import Setup
from spectui.engine.overlay import REJECTED
from spectui.store import chat_store, chat_types
from spectui.tui.app import SpecApp
from spectui.tui.screens.ab import ABScreen
from spectui.tui.widgets.chat_input import ChatInput
from tests import model_guard
from tests.fake_session import FakeSession

LONG = "Count from 1 to 100, separated by commas."
SHORT = "Write a python function that adds two numbers."
REJECTED_TEXT = "ZZREJECTEDZZ"


def sync(test):
    """Run an async test in its own event loop (no async pytest plugin needed)."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return run


def chat_args(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    return parser.parse_args(["chat", "--preset", "smollm2", "--temp", "0", *flags])


def resolved(args: argparse.Namespace) -> Setup:
    return resolve(args.preset, overrides_from(args))


def slow_app() -> SpecApp:
    """The chat app on a fake that answers a round every 0.1 s, for 1000 tokens: an answer to stop."""
    setup = resolve("smollm2", {"n_predict": 1000})
    return SpecApp(setup, session=FakeSession(spec=setup.spec, round_s=0.1))


async def send(pilot, app: SpecApp, text: str) -> None:
    app.query_one(ChatInput).insert(text)
    await pilot.press("enter")


async def burst(pilot, *keys: str) -> None:
    """Send keys as a fast typist or a slow SSH link delivers them: all queued before the app
    takes the first (pilot.press waits for the app after each key)."""
    for key in keys:
        pilot.app.post_message(events.Key(key, key if len(key) == 1 else None))
    await pilot.pause()


async def until(pilot, condition, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert not model_guard.violations, model_guard.violations[0]  # a model load refused on a worker: say so now
        assert time.monotonic() < deadline, "timed out waiting for the app"
        await pilot.pause(0.02)


def palette_offers(app: SpecApp, command: str) -> bool:
    """The command palette is open with `command` highlighted: its search has found it."""
    screen = app.screen
    if not isinstance(screen, CommandPalette):
        return False
    options = screen.query_one(CommandList)
    return options.highlighted is not None and command in str(options.get_option_at_index(options.highlighted).prompt)


async def run_ab(pilot, screen: ABScreen, prompt: str) -> None:
    screen.query_one("#ab-prompt", Input).value = prompt
    await pilot.press("enter")
    assert screen.running or screen.panes[0].turn is not None  # started (a short run may be over already)


def rounds_so_far(app: SpecApp) -> int:
    """The rounds of the answer streaming now (or of the last one); 0 before the first."""
    turn = app.controller.conversation.turn
    return len(turn.rounds) if turn is not None else 0


async def answered(pilot, app: SpecApp) -> None:
    await until(pilot, lambda: app.controller.conversation.turn is not None and not app.controller.state.generating)


def fixed_chat() -> chat_types.Chat:
    """A saved chat whose overlay has every kind, including a rejected draft."""
    chat = chat_types.new_chat("smollm2")
    segments = [
        ("Sure", "draft"),
        (":\n", "target"),
        (REJECTED_TEXT, REJECTED),
        ("```python\n", "ngram"),
        ("print('hello')", "draft"),
        ("\n```\n", "resampled"),
        ("Done.", "target"),
    ]
    chat.messages = [
        chat_types.Message("user", "Write hello world in Python."),
        chat_types.Message(
            "assistant",
            "".join(t for t, k in segments if k != REJECTED),
            segments=segments,
            stats={"n_generated": 12, "acceptance_rate": 0.75, "tok_per_s": 42.0, "stop_reason": "eos"},
            config=chat_types.AnswerConfig(("draft-simple",), 3),
        ),
    ]
    chat_store.save_chat(chat)
    return chat
